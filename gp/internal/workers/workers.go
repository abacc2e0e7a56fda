package workers

import (
	"runtime"

	"sgplab/internal/goroutines"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long an idle worker polls for the next loop before it
// sleeps: longer than the serial stretches between the loops of a step,
// short enough that an idle process stops using the cores at once.
const spinFor = 200 * time.Microsecond

// A job is one loop: indices [0, n) handed out by a counter.
type job struct {
	n        int64
	f        func(i int)
	next     atomic.Int64
	done     atomic.Int64 // indices returned, panicked or cancelled
	slots    atomic.Int64 // pool workers that may still join
	finished chan struct{}
	panic    atomic.Pointer[goroutines.Panic] // the first index's panic
}

func newJob(n int, f func(int)) *job {
	return &job{n: int64(n), f: f, finished: make(chan struct{})}
}

// work runs indices of j until none is left. A panic in f (or a
// runtime.Goexit) ends the loop on this goroutine only: it is kept for
// rethrow, the indices not yet started are cancelled and those running on
// other goroutines finish, so finished is closed once every index is
// accounted for and the goroutine (a pool worker among them) lives on.
// One deferred call per goroutine and loop, none per index.
func (j *job) work() {
	returned := false
	defer func() {
		if !returned {
			j.fail(goroutines.Recovered(recover()))
		}
	}()
	for {
		i := j.next.Add(1) - 1
		if i >= j.n {
			returned = true
			return
		}
		j.f(int(i))
		j.account(1)
	}
}

// account counts k more indices as over.
func (j *job) account(k int64) {
	if j.done.Add(k) == j.n {
		close(j.finished)
	}
}

// fail keeps p, cancels the indices no goroutine has taken and counts
// them, with the one that panicked, as over.
func (j *job) fail(p *goroutines.Panic) {
	j.panic.CompareAndSwap(nil, p)
	// Indices below the old counter were handed out; those from it to n
	// never will be. A counter already past n hands out nothing.
	untaken := max(0, j.n-j.next.Swap(j.n))
	j.account(1 + untaken)
}

// rethrow raises on the caller the panic an index of the finished loop
// recovered, if any.
func (j *job) rethrow() {
	if p := j.panic.Load(); p != nil {
		panic(p)
	}
}

// The pool: size workers (GOMAXPROCS at first use, less one for the
// caller), the current job and its sequence number, and the wake-up
// channel of sleeping workers. busy is held by the one caller whose loop
// runs on the pool; a loop started while it is held (a nested or
// concurrent one) runs on goroutines of its own.
var (
	busy     sync.Mutex
	start    sync.Once
	size     int
	current  atomic.Pointer[job]
	seq      atomic.Uint64
	sleeping atomic.Int64
	wake     chan struct{}
)

func startPool() {
	size = runtime.GOMAXPROCS(0) - 1
	wake = make(chan struct{}, max(size, 1))
	// The sequence number is read here, not by the new goroutines: one
	// that started only after the first loop was posted would take that
	// loop's number for the one it has already seen and sleep through it.
	for range size {
		go worker(seq.Load())
	}
}

// worker runs the loops posted after the one numbered seen.
func worker(seen uint64) {
	// job.work recovers every panic; only a runtime.Goexit in a loop body
	// ends a worker, and a new one takes its place. It starts from the
	// number this one had seen, not the current one: the loop that ended
	// this worker may have returned and the next one been posted already.
	defer func() { go worker(seen) }()
	for {
		deadline := time.Now().Add(spinFor)
		for seq.Load() == seen {
			if time.Now().After(deadline) {
				sleeping.Add(1)
				if seq.Load() == seen {
					<-wake
				}
				sleeping.Add(-1)
				deadline = time.Now().Add(spinFor)
				continue
			}
			runtime.Gosched()
		}
		seen = seq.Load()
		if j := current.Load(); j != nil && j.slots.Add(-1) >= 0 {
			j.work()
		}
	}
}

// Run calls f(i) once for every i in [0, n), on up to goroutines
// goroutines (the caller's among them), and returns when all have
// returned. With goroutines < 2 it is a plain loop on the caller.
//
// A panic in f, on whichever goroutine, is raised again on the caller as a
// *goroutines.Panic once the indices running elsewhere have returned (those
// not started yet are skipped); the pool is then free for the next loop.
func Run(n, goroutines int, f func(i int)) {
	if n <= 0 {
		return
	}
	goroutines = min(goroutines, n)
	if goroutines < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	start.Do(startPool)
	if goroutines > size+1 || !busy.TryLock() {
		spawn(n, goroutines, f)
		return
	}
	j := newJob(n, f)
	// Deferred so that a caller leaving through runtime.Goexit in its own
	// index also waits for the others and frees the pool.
	defer func() {
		// Wait asleep, not spinning: a spinning core would hold down the
		// clock of the one finishing the last index (4% on a split dgemm).
		<-j.finished
		current.Store(nil)
		busy.Unlock()
	}()
	j.slots.Store(int64(goroutines - 1))
	current.Store(j)
	seq.Add(1)
	for range min(sleeping.Load(), int64(goroutines-1)) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	j.work()
	<-j.finished
	j.rethrow()
}

// spawn is Run on goroutines started for this loop alone.
func spawn(n, goroutines int, f func(i int)) {
	j := newJob(n, f)
	var wg sync.WaitGroup
	for range goroutines - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.work()
		}()
	}
	j.work()
	wg.Wait()
	j.rethrow()
}
