package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Every index runs exactly once, for loops on the pool, on a single
// goroutine, nested inside a loop (on the pool's workers and on the
// caller) and started from several goroutines at once.
func TestRunEachIndexOnce(t *testing.T) {
	check := func(t *testing.T, n, g int) {
		t.Helper()
		counts := make([]atomic.Int64, n)
		Run(n, g, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("n=%d goroutines=%d: index %d ran %d times", n, g, i, c)
			}
		}
	}
	procs := runtime.GOMAXPROCS(0)
	for _, n := range []int{0, 1, 2, 3, 17, 1000} {
		for _, g := range []int{1, 2, procs, procs + 3} {
			check(t, n, g)
		}
	}
	t.Run("nested", func(t *testing.T) {
		var total atomic.Int64
		Run(8, procs, func(int) {
			Run(50, procs, func(int) { total.Add(1) })
		})
		if total.Load() != 400 {
			t.Fatalf("nested loops ran %d inner indices, want 400", total.Load())
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					check(t, 40, procs)
				}
			}()
		}
		wg.Wait()
	})
}

// A loop asked for fewer goroutines than the pool has never runs more of
// its indices at once than that.
func TestRunRespectsGoroutines(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 3 {
		t.Skip("needs 3 or more procs to have more workers than asked for")
	}
	var running, most atomic.Int64
	Run(64, 2, func(int) {
		r := running.Add(1)
		for {
			m := most.Load()
			if r <= m || most.CompareAndSwap(m, r) {
				break
			}
		}
		for range 200 { // long enough for the others to overlap
			runtime.Gosched()
		}
		running.Add(-1)
	})
	if most.Load() > 2 {
		t.Errorf("%d indices ran at once, asked for 2 goroutines", most.Load())
	}
}

func BenchmarkRun(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	var sink atomic.Int64
	b.Run("pool", func(b *testing.B) {
		for b.Loop() {
			Run(8, procs, func(i int) { sink.Add(int64(i)) })
		}
	})
	// Many cheap indices: the per-index cost of the pool's bookkeeping.
	b.Run("pool-1024", func(b *testing.B) {
		for b.Loop() {
			Run(1024, procs, func(i int) { sink.Add(int64(i)) })
		}
	})
	b.Run("spawn", func(b *testing.B) {
		for b.Loop() {
			spawn(8, procs, func(i int) { sink.Add(int64(i)) })
		}
	})
}
