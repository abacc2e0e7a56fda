package ski

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainingStep is one training step as methods/ski runs it: one
// stochastic estimate of the marginal likelihood and its gradient with the
// default (GPyTorch) settings, on N uniform 2-D inputs and the automatic
// grid (⌊√N⌋ points per dimension).
func BenchmarkTrainingStep(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			p := newProblem(b, n, 2, AutoSize(n, 2), 1)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op, err := NewOperator(p.grid, p.w, p.hyp)
				if err != nil {
					b.Fatal(err)
				}
				est, err := op.MarginalLikelihood(p.y, 0, DefaultSettings(), rng)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(est.CGIters), "cg-iters")
			}
		})
	}
}

// BenchmarkMul is one product with K̂ (one column).
func BenchmarkMul(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			p := newProblem(b, n, 2, AutoSize(n, 2), 1)
			v := [][]float64{randVec(rand.New(rand.NewPCG(1, 1)), n)}
			out := [][]float64{make([]float64, n)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.op.Mul(out, v)
			}
		})
	}
}
