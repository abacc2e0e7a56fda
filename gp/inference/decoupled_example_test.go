package inference_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// A decoupled model needs only the covariance blocks of its two sets: here
// inducing points z (base u) and w (orthogonal v) under an SE kernel. At
// an orthogonal input the residual prior variance k − Q_ff is all carried
// by v' (Residual = OrthPrior), and the four terms of eq. (12) sum to the
// variance.
func ExampleDecoupled() {
	k, _ := kernels.New("se", 1, kernels.Options{Lengthscales: []float64{0.5}})
	s := param.NewSet()
	_ = k.Declare(s, "k.")
	t := ad.NewTape()
	kb := k.Bind(s.Bind(t), "k.")
	col := func(v ...float64) *ad.Node { return t.Const(mat.NewDense(len(v), 1, v)) }
	x, z, w := col(0.1, 0.7, 1.3, 2.0), col(0, 1, 2), col(0.5, 1.5)
	y := []float64{0.2, 0.9, 0.4, -0.3}
	blk := inference.Blocks{Kuu: inference.Kuu{Dense: kb.K(z, z)}, Kuf: kb.K(z, x), Kvv: kb.K(w, w),
		Kvf: kb.K(w, x), Kvu: kb.K(w, z), Kff: kb.Diag(x)}
	eye := func(n int) *ad.Node {
		m := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			m.Set(i, i, 1)
		}
		return t.Const(m)
	}
	qu := inference.Variational{Mu: col(0.3, 0.5, -0.2), Sqrt: eye(3)}
	qv := inference.Orthogonal{Mu: col(0.1, 0.1), Sqrt: eye(2)}
	ve := func(mu, v *ad.Node) *ad.Node { // Gaussian likelihood, σ² = 0.1
		r := ad.Sub(t.Const(mat.NewDense(4, 1, y)), mu)
		return ad.AddConst(ad.Scale(-5, ad.Add(ad.Square(r), v)), -0.5*math.Log(2*math.Pi*0.1))
	}
	elbo, _, err := inference.Decoupled(blk, ve, qu, qv, 0, inference.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ELBO %.4f\n", elbo.Scalar())

	blk.Kuf, blk.Kvf, blk.Kff = kb.K(z, w), kb.K(w, w), kb.Diag(w)
	tm, _, _ := inference.DecoupledMarginals(blk, qu, qv, inference.Options{})
	for i := 0; i < 2; i++ {
		r, o := tm.Residual.Value().At(i, 0), tm.OrthPrior.Value().At(i, 0)
		sum := r + tm.BaseCov.Value().At(i, 0) + tm.OrthCov.Value().At(i, 0) - o
		fmt.Printf("w=%.1f: k−Q %.4f = S S⁻¹ S %.4f; terms sum to var: %v\n", w.Value().At(i, 0), r, o, math.Abs(sum-tm.Var.Value().At(i, 0)) < 1e-15)
	}
	// Output:
	// ELBO -24.5064
	// w=0.5: k−Q 0.3481 = S S⁻¹ S 0.3481; terms sum to var: true
	// w=1.5: k−Q 0.3481 = S S⁻¹ S 0.3481; terms sum to var: true
}
