package inference

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
)

func addIdentityQ(s *param.Set, prefix string, m int) {
	must(s.Add(prefix+"mu", mat.NewDense(m, 1, nil), param.Identity{}))
	sq := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		sq.Set(i, i, 1)
	}
	must(s.Add(prefix+"sqrt", sq, param.Identity{}))
}

// BenchmarkSOLVEGPvsSVGP is the cost argument of Tiao et al. (2023, §3):
// one full-batch ELBO and its gradient (N = 10⁴, D = 8, non-whitened as the
// paper) for SOLVE-GP with M base and K = M orthogonal inducing points
// against SVGP with M + K inducing points. The cubic parts cost 2M³
// against 8M³; the O(N(M² + MK + K²)) = 3NM² against O(N(2M)²) = 4NM².
func BenchmarkSOLVEGPvsSVGP(b *testing.B) {
	const n = 10_000
	for _, m := range []int{128, 256, 500} {
		s, k, f, x, y := benchModel(b, n, 2*m)
		z := f.Z.Slice(0, m, 0, 8).(*mat.Dense)
		w := f.Z.Slice(m, 2*m, 0, 8).(*mat.Dense)
		must(s.Add("z", mat.DenseCopyOf(z), param.Identity{}))
		must(s.Add("w", mat.DenseCopyOf(w), param.Identity{}))
		addIdentityQ(s, "qu_", m)
		addIdentityQ(s, "qv_", m)
		addIdentityQ(s, "q_", 2*m)
		lik := likelihoods.NewGaussian(1)
		yc := column(y)
		opt := Options{Jitter: DefaultJitter}
		b.Run(fmt.Sprintf("solvegp/M=K=%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				t := ad.NewTape()
				bd := s.Bind(t)
				kb := k.Bind(bd, "k.")
				ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bd, "", mu, v, yc) }
				bs := []Block{{Feature: features.BoundPoints{Z: bd.Get("z")}, Q: Variational{Mu: bd.Get("qu_mu"), Sqrt: bd.Get("qu_sqrt")}},
					{Feature: features.BoundPoints{Z: bd.Get("w")}, Q: Variational{Mu: bd.Get("qv_mu"), Sqrt: bd.Get("qv_sqrt")}}}
				out, _, err := BlockELBO(kb, bs, t.Const(x), ve, 0, opt)
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
				_ = bd.Gradient()
			}
		})
		b.Run(fmt.Sprintf("svgp/M=%d", 2*m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				t := ad.NewTape()
				bd := s.Bind(t)
				ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bd, "", mu, v, yc) }
				q := Variational{Mu: bd.Get("q_mu"), Sqrt: bd.Get("q_sqrt")}
				out, _, err := SVGP(k.Bind(bd, "k."), f.Bind(bd, "f."), t.Const(x), ve, q, 0, opt)
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
				_ = bd.Gradient()
			}
		})
	}
}
