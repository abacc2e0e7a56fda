package main

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// dgemmRate measures the machine's two-core dgemm rate in GFLOP/s as
// gp/linalg's BenchmarkDgemm/M=500/N=10000/split does: A Aᵀ for a 500×10⁴
// A, in 8 column blocks of one dgemm each, shared out over every core
// (GOMAXPROCS goroutines), for about d.
func dgemmRate(d time.Duration) float64 {
	const m, n, blocks = 500, 10_000, 8
	rng := rand.New(rand.NewPCG(6, 6))
	a := make([]float64, m*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	partial := make([][]float64, blocks)
	for b := range partial {
		partial[b] = make([]float64, m*m)
	}
	once := func() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					b := int(next.Add(1)) - 1
					if b >= blocks {
						return
					}
					lo, hi := b*n/blocks, (b+1)*n/blocks
					blk := blas64.General{Rows: m, Cols: hi - lo, Stride: n, Data: a[lo:]}
					blas64.Gemm(blas.NoTrans, blas.Trans, 1, blk, blk, 0, blas64.General{Rows: m, Cols: m, Stride: m, Data: partial[b]})
				}
			})
		}
		wg.Wait()
		for _, p := range partial[1:] {
			for i, v := range p {
				partial[0][i] += v
			}
		}
	}
	once() // warm up
	start := time.Now()
	reps := 0
	for time.Since(start) < d || reps < 3 {
		once()
		reps++
	}
	return 2 * m * m * n * float64(reps) / time.Since(start).Seconds() / 1e9
}
