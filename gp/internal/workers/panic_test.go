package workers

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sgplab/internal/goroutines"
)

// goid is the id of the calling goroutine, from its stack header.
func goid() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// A barrier lets n indices through once n are waiting: it proves that n
// goroutines run the loop at once.
type barrier struct {
	n       int64
	arrived atomic.Int64
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: int64(n), open: make(chan struct{})} }

func (b *barrier) wait() error {
	if b.arrived.Add(1) == b.n {
		close(b.open)
	}
	select {
	case <-b.open:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("only %d of %d goroutines joined the loop", b.arrived.Load(), b.n)
	}
}

// loops are the two paths of Run with more than one goroutine.
var loops = []struct {
	name string
	run  func(n, goroutines int, f func(int))
}{
	{"pool", Run},
	{"spawn", spawn},
}

func needPool(t *testing.T) int {
	t.Helper()
	start.Do(startPool)
	if size < 1 {
		t.Skip("needs GOMAXPROCS ≥ 2 for a pool worker")
	}
	return size + 1
}

// catch runs f and returns what it panicked with.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// checkPoolWorks fails t unless the pool is free, every one of its workers
// takes part in a loop, and a loop runs each index once.
func checkPoolWorks(t *testing.T) {
	t.Helper()
	if !busy.TryLock() {
		t.Fatal("the pool is still held after the loop")
	}
	busy.Unlock()
	g := needPool(t)
	b := newBarrier(g)
	var errs atomic.Pointer[error]
	Run(g, g, func(int) {
		if err := b.wait(); err != nil {
			errs.Store(&err)
		}
	})
	if err := errs.Load(); err != nil {
		t.Fatalf("pool workers lost: %v", *err)
	}
	counts := make([]atomic.Int64, 1000)
	Run(len(counts), g, func(i int) { counts[i].Add(1) })
	for i := range counts {
		if c := counts[i].Load(); c != 1 {
			t.Fatalf("after the panic, index %d ran %d times", i, c)
		}
	}
}

// A panic on a goroutine other than the caller's, a pool worker or one
// spawned for the loop, reaches the caller as a *goroutines.Panic with
// the original value and the stack of the goroutine that panicked, after
// the caller's own index has returned.
func TestRunPanicOnOtherGoroutine(t *testing.T) {
	g := needPool(t)
	boom := errors.New("boom")
	for _, l := range loops {
		t.Run(l.name, func(t *testing.T) {
			caller := goid()
			b := newBarrier(g)
			var callerReturned atomic.Bool
			r := catch(func() {
				l.run(g, g, func(int) {
					if err := b.wait(); err != nil {
						t.Error(err)
						return
					}
					if goid() != caller {
						panic(boom)
					}
					time.Sleep(20 * time.Millisecond)
					callerReturned.Store(true)
				})
			})
			p, ok := r.(*goroutines.Panic)
			if !ok {
				t.Fatalf("recovered %v (%T), want a *goroutines.Panic", r, r)
			}
			if !errors.Is(p, boom) || p.Error() != "boom" {
				t.Errorf("panic value %v, want boom", p.Value)
			}
			if !strings.Contains(p.Stack, "TestRunPanicOnOtherGoroutine") || strings.Contains(p.Stack, "runtime/debug.Stack") {
				t.Errorf("stack does not start at the loop body:\n%s", p.Stack)
			}
			if !callerReturned.Load() {
				t.Error("the panic was raised before the caller's index returned")
			}
			checkPoolWorks(t)
		})
	}
}

// A panic on the caller's own index is raised once the indices running
// on other goroutines have returned.
func TestRunPanicOnCaller(t *testing.T) {
	g := needPool(t)
	for _, l := range loops {
		t.Run(l.name, func(t *testing.T) {
			caller := goid()
			b := newBarrier(g)
			var othersReturned atomic.Int64
			r := catch(func() {
				l.run(g, g, func(int) {
					if err := b.wait(); err != nil {
						t.Error(err)
						return
					}
					if goid() == caller {
						var m map[string]int
						m["x"]++ // a runtime error
					}
					time.Sleep(20 * time.Millisecond)
					othersReturned.Add(1)
				})
			})
			p, ok := r.(*goroutines.Panic)
			if !ok || !strings.Contains(p.Error(), "assignment to entry in nil map") {
				t.Fatalf("recovered %v (%T), want the nil-map panic", r, r)
			}
			var re runtime.Error
			if !errors.As(p, &re) {
				t.Error("errors.As does not find the runtime.Error")
			}
			if n := othersReturned.Load(); n != int64(g-1) {
				t.Errorf("raised after %d of the %d other indices returned", n, g-1)
			}
			checkPoolWorks(t)
		})
	}
}

