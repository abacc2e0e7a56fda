package workers

import (
	"runtime"
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
	done     atomic.Int64
	slots    atomic.Int64  // pool workers that may still join
	finished chan struct{} // closed when all n indices have returned
}

func newJob(n int, f func(int)) *job {
	return &job{n: int64(n), f: f, finished: make(chan struct{})}
}

// work runs indices of j until none is left.
func (j *job) work() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.n {
			return
		}
		j.f(int(i))
		if j.done.Add(1) == j.n {
			close(j.finished)
		}
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
	for range size {
		go worker()
	}
}

func worker() {
	seen := seq.Load()
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
	defer busy.Unlock()
	j := newJob(n, f)
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
	// Wait asleep, not spinning: a spinning core would hold down the clock
	// of the one finishing the last index (4% on a split dgemm).
	<-j.finished
	current.Store(nil)
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
}
