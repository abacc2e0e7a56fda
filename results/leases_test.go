package results

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path) // a second connection pool, as another process has
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	since := time.Now()
	wa, wb := NewWorker("ha", time.Hour), NewWorker("hb", time.Hour)
	take := func(s *Store, w Worker, id string, since time.Time, force bool) LeaseResult {
		t.Helper()
		res, _, err := s.Lease(sampleRun(id), w, since, force)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := take(a, wa, "r1", since, false); got != Leased {
		t.Fatalf("first claim: %v", got)
	}
	if got := take(b, wb, "r1", since, false); got != HeldByOther {
		t.Errorf("claim of a live worker's run: %v, want HeldByOther", got)
	}
	if got := take(a, wa, "r1", since, false); got != Leased {
		t.Errorf("the holder re-claiming its own run: %v, want Leased", got)
	}
	// Finished during the sweep: nobody repeats it, whatever its status.
	r := sampleRun("r1")
	r.Status, r.Error, r.Finished = StatusFailed, "boom", time.Now().UTC()
	if err := a.SaveRun(r, nil, nil); err != nil {
		t.Fatal(err)
	}
	if cs, _ := a.Leases(nil); len(cs) != 0 {
		t.Errorf("claims after the run was recorded: %v", cs)
	}
	if got := take(b, wb, "r1", since, false); got != Finished {
		t.Errorf("claim of a run that failed during this sweep: %v, want Finished", got)
	}
	// A later sweep retries the failure.
	if got := take(b, wb, "r1", time.Now(), false); got != Leased {
		t.Errorf("a new sweep claiming a failed run: %v, want Leased", got)
	}
	// Done runs are skipped unless forced; forced ones once per sweep.
	r.Status, r.Error, r.Finished = StatusDone, "", time.Now().UTC()
	if err := b.SaveRun(r, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := take(a, wa, "r1", time.Now(), false); got != Finished {
		t.Errorf("claim of a done run: %v, want Finished", got)
	}
	if got := take(a, wa, "r1", time.Now(), true); got != Leased {
		t.Errorf("forced claim of a run done before the sweep: %v, want Leased", got)
	}
	// A dead worker's claim is taken over once stale, and reads as interrupted.
	dead := NewWorker("hdead", 50*time.Millisecond)
	if got := take(a, dead, "r2", since, false); got != Leased {
		t.Fatalf("claim r2: %v", got)
	}
	if st, _ := b.Statuses([]string{"r2"}); st["r2"] != StatusRunning {
		t.Errorf("fresh claim reads %q, want running", st["r2"])
	}
	time.Sleep(80 * time.Millisecond)
	if st, _ := b.Statuses([]string{"r2"}); st["r2"] != StatusInterrupted {
		t.Errorf("stale claim reads %q, want interrupted", st["r2"])
	}
	if got := take(b, wb, "r2", since, false); got != Leased {
		t.Errorf("takeover of a stale claim: %v, want Leased", got)
	}
	// Heartbeats keep claims alive.
	live := NewWorker("hlive", 100*time.Millisecond)
	_, l3, err := a.Lease(sampleRun("r3"), live, since, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		time.Sleep(40 * time.Millisecond)
		if lost, err := a.Heartbeat(live, []Lease{l3}); err != nil || len(lost) != 0 {
			t.Fatalf("heartbeat: lost %v, %v", lost, err)
		}
	}
	if got := take(b, wb, "r3", since, false); got != HeldByOther {
		t.Errorf("claim of a heartbeating worker's run after 160 ms: %v, want HeldByOther", got)
	}
	// Pruning a run drops its claim too.
	if _, err := a.DeleteRuns([]string{"r3"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := a.Leases([]string{"r3"}); err != nil || len(cs) != 0 {
		t.Errorf("claims of a deleted run: %v (%v)", cs, err)
	}
}

// TestLeaseRace: many goroutines on separate connection pools claim the
// same runs; each run is granted exactly once.
func TestLeaseRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	const workers, runs = 6, 30
	stores := make([]*Store, workers)
	for i := range stores {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	since := time.Now()
	granted := make([]int, runs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := NewWorker(fmt.Sprintf("h%d", i), time.Hour)
			for r := range runs {
				res, _, err := s.Lease(sampleRun(fmt.Sprintf("r%02d", r)), w, since, false)
				if err != nil {
					t.Error(err)
					return
				}
				if res == Leased {
					mu.Lock()
					granted[r]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for r, n := range granted {
		if n != 1 {
			t.Errorf("run %d granted %d times", r, n)
		}
	}
}

// TestReadVersion2: a version-2 database (before claims) is read without
// migration; its running runs have no claim and read as interrupted; opening
// it for writing migrates it.
func TestReadVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:2] {
		if _, err := raw.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`PRAGMA user_version = 2; INSERT INTO runs (id, method, dataset, split, seed, status) VALUES ('old', 'sgpr', 'x', 0, 0, 'running'), ('ok', 'sgpr', 'x', 1, 0, 'done')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("reading a version-2 database: %v", err)
	}
	st, err := ro.Statuses([]string{"old", "ok"})
	ro.Close()
	if err != nil || st["old"] != StatusInterrupted || st["ok"] != StatusDone {
		t.Errorf("statuses %v (%v), want old interrupted and ok done", st, err)
	}
	rw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, _, err := rw.Lease(sampleRun("new"), NewWorker("h", time.Hour), time.Now(), false); err != nil {
		t.Errorf("claim after migrating a version-2 database: %v", err)
	}
}

// BenchmarkMarkRunning and BenchmarkLease compare recording a run as
// running without and with a claim (the claim's cost per run).
func BenchmarkMarkRunning(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "r.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; b.Loop(); i++ {
		if err := s.MarkRunning(sampleRun(fmt.Sprintf("r%d", i%100))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLease(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "r.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := NewWorker("bench", time.Hour)
	since := time.Now()
	for i := 0; b.Loop(); i++ {
		if _, _, err := s.Lease(sampleRun(fmt.Sprintf("r%d", i%100)), w, since, false); err != nil {
			b.Fatal(err)
		}
	}
}
