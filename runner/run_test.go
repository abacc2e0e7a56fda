package runner

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sgplab/results"
)

const mixed = `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean", "fake-panic", "fake-fail"]
datasets = ["toy"]
splits = [0, 1]
iterations = 3
`

func newRunner(t *testing.T, path string) (*Runner, *results.Store) {
	t.Helper()
	st, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &Runner{Store: st, Prepare: fakePrepare, Env: Env{Host: "h", GitCommit: "c", GoVersion: "go", BLAS: "gonum"}, Out: &bytes.Buffer{}, Grace: time.Second}, st
}

func count(t *testing.T, st *results.Store, sql string) int64 {
	t.Helper()
	_, rows, err := st.Query(sql)
	if err != nil {
		t.Fatal(err)
	}
	return rows[0][0].(int64)
}

func TestRunRecordsFailuresAndResumes(t *testing.T) {
	runs, _, err := expand(t, mixed, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	sum, err := r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 || sum.Failed != 4 || sum.Skipped != 0 {
		t.Fatalf("summary %v", sum)
	}
	failed, _ := st.Runs(results.Filter{Status: results.StatusFailed})
	var panics int
	for _, f := range failed {
		if strings.Contains(f.Error, "panic: assignment to entry in nil map") {
			panics++
		} else if !strings.Contains(f.Error, "matrix not positive definite") {
			t.Errorf("unexpected error %q", f.Error)
		}
	}
	if panics != 2 {
		t.Errorf("%d panics recorded, want 2", panics)
	}
	// Metrics of a done run: the fake predicts the training mean of
	// y = i%5 + split with unit variance, so rmse = sqrt(2) exactly.
	_, rows, err := st.Query("SELECT value FROM run_metrics WHERE method='fake-mean' AND split=0 AND metric='rmse'")
	if err != nil || len(rows) != 1 {
		t.Fatalf("rmse rows %v, %v", rows, err)
	}
	if v := rows[0][0].(float64); v < 1.41421356 || v > 1.41421357 {
		t.Errorf("rmse = %v, want sqrt(2)", v)
	}
	for _, name := range []string{"elbo", "train_seconds", "iters_per_second", "predict_seconds", "jitter", "x_exact_lml", "nlpd", "coverage95"} {
		if n := count(t, st, "SELECT COUNT(*) FROM metrics WHERE name='"+name+"'"); n != 2 {
			t.Errorf("metric %s stored %d times, want 2", name, n)
		}
	}
	if n := count(t, st, "SELECT COUNT(*) FROM traces"); n != 6 {
		t.Errorf("%d trace rows, want 6", n)
	}
	// The load average is stored with every timed run where the OS gives it.
	if _, err := os.Stat("/proc/loadavg"); err == nil {
		if n := count(t, st, "SELECT COUNT(*) FROM metrics WHERE name='"+LoadAvgMetric+"' AND value >= 0"); n != 2 {
			t.Errorf("%s stored %d times, want 2", LoadAvgMetric, n)
		}
	}
	// So are the process CPU times of Fit + Predict and of Fit alone
	// (getrusage on unix).
	if !math.IsNaN(processCPUSeconds()) {
		for _, name := range []string{CPUSecondsMetric, TrainCPUMetric} {
			if n := count(t, st, "SELECT COUNT(*) FROM metrics WHERE name='"+name+"' AND value >= 0"); n != 2 {
				t.Errorf("%s stored %d times, want 2", name, n)
			}
		}
	}
	// Resume: done runs are skipped, failed ones run again, nothing duplicates.
	sum, err = r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 2 || sum.Failed != 4 {
		t.Errorf("resume summary %v", sum)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs"); n != 6 {
		t.Errorf("%d runs stored, want 6", n)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM traces"); n != 6 {
		t.Errorf("%d trace rows after resume, want 6", n)
	}
	r.Force = true
	sum, _ = r.Run(context.Background(), runs)
	if sum.Done != 2 || sum.Skipped != 0 {
		t.Errorf("--force summary %v", sum)
	}
}

func TestInterruptAndResume(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["fake-mean", "fake-block"]
datasets = ["toy"]
splits = [0, 1, 2]
iterations = 2
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	// Expansion order is split-major, method-minor: mean, block, mean, block, ...
	path := filepath.Join(t.TempDir(), "r.db")
	r, st := newRunner(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }() // SIGINT while the first blocking run is in flight
	sum, err := r.Run(ctx, runs)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if sum.Done != 1 || sum.Interrupted != 1 {
		t.Fatalf("summary %v", sum)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs WHERE status='interrupted'"); n != 1 {
		t.Errorf("%d interrupted runs recorded", n)
	}
	// Resume with a non-blocking grid: the finished run is kept and not redone.
	resumed := []*RunSpec{}
	for _, s := range runs {
		if s.Method == "fake-mean" {
			resumed = append(resumed, s)
		}
	}
	sum, err = r.Run(context.Background(), resumed)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 1 || sum.Done != 2 {
		t.Errorf("resume summary %v", sum)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs WHERE status='done'"); n != 3 {
		t.Errorf("%d done runs, want 3", n)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM traces t JOIN runs r ON r.id=t.run_id WHERE r.method='fake-mean'"); n != 6 {
		t.Errorf("%d trace rows, want 6 (no duplicates)", n)
	}
}

func TestTimeLimit(t *testing.T) {
	src := strings.Replace(mixed, `["fake-mean", "fake-panic", "fake-fail"]`, `["fake-block"]`, 1) + "time_limit = \"50ms\"\n"
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	go func() {
		for range runs {
			<-started
		}
	}()
	sum, err := r.Run(context.Background(), runs)
	if err != nil || sum.Failed != 2 {
		t.Fatalf("summary %v, err %v", sum, err)
	}
	failed, _ := st.Runs(results.Filter{Status: results.StatusFailed})
	for _, f := range failed {
		if f.Error != "time limit 50ms exceeded" {
			t.Errorf("error %q", f.Error)
		}
	}
}

func TestShardsMergedTwice(t *testing.T) {
	src := strings.Replace(mixed, `["fake-mean", "fake-panic", "fake-fail"]`, `["fake-mean"]`, 1) + "seeds = [0, 1, 2]\n"
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var parts []string
	for i := 0; i < 2; i++ {
		shard, _ := Shard(runs, i, 2)
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.db", i))
		r, st := newRunner(t, p)
		if _, err := r.Run(context.Background(), shard); err != nil {
			t.Fatal(err)
		}
		st.Close()
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "all.db")
	for k := 0; k < 2; k++ {
		if _, err := results.Merge(merged, parts...); err != nil {
			t.Fatal(err)
		}
	}
	st, err := results.OpenReadOnly(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := count(t, st, "SELECT COUNT(*) FROM runs"); n != int64(len(runs)) {
		t.Errorf("%d runs after merging twice, want %d", n, len(runs))
	}
	if n := count(t, st, "SELECT COUNT(*) FROM traces"); n != int64(3*len(runs)) {
		t.Errorf("%d trace rows, want %d", n, 3*len(runs))
	}
}

// TestStoreLockedByAnotherWriter holds the database's write lock on another
// connection (as another sgplab process would) while a sweep runs. The
// decision: the runner waits up to the store's busy timeout for the lock,
// then stops the sweep with an error that names the database, says it is
// locked and for how long it waited. Nothing is half-written, and once the
// lock is released the same sweep runs from scratch without duplicates.
func TestStoreLockedByAnotherWriter(t *testing.T) {
	runs, path, st, r, other := lockTestSetup(t, `["fake-mean"]`)
	tx, err := other.Begin() // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background(), runs)
	if err == nil {
		t.Fatal("the sweep succeeded while another connection held the write lock")
	}
	for _, want := range []string{path, "locked by another", "200ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if sum.Done != 0 || sum.Failed != 0 {
		t.Errorf("summary %v: no run can have been recorded", sum)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	sum, err = r.Run(context.Background(), runs)
	if err != nil || sum.Done != len(runs) || sum.Skipped != 0 {
		t.Fatalf("after the lock was released: summary %v, err %v", sum, err)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs"); n != int64(len(runs)) {
		t.Errorf("%d runs stored, want %d", n, len(runs))
	}
	if n := count(t, st, "SELECT COUNT(*) FROM traces"); n != int64(3*len(runs)) {
		t.Errorf("%d trace rows, want %d", n, 3*len(runs))
	}
}

// lockTestSetup expands the mixed grid with the given methods into a
// runner on a new database with a 200 ms busy timeout, plus a second
// connection whose transactions take the write lock at BEGIN.
func lockTestSetup(t *testing.T, methods string) ([]*RunSpec, string, *results.Store, *Runner, *sql.DB) {
	t.Helper()
	runs, _, err := expand(t, strings.Replace(mixed, `["fake-mean", "fake-panic", "fake-fail"]`, methods, 1), "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.db")
	st, err := results.OpenWith(path, results.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return runs, path, st, &Runner{Store: st, Prepare: fakePrepare, Out: &bytes.Buffer{}, Grace: time.Second}, other
}

// TestStoreLockedMidSweep takes the write lock after the first run has been
// recorded: the sweep stops with the lock error (not ErrInterrupted), the
// finished run is kept, the one in flight is not recorded as done, and no
// later run starts.
func TestStoreLockedMidSweep(t *testing.T) {
	runs, _, st, r, other := lockTestSetup(t, `["fake-mean", "fake-block"]`)
	// Order is mean, block, mean, block: take the lock while the first block
	// run is in flight, then cancel it; its interrupted record cannot be
	// written, and a store error takes precedence over the interruption.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	locked := make(chan *sql.Tx, 1)
	go func() {
		<-started
		tx, err := other.Begin()
		if err != nil {
			t.Error(err)
		}
		locked <- tx
		cancel()
	}()
	sum, err := r.Run(ctx, runs)
	tx := <-locked
	if tx != nil {
		tx.Rollback()
	}
	if err == nil || !strings.Contains(err.Error(), "locked by another") || errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want the lock error", err)
	}
	if sum.Done != 1 {
		t.Errorf("summary %v, want the first run done", sum)
	}
	st2, _ := st.Statuses([]string{runs[0].ID, runs[1].ID, runs[2].ID})
	if st2[runs[0].ID] != results.StatusDone || st2[runs[1].ID] == results.StatusDone || st2[runs[2].ID] != "" {
		t.Errorf("statuses %v: want first done, second not done, third absent", st2)
	}
}

func TestProgressPlainLines(t *testing.T) {
	runs, _, err := expand(t, base, "")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	var out bytes.Buffer
	r.Out = &out
	if _, err := r.Run(context.Background(), runs[:2]); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, "\r") || !strings.Contains(s, "[0/2] start") || !strings.Contains(s, "[2/2] done") {
		t.Errorf("plain progress output:\n%s", s)
	}
}

func BenchmarkExpand10k(b *testing.B) {
	// 10 splits × 10 seeds × 10 × 10 parameter values = 10,000 runs.
	src := `
name = "bench"
[[grid]]
name = "g"
methods = ["fake-mean"]
datasets = ["toy"]
splits = [0,1,2,3,4,5,6,7,8,9]
seeds = [0,1,2,3,4,5,6,7,8,9]
iterations = [1,2,3,4,5,6,7,8,9,10]
[grid.params]
num_inducing = [1,2,3,4,5,6,7,8,9,10]
`
	for b.Loop() {
		f, err := Parse("bench.toml", src)
		if err != nil {
			b.Fatal(err)
		}
		runs, _, err := f.Expand(ExpandOptions{ValidateDataset: fakeValidate})
		if err != nil || len(runs) != 10000 {
			b.Fatal(len(runs), err)
		}
	}
}

func BenchmarkRecordRun(b *testing.B) {
	f, _ := Parse("b.toml", base)
	runs, _, _ := f.Expand(ExpandOptions{})
	st, err := results.Open(filepath.Join(b.TempDir(), "r.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r := &Runner{Store: st, Prepare: fakePrepare, Force: true}
	pr := newProgress(&bytes.Buffer{}, false, runs[:1], 0, nil)
	w := results.NewWorker("bench", time.Minute)
	for b.Loop() {
		if _, _, err := r.one(context.Background(), runs[0], pr, w, time.Now(), &leaseSet{}); err != nil {
			b.Fatal(err)
		}
	}
}

type absentErr struct{ name string }

func (e absentErr) Error() string          { return "file " + e.name + "/data.csv not found; fetch it" }
func (e absentErr) MissingDataset() string { return e.name }

// Runs whose dataset files are absent fail with the loader's message, and
// the summary says which failures that explains, once per dataset.
func TestAbsentDataSummarised(t *testing.T) {
	runs, _, err := expand(t, mixed, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	r.Prepare = func(ctx context.Context, s *RunSpec) (*Dataset, error) {
		if s.Split == 1 {
			return nil, fmt.Errorf("loading: %w", absentErr{"toy"})
		}
		return fakePrepare(ctx, s)
	}
	sum, err := r.Run(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	// Split 0: fake-mean done, fake-panic and fake-fail failed; split 1:
	// all three failed for absent data.
	if sum.Done != 1 || sum.Failed != 5 || sum.AbsentRuns != 3 || len(sum.Absent) != 1 || !strings.Contains(sum.Absent["toy"], "fetch it") {
		t.Fatalf("summary %+v", sum)
	}
	if s := sum.String(); !strings.Contains(s, "3 of the failures: data files absent for toy") {
		t.Errorf("summary line %q does not name the absent dataset", s)
	}
	if n := count(t, st, "SELECT COUNT(*) FROM runs WHERE status = 'failed' AND error LIKE '%fetch it%'"); n != 3 {
		t.Errorf("%d failed runs carry the loader's message, want 3", n)
	}
}
