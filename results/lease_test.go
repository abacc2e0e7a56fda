package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// snapshot is every row that belongs to run id, with floats printed
// exactly (%v of a float64 round-trips its bits), for byte-for-byte
// comparisons.
func snapshot(t *testing.T, s *Store, id string) string {
	t.Helper()
	var out string
	for _, q := range []string{
		"SELECT * FROM runs WHERE id = ?",
		"SELECT * FROM metrics WHERE run_id = ? ORDER BY name",
		"SELECT * FROM traces WHERE run_id = ? ORDER BY seq",
		"SELECT * FROM run_params WHERE run_id = ? ORDER BY name",
		"SELECT * FROM artifacts WHERE run_id = ? ORDER BY name",
		"SELECT * FROM claims WHERE run_id = ?",
	} {
		_, rows, err := s.Query(q, id)
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s\n%v\n", q, rows)
	}
	return out
}

// twoWorkers opens one database twice (as two processes would) and has
// worker A claim run id with a stale window short enough for B to take it
// over after it.
func twoWorkers(t *testing.T, id string) (a, b *Store, wa, wb Worker, la Lease) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.db")
	var err error
	if a, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if b, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	wa, wb = NewWorker("ha", 30*time.Millisecond), NewWorker("hb", time.Hour)
	res, la, err := a.Lease(sampleRun(id), wa, time.Now(), false)
	if err != nil || res != Leased {
		t.Fatalf("A's claim: %v, %v", res, err)
	}
	return a, b, wa, wb, la
}

// takeOver waits until A's claim is stale and has B claim the run.
func takeOver(t *testing.T, b *Store, wb Worker, id string) Lease {
	t.Helper()
	time.Sleep(60 * time.Millisecond)
	res, lb, err := b.Lease(sampleRun(id), wb, time.Now(), false)
	if err != nil || res != Leased {
		t.Fatalf("B's takeover of the stale claim: %v, %v", res, err)
	}
	return lb
}

// TestStolenLeaseWritesNothing: once worker B took A's stale claim over,
// every write A makes under its old lease (running, done with metrics,
// trace and artifacts, failed, interrupted — each of which would also
// release the claim) is refused with ErrLeaseLost and changes no row of
// the run, whether B is still running it or has finished it.
func TestStolenLeaseWritesNothing(t *testing.T) {
	arts := []Artifact{{Name: "curve", Columns: []string{"x", "y"}, Rows: 2, Data: []float64{1, 2, 3, 4}}}
	writes := []struct {
		status  string
		metrics []Metric
		trace   []TracePoint
		arts    []Artifact
	}{
		{StatusRunning, nil, sampleTrace(7), nil},
		{StatusDone, sampleMetrics(5), sampleTrace(1613), arts},
		{StatusFailed, nil, sampleTrace(40), nil},
		{StatusInterrupted, nil, sampleTrace(1613), nil},
	}
	for _, bDone := range []bool{false, true} {
		for _, w := range writes {
			t.Run(fmt.Sprintf("%s/B-finished=%v", w.status, bDone), func(t *testing.T) {
				const id = "r1"
				a, b, _, wb, la := twoWorkers(t, id)
				lb := takeOver(t, b, wb, id)
				if bDone {
					r := sampleRun(id)
					r.Host = "B"
					if err := b.SaveLeased(lb, r, sampleMetrics(14), sampleTrace(300), nil); err != nil {
						t.Fatal(err)
					}
				}
				before := snapshot(t, b, id)

				r := sampleRun(id)
				r.Host, r.Status = "A", w.status
				err := a.SaveLeased(la, r, w.metrics, w.trace, w.arts)
				var lost *LeaseLostError
				if !errors.Is(err, ErrLeaseLost) || !errors.As(err, &lost) {
					t.Fatalf("A's write after losing its claim: %v, want a LeaseLostError", err)
				}
				wantHolder := wb.ID
				if bDone {
					wantHolder = ""
				}
				if lost.Holder != wantHolder || lost.Lease != la {
					t.Errorf("error says holder %q lease %+v, want %q and %+v", lost.Holder, lost.Lease, wantHolder, la)
				}
				if after := snapshot(t, b, id); after != before {
					t.Errorf("A's refused write changed the run:\nbefore\n%s\nafter\n%s", before, after)
				}
			})
		}
	}
}