// Once an index panics the indices no goroutine has taken are skipped,
// those taken finish, and none runs twice.
func TestRunPanicSkipsTheRest(t *testing.T) {
	g := needPool(t)
	const n = 1000
	var counts [n]atomic.Int64
	var running atomic.Int64
	r := catch(func() {
		Run(n, g, func(i int) {
			running.Add(1)
			defer running.Add(-1)
			counts[i].Add(1)
			if i == 0 {
				panic("index 0")
			}
			// Hold every other index until the panic has cancelled the
			// untaken ones, so none of them can start before.
			j := current.Load()
			for deadline := time.Now().Add(10 * time.Second); j.next.Load() < n; runtime.Gosched() {
				if time.Now().After(deadline) {
					t.Error("the panic did not cancel the untaken indices")
					return
				}
			}
		})
	})
	if p, ok := r.(*goroutines.Panic); !ok || p.Value != "index 0" {
		t.Fatalf("recovered %v, want the panic of index 0", r)
	}
	if k := running.Load(); k != 0 {
		t.Errorf("%d indices still running when the panic was raised", k)
	}
	ran := 0
	for i := range counts {
		c := counts[i].Load()
		if c > 1 {
			t.Errorf("index %d ran %d times", i, c)
		}
		ran += int(c)
	}
	if ran > g {
		t.Errorf("%d indices ran after index 0 panicked on %d goroutines", ran, g)
	}
	checkPoolWorks(t)
}

// A panic in a nested loop reaches the outermost caller with its own value
// and stack, not wrapped again by each loop it crosses.
func TestRunPanicNested(t *testing.T) {
	g := needPool(t)
	r := catch(func() {
		Run(8, g, func(i int) {
			Run(50, g, func(k int) {
				if i == 5 && k == 17 {
					panic(fmt.Sprintf("inner %d/%d", i, k))
				}
			})
		})
	})
	p, ok := r.(*goroutines.Panic)
	if !ok || p.Value != "inner 5/17" {
		t.Fatalf("recovered %#v, want the inner loop's panic", r)
	}
	if !strings.Contains(p.Stack, "TestRunPanicNested.func1.1") {
		t.Errorf("stack is not the inner body's:\n%s", p.Stack)
	}
	checkPoolWorks(t)
}

// Loops started at once from several goroutines, some of them panicking,
// each raise only their own panic, and the others run every index once.
func TestRunPanicConcurrentCallers(t *testing.T) {
	g := needPool(t)
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 60 {
				want := fmt.Sprintf("caller %d loop %d", c, k)
				counts := make([]atomic.Int64, 40)
				r := catch(func() {
					Run(len(counts), g, func(i int) {
						counts[i].Add(1)
						if k%3 == 0 && i == k%len(counts) {
							panic(want)
						}
					})
				})
				if k%3 == 0 {
					if p, ok := r.(*goroutines.Panic); !ok || p.Value != want {
						t.Errorf("%s: recovered %v", want, r)
					}
					continue
				}
				if r != nil {
					t.Errorf("%s: unexpected panic %v", want, r)
				}
				for i := range counts {
					if n := counts[i].Load(); n != 1 {
						t.Errorf("%s: index %d ran %d times", want, i, n)
					}
				}
			}
		}()
	}
	wg.Wait()
	checkPoolWorks(t)
}

// runtime.Goexit in a loop body (t.FailNow on a worker) does not pass for
// a finished loop, and the pool replaces a worker that left through it;
// a caller that leaves through it frees the pool.
func TestRunGoexit(t *testing.T) {
	g := needPool(t)
	for _, l := range loops {
		t.Run(l.name+"/other", func(t *testing.T) {
			caller := goid()
			b := newBarrier(g)
			r := catch(func() {
				l.run(g, g, func(int) {
					if err := b.wait(); err != nil {
						t.Error(err)
						return
					}
					if goid() != caller {
						runtime.Goexit()
					}
				})
			})
			if p, ok := r.(*goroutines.Panic); !ok || !errors.Is(p, goroutines.ErrGoexit) {
				t.Fatalf("recovered %v, want ErrGoexit", r)
			}
			checkPoolWorks(t)
		})
	}
	t.Run("caller", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(g*10, g, func(i int) {
				if i == 0 {
					runtime.Goexit()
				}
			})
			t.Error("Run returned after its caller's runtime.Goexit")
		}()
		<-done
		checkPoolWorks(t)
	})
}
