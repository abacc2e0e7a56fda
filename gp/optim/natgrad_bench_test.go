package optim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkNatGradUpdate: one natural-gradient update of a whitened
// q(u) = N(m, LLᵀ) at M inducing variables, from a random gradient — the
// work a minibatch SVGP step does beside the ELBO and its gradient.
func BenchmarkNatGradUpdate(b *testing.B) {
	for _, m := range []int{200, 500} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			q := gaussSeg{mu: 0, sqrt: m, m: m, work: new(natGradWork)} // kept across steps, as TrainNatGrad does
			x := make([]float64, m+m*m)
			g := make([]float64, m+m*m)
			for i := 0; i < m; i++ {
				x[i] = rng.NormFloat64()
				g[i] = rng.NormFloat64()
				x[m+i*m+i] = 1
				for j := 0; j <= i; j++ {
					g[m+i*m+j] = 1e-3 * rng.NormFloat64()
				}
			}
			x0 := append([]float64(nil), x...)
			for b.Loop() {
				copy(x, x0)
				if err := natGradUpdate(x, g, q, 0.1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
