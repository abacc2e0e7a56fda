package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sgplab/results"
)

// MinHeartbeat is the shortest lease heartbeat a Runner accepts. Every
// heartbeat is a write transaction: far shorter intervals would keep the
// database's write lock busy with heartbeats alone.
const MinHeartbeat = time.Second

// StaleWindow is how long after a worker's last heartbeat other workers
// may take its leases over:
//
//	stale = 2 × busyTimeout + 4 × heartbeat
//
// A live worker's heartbeat can wait for this process's own write in
// progress, which may itself have waited up to busyTimeout for the
// database's lock, and then up to busyTimeout for the lock in turn; so while
// the worker can write at all, its heartbeats are at most heartbeat + 2 ×
// busyTimeout (plus one write) apart, and the three heartbeats more cover
// scheduling, GC pauses and clock differences between hosts. A busy-timeout
// wait therefore never makes a live lease look dead. With the defaults (10 s
// each) the window is 60 s.
func StaleWindow(heartbeat, busyTimeout time.Duration) time.Duration {
	return 2*busyTimeout + 4*heartbeat
}

// errLeaseLost is the cause with which a run's context is cancelled when a
// heartbeat finds that another worker took its lease over.
var errLeaseLost = errors.New("lease lost: another worker took this run's claim over")

// leaseSet is the leases of this worker's runs in flight, each with the
// function that stops its run.
type leaseSet struct {
	mu sync.Mutex
	m  map[string]heldLease
}

type heldLease struct {
	lease results.Lease
	stop  context.CancelCauseFunc
}

func (s *leaseSet) add(l results.Lease, stop context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]heldLease{}
	}
	s.m[l.RunID] = heldLease{l, stop}
}

func (s *leaseSet) remove(l results.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.m[l.RunID]; ok && h.lease == l {
		delete(s.m, l.RunID)
	}
}

func (s *leaseSet) list() []results.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]results.Lease, 0, len(s.m))
	for _, h := range s.m {
		out = append(out, h.lease)
	}
	return out
}

// stop cancels the run of each lost lease still in flight.
func (s *leaseSet) stop(lost []results.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lost {
		if h, ok := s.m[l.RunID]; ok && h.lease == l {
			h.stop(errLeaseLost)
		}
	}
}

// heartbeats refreshes this worker's leases every interval until ctx ends,
// and stops at once each run whose lease it finds taken over. A failed
// heartbeat (database locked for longer than the busy timeout) is retried
// at the next tick; leases only go stale after several missed beats.
func (r *Runner) heartbeats(ctx context.Context, w results.Worker, every time.Duration, held *leaseSet) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if lost, err := r.Store.Heartbeat(w, held.list()); err == nil {
				held.stop(lost)
			}
		}
	}
}

// abandoned says that this worker dropped a run whose lease another worker
// took over, having recorded nothing of it.
func (p *progress) abandoned(spec *RunSpec) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	delete(p.current, spec.ID)
	delete(p.runStarts, spec.ID)
	p.settle(spec, false, 0, 0, -1)
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s lease lost %s %s: another worker took the claim over while this one was stopped or cut off; abandoned, nothing recorded\n", p.prefix(), spec.ID, p.label(spec))
	if p.tty {
		p.draw(true)
	}
}
