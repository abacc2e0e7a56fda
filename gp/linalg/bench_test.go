package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkGram times A Aᵀ for the M×N shapes of the collapsed bound,
// against dsyrk and a full dgemm on the same shape. GFLOP/s counts the
// useful N·M² flops of the symmetric product for all three.
func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 10_000
	for _, m := range []int{100, 500, 1000} {
		a := randDense(rng, m, n)
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

// BenchmarkDgemm is the machine's dgemm rate for the (M×M)·(M×N) product
// of the collapsed bound's adjoint (2·N·M² flops), the reference for the
// O(NM²) part of SGPR.
func BenchmarkDgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const n = 10_000
	for _, m := range []int{100, 500, 1000} {
		s, a := randDense(rng, m, m), randDense(rng, m, n)
		b.Run(fmt.Sprintf("M=%d/N=%d", m, n), func(b *testing.B) {
			c := mat.NewDense(m, n, nil)
			for b.Loop() {
				c.Mul(s, a)
			}
			b.ReportMetric(2*float64(n)*float64(m)*float64(m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
