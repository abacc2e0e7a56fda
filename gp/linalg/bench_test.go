package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// BenchmarkGram times A Aᵀ for the M×N shapes of the collapsed bound,
// against dsyrk and a full dgemm on the same shape. GFLOP/s counts the
// useful N·M² flops of the symmetric product for all three.
func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 10_000
	for _, m := range []int{100, 500, 1000} {
		a := testhelp.RandMat(rng, m, n, 1)
		flops := float64(n) * float64(m) * float64(m)
		report := func(b *testing.B) {
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("M=%d/Gram", m), func(b *testing.B) {
			for b.Loop() {
				Gram(a)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("M=%d/syrk", m), func(b *testing.B) {
			c := mat.NewDense(m, m, nil)
			raw := c.RawMatrix()
			for b.Loop() {
				blas64.Syrk(blas.NoTrans, 1, a.RawMatrix(), 0, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: raw.Stride, Data: raw.Data})
			}
			report(b)
		})
		b.Run(fmt.Sprintf("M=%d/gemm", m), func(b *testing.B) {
			var c mat.Dense
			for b.Loop() {
				c.Mul(a, a.T())
			}
			report(b)
		})
	}
}

// BenchmarkGramAdjoint times (Ḡ+Ḡᵀ)A + u vᵀ, the adjoint of the collapsed
// bound's O(NM²) step, for the same shapes (2·N·M² flops).
func BenchmarkGramAdjoint(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 10_000
	for _, m := range []int{100, 500, 1000} {
		a, g := testhelp.RandMat(rng, m, n, 1), testhelp.RandMat(rng, m, m, 1)
		u, v := testhelp.RandMat(rng, m, 1, 1).RawMatrix().Data, testhelp.RandMat(rng, n, 1, 1).RawMatrix().Data
		b.Run(fmt.Sprintf("M=%d/N=%d", m, n), func(b *testing.B) {
			for b.Loop() {
				GramAdjoint(g, a, u, v)
			}
			b.ReportMetric(2*float64(n)*float64(m)*float64(m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkDgemm is the machine's dgemm rate for the (M×N)·(N×M) product
// A Aᵀ of the collapsed bound (2·N·M² flops), the reference for the O(NM²)
// part of SGPR. "call" is one dgemm, which keeps gemmThreads() cores busy
// (one with OpenBLAS at OPENBLAS_NUM_THREADS=1, as sgplab runs it; all with
// gonum); "split" hands column blocks of A to goroutines on the remaining
// cores, each with its own dgemm into its block's M×M partial, summed at
// the end — the same plan as Gram, so the two rates compare like with like.
func BenchmarkDgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const n = 10_000
	for _, m := range []int{100, 500, 1000} {
		a := testhelp.RandMat(rng, m, n, 1)
		ar := a.RawMatrix()
		flops := 2 * float64(n) * float64(m) * float64(m)
		report := func(b *testing.B) {
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("M=%d/N=%d/call", m, n), func(b *testing.B) {
			c := mat.NewDense(m, m, nil)
			for b.Loop() {
				c.Mul(a, a.T())
			}
			report(b)
		})
		b.Run(fmt.Sprintf("M=%d/N=%d/split", m, n), func(b *testing.B) {
			groups := splitCols(m, n, minSumCols)
			partial := make([]blas64.General, groups)
			for g := range partial {
				partial[g] = blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
			}
			for b.Loop() {
				forBlocks(groups, gemmThreads(), func(g int) {
					lo, hi := blockBounds(g, groups, n)
					blk := colView(ar, lo, hi)
					blas64.Gemm(blas.NoTrans, blas.Trans, 1, blk, blk, 1, partial[g])
				})
				for _, p := range partial[1:] {
					for i, v := range p.Data {
						partial[0].Data[i] += v
					}
				}
			}
			b.ReportMetric(float64(groups), "blocks")
			report(b)
		})
	}
}
