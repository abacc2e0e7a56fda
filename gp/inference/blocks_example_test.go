package inference_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
)

// A two-block (SOLVE-GP-style) bound with VFF features as the first block
// and inducing points as the second: block two is conditioned on block
// one through Kuv(VFF, points) = Φ(Z). With the second block's q at its
// prior N(0, S_vv) (whitened: N(0, I)), the bound equals the one-block
// SVGP bound, and a mean-only second block (ODVGP) with zero mean too.
func ExampleBlockELBO() {
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(40, 1, nil)
	y := mat.NewDense(40, 1, nil)
	for i := 0; i < 40; i++ {
		x.Set(i, 0, rng.Float64())
		y.Set(i, 0, math.Sin(6*x.At(i, 0))+0.1*rng.NormFloat64())
	}
	k, _ := kernels.New("matern32", 1, kernels.Options{Lengthscales: []float64{0.2}})
	vff, _ := features.NewVFF(k, []features.Interval{{A: -0.5, B: 1.5}}, 6, features.Kronecker, false)
	s := param.NewSet()
	_ = k.Declare(s, "kernel.")
	lik := likelihoods.NewGaussian(0.1)
	_ = lik.Declare(s, "")
	_ = features.NewInducingPoints(mat.NewDense(3, 1, []float64{0.1, 0.5, 0.9})).Declare(s, "gamma.")

	t := ad.NewTape()
	b := s.Bind(t)
	kb := k.Bind(b, "kernel.")
	prior := func(m int) inference.Variational {
		id := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			id.Set(i, i, 1)
		}
		return inference.Variational{Mu: t.Const(mat.NewDense(m, 1, nil)), Sqrt: t.Const(id), Whiten: true}
	}
	beta := inference.Block{Feature: vff.Bind(b, ""), Q: prior(vff.M())}
	gamma := inference.Block{Feature: (&features.InducingPoints{}).Bind(b, "gamma."), Q: prior(3)}
	meanOnly := gamma
	meanOnly.Q.Sqrt = nil
	ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, y) }
	elbo := func(blocks ...inference.Block) float64 {
		out, _, err := inference.BlockELBO(kb, blocks, t.Const(x), ve, 0, inference.Options{})
		if err != nil {
			panic(err)
		}
		return out.Scalar()
	}
	fmt.Printf("SVGP (one block):           %.6f\n", elbo(beta))
	fmt.Printf("SOLVE-GP, q(v) at prior:    %.6f\n", elbo(beta, gamma))
	fmt.Printf("ODVGP, zero mean:           %.6f\n", elbo(beta, meanOnly))
	// Output:
	// SVGP (one block):           -295.334446
	// SOLVE-GP, q(v) at prior:    -295.334446
	// ODVGP, zero mean:           -295.334446
}
