package results

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const lockEnv = "SGPLAB_RESULTS_TEST_HOLD_LOCK"

// TestMain lets the test binary double as the "other process" that holds
// the database's write lock in TestLockedByAnotherProcess.
func TestMain(m *testing.M) {
	if path := os.Getenv(lockEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(m.Run())
}

// holdLock takes the write lock of path, says "locked" on stdout and keeps
// the lock until stdin is closed.
func holdLock(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	tx, err := s.db.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := tx.Exec("UPDATE runs SET host = 'holder'"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	tx.Rollback()
	return 0
}

func TestLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	s, err := OpenWith(path, Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SaveRun(sampleRun("before"), sampleMetrics(2), nil); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock holder said %q; stderr: %s", line, stderr.String())
	}

	start := time.Now()
	err = s.SaveRun(sampleRun("during"), nil, nil)
	waited := time.Since(start)
	if err == nil {
		t.Fatal("SaveRun succeeded while another process held the write lock")
	}
	for _, want := range []string{path, "locked by another", "300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	t.Logf("error after %v: %v", waited, err)
	if waited < 250*time.Millisecond {
		t.Errorf("gave up after %v, before the busy timeout", waited)
	}
	// WAL: readers are not blocked by the writer.
	if st, found, err := s.RunStatus("before"); err != nil || !found || st != StatusDone {
		t.Errorf("reading during the lock: %q %v %v", st, found, err)
	}

	// New connections can open and read while the lock is held.
	for _, open := range []func(string) (*Store, error){Open, OpenReadOnly} {
		o, err := open(path)
		if err != nil {
			t.Errorf("opening during the lock: %v", err)
			continue
		}
		if runs, err := o.Runs(Filter{}); err != nil || len(runs) != 1 {
			t.Errorf("Runs during the lock: %d runs, %v", len(runs), err)
		}
		o.Close()
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lock holder: %v; stderr: %s", err, stderr.String())
	}
	if err := s.SaveRun(sampleRun("after"), nil, nil); err != nil {
		t.Errorf("SaveRun after the lock was released: %v", err)
	}
}

func TestUnwritablePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"parent is a file", filepath.Join(file, "results.db"), "cannot create directory"},
		{"path is a directory", dir, "is a directory"},
		{"not a database", garbage, "not a database"},
		{"short non-database file", file, "not a database"},
		{"empty path", "", "empty database path"},
	}
	if os.Geteuid() != 0 { // root ignores permission bits
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, path, want string }{"read-only directory", filepath.Join(ro, "r.db"), "not writable"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(c.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("err = %q, want it to contain %q and the path", err, c.want)
			}
		})
	}
}

func TestCreatesParentDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "r.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestWriterAndReaders checks that readers on other connections never fail
// and never see half a run while one writer saves runs (WAL, one
// transaction per run).
func TestWriterAndReaders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal.db")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const runs, nMetrics, nTrace = 40, 12, 200
	var done atomic.Bool
	var wg sync.WaitGroup
	readErr := make(chan error, 4)
	for range 2 {
		r, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		wg.Go(func() {
			last := int64(-1)
			for !done.Load() {
				// One statement is one snapshot: every done run must be complete.
				_, rows, err := r.Query(`SELECT count(*),
					coalesce(sum((SELECT count(*) FROM metrics m WHERE m.run_id = r.id) = ?), 0),
					coalesce(sum((SELECT count(*) FROM traces x WHERE x.run_id = r.id) = ?), 0)
					FROM runs r`, nMetrics, nTrace)
				if err != nil {
					readErr <- err
					return
				}
				n, fullM, fullT := rows[0][0].(int64), rows[0][1].(int64), rows[0][2].(int64)
				if fullM != n || fullT != n {
					readErr <- fmt.Errorf("saw %d runs but only %d/%d complete", n, fullM, fullT)
					return
				}
				if n < last {
					readErr <- fmt.Errorf("run count went back from %d to %d", last, n)
					return
				}
				last = n
			}
		})
	}
	for i := range runs {
		if err := w.SaveRun(sampleRun(fmt.Sprintf("w%03d", i)), sampleMetrics(nMetrics), sampleTrace(nTrace)); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	close(readErr)
	for err := range readErr {
		t.Error(err)
	}
	st, err := w.Statuses([]string{"w000", fmt.Sprintf("w%03d", runs-1)})
	if err != nil || len(st) != 2 {
		t.Errorf("Statuses = %v, %v", st, err)
	}
}

// TestConcurrentSavers checks that goroutines sharing one Store serialise.
func TestConcurrentSavers(t *testing.T) {
	s := openTemp(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				if err := s.SaveRun(sampleRun(fmt.Sprintf("g%d-%d", g, i)), sampleMetrics(3), sampleTrace(20)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, rows, _ := s.Query("SELECT count(*), (SELECT count(*) FROM traces) FROM runs")
	if rows[0][0].(int64) != 40 || rows[0][1].(int64) != 800 {
		t.Errorf("counts = %v", rows[0])
	}
}

// TestAwkwardPaths checks that characters with a meaning in SQLite file:
// URIs are escaped rather than cutting the path short.
func TestAwkwardPaths(t *testing.T) {
	for _, name := range []string{"a?b.db", "c#d.db", "e%20f.db", "with space.db", "ünï.db"} {
		path := filepath.Join(t.TempDir(), name)
		s, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.SaveRun(sampleRun("r"), nil, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s.Close()
		ro, err := OpenReadOnly(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, found, err := ro.RunStatus("r"); !found || err != nil {
			t.Errorf("%s: run not found in the file (%v)", name, err)
		}
		ro.Close()
		entries, _ := os.ReadDir(filepath.Dir(path))
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), name) {
				t.Errorf("%s: stray file %q", name, e.Name())
			}
		}
	}
}