// TestLeasedWrite: the holder's own writes go through; a final status
// releases the claim, after which the lease is spent.
func TestLeasedWrite(t *testing.T) {
	s := openTemp(t)
	w := NewWorker("h", time.Hour)
	_, l, err := s.Lease(sampleRun("r"), w, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun("r")
	r.Status = StatusRunning
	if err := s.SaveLeased(l, r, nil, sampleTrace(3), nil); err != nil {
		t.Fatalf("running write under a held lease: %v", err)
	}
	if cs, _ := s.Leases(nil); len(cs) != 1 {
		t.Errorf("a running write released the claim: %v", cs)
	}
	r.Status = StatusDone
	if err := s.SaveLeased(l, r, sampleMetrics(3), sampleTrace(3), nil); err != nil {
		t.Fatalf("done write under a held lease: %v", err)
	}
	if cs, _ := s.Leases(nil); len(cs) != 0 {
		t.Errorf("claims after the done write: %v", cs)
	}
	if n := countRows(t, s, "metrics", "r"); n != 3 {
		t.Errorf("%d metrics stored, want 3", n)
	}
	if err := s.SaveLeased(l, r, nil, nil, nil); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a write under a released lease: %v, want ErrLeaseLost", err)
	}
	if err := s.SaveLeased(l, sampleRun("other"), nil, nil, nil); err == nil || errors.Is(err, ErrLeaseLost) {
		t.Errorf("a lease of run r used for another run: %v, want a usage error", err)
	}
}

// TestHeartbeatReportsLostLeases: a heartbeat refreshes the claims its
// worker still holds, reports the ones taken over or deleted, and leaves
// the new holder's claim alone.
func TestHeartbeatReportsLostLeases(t *testing.T) {
	a, b, wa, wb, l1 := twoWorkers(t, "r1")
	_, l2, err := a.Lease(sampleRun("r2"), wa, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	_, l3, err := a.Lease(sampleRun("r3"), wa, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	takeOver(t, b, wb, "r1")
	if _, err := b.DeleteRuns([]string{"r3"}); err != nil {
		t.Fatal(err)
	}
	bClaim := snapshot(t, b, "r1")
	before, _ := a.Leases([]string{"r2"})
	lost, err := a.Heartbeat(wa, []Lease{l1, l2, l3})
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 2 || lost[0] != l1 || lost[1] != l3 {
		t.Errorf("heartbeat reports %v lost, want r1 (taken over) and r3 (deleted)", lost)
	}
	if got := snapshot(t, b, "r1"); got != bClaim {
		t.Errorf("A's heartbeat touched B's claim:\n%s\nnow\n%s", bClaim, got)
	}
	after, _ := a.Leases([]string{"r2"})
	if !after["r2"].Heartbeat.After(before["r2"].Heartbeat) {
		t.Errorf("A's own claim was not refreshed: %v then %v", before["r2"].Heartbeat, after["r2"].Heartbeat)
	}
}

// TestLeaseTokensNeverRepeat: each claim gets a larger token, also after
// the claims rows are gone, and re-claiming a run fences off the earlier
// lease of the same worker.
func TestLeaseTokensNeverRepeat(t *testing.T) {
	s := openTemp(t)
	w := NewWorker("h", time.Hour)
	var last int64
	for i := range 3 {
		_, l, err := s.Lease(sampleRun("r"), w, time.Now(), true)
		if err != nil {
			t.Fatal(err)
		}
		if l.Token <= last {
			t.Errorf("claim %d got token %d after %d", i, l.Token, last)
		}
		last = l.Token
		if err := s.SaveLeased(l, sampleRun("r"), nil, nil, nil); err != nil { // done: releases the claim
			t.Fatal(err)
		}
	}
	_, old, _ := s.Lease(sampleRun("q"), w, time.Now(), false)
	_, cur, _ := s.Lease(sampleRun("q"), w, time.Now(), false)
	if err := s.SaveLeased(old, sampleRun("q"), nil, nil, nil); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("write under a lease the same worker claimed again: %v, want ErrLeaseLost", err)
	}
	if err := s.SaveLeased(cur, sampleRun("q"), nil, nil, nil); err != nil {
		t.Errorf("write under the current lease: %v", err)
	}
}

// TestLeaseCheckAndWriteAreOneTransaction suspends a leased write between
// its check of the claim and its write (as SIGSTOP could): a takeover by
// another worker cannot get in between, because the check holds the write
// lock; it fails busy, and once the write committed it finds the run
// finished.
func TestLeaseCheckAndWriteAreOneTransaction(t *testing.T) {
	a, b, _, wb, la := twoWorkers(t, "r1")
	path := b.Path()
	b.Close()
	b, err := OpenWith(path, Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	since := time.Now()
	time.Sleep(60 * time.Millisecond) // A's claim is stale from now on

	checked, resume := make(chan struct{}), make(chan struct{})
	testHookLeaseChecked = func() { close(checked); <-resume }
	defer func() { testHookLeaseChecked = nil }()
	saved := make(chan error, 1)
	go func() {
		r := sampleRun("r1")
		r.Finished = time.Now().UTC()
		saved <- a.SaveLeased(la, r, sampleMetrics(4), sampleTrace(10), nil)
	}()
	<-checked
	if res, _, err := b.Lease(sampleRun("r1"), wb, since, false); err == nil || !isBusy(err) {
		t.Errorf("takeover while A is between its check and its write: %v, %v; want database locked", res, err)
	}
	close(resume)
	if err := <-saved; err != nil {
		t.Fatalf("A's write: %v", err)
	}
	if res, _, err := b.Lease(sampleRun("r1"), wb, since, false); err != nil || res != Finished {
		t.Errorf("claim after A's write committed: %v, %v; want Finished", res, err)
	}
}
