package methods

import (
	"fmt"
	"testing"
	"time"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
)

// BenchmarkODVFFStep is one minibatch ELBO + gradient of ODVFF as the
// paper's UCI runs size it: B = 400, additive Matérn-3/2 over D = 8,
// |γ| = 300 inducing points, |β| = 101 Fourier features per dimension
// (808 in all, Kuu block diagonal with diagonal-plus-low-rank blocks,
// whitened through its structured square root). It reports the share of
// the forward pass spent in the |β|-sized solves (the structured L⁻¹ of
// Kuf, Kuv) as whiten-share.
func BenchmarkODVFFStep(b *testing.B) {
	const batch = 400
	train := boxData(2000, 8, 5)
	for _, whiten := range []bool{true} {
		b.Run(fmt.Sprintf("B=%d/D=8/gamma=300/beta=8x101/whiten=%v", batch, whiten), func(b *testing.B) {
			m := buildDecoupled(b, "odvff", map[string]any{"frequencies": int64(51), "num_orthogonal": int64(300), "whiten": whiten, "interval_margin": 0.3}, train, Regression)
			bt := &batcher{data: train, size: batch, rng: fitRNG(FitOptions{Seed: 1}, 2)}
			var inWhiten, total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				x, y := bt.next()
				tape := ad.NewTape()
				bd := m.set.Bind(tape)
				blocks := m.inferenceBlocks(bd)
				fb := blocks[0].Feature
				blocks[0].Feature = features.WithKuu(fb, features.AllForms, func(k kernels.Bound, tries int) (features.KuuStructure, error) {
					st, err := features.StructureOf(k, fb, tries, features.AllForms)
					if w := st.Whiten; w != nil {
						st.Whiten = func(n *ad.Node) *ad.Node {
							s := time.Now()
							defer func() { inWhiten += time.Since(s) }()
							return w(n)
						}
					}
					return st, err
				})
				ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(bd, likelihoodPfx, mu, v, y) }
				out, _, err := inference.BlockELBO(m.kern.Bind(bd, KernelPrefix), blocks, tape.Const(x), ve, train.N(), m.opts())
				if err != nil {
					b.Fatal(err)
				}
				fwd := time.Since(start)
				tape.Backward(out)
				_ = bd.Gradient()
				total += fwd
			}
			b.ReportMetric(float64(inWhiten)/float64(total), "whiten-share-of-forward")
		})
	}
}
