package inference_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// SOLVE-GP is the two-block bound: inducing points z (base u, full q(u))
// and w (orthogonal v, full q(v')). At an orthogonal input the residual
// prior variance k − Q_ff is all carried by v' (its Prior term), and the
// four terms of eq. (12) sum to the variance.
func ExampleBlockMarginalTerms() {
	k, _ := kernels.New("se", 1, kernels.Options{Lengthscales: []float64{0.5}})
	s := param.NewSet()
	_ = k.Declare(s, "k.")
	t := ad.NewTape()
	kb := k.Bind(s.Bind(t), "k.")
	col := func(v ...float64) *ad.Node { return t.Const(mat.NewDense(len(v), 1, v)) }
	eye := func(n int) *ad.Node {
		m := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			m.Set(i, i, 1)
		}
		return t.Const(m)
	}
	x, w := col(0.1, 0.7, 1.3, 2.0), col(0.5, 1.5)
	blocks := []inference.Block{
		{Feature: features.BoundPoints{Z: col(0, 1, 2)}, Q: inference.Variational{Mu: col(0.3, 0.5, -0.2), Sqrt: eye(3)}},
		{Feature: features.BoundPoints{Z: w}, Q: inference.Variational{Mu: col(0.1, 0.1), Sqrt: eye(2)}},
	}
	y := []float64{0.2, 0.9, 0.4, -0.3}
	ve := func(mu, v *ad.Node) *ad.Node { // Gaussian likelihood, σ² = 0.1
		r := ad.Sub(t.Const(mat.NewDense(4, 1, y)), mu)
		return ad.AddConst(ad.Scale(-5, ad.Add(ad.Square(r), v)), -0.5*math.Log(2*math.Pi*0.1))
	}
	elbo, _, err := inference.BlockELBO(kb, blocks, x, ve, 0, inference.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ELBO %.4f\n", elbo.Scalar())

	tm, _, _ := inference.BlockMarginalTerms(kb, blocks, w, inference.Options{})
	_, v := tm.Sum()
	for i := 0; i < 2; i++ {
		at := func(n *ad.Node) float64 { return n.Value().At(i, 0) }
		residual := at(tm.Kff) - at(tm.Prior[0])
		sum := residual + at(tm.Cov[0]) + at(tm.Cov[1]) - at(tm.Prior[1])
		fmt.Printf("w=%.1f: k−Q %.4f = S S⁻¹ S %.4f; terms sum to var: %v\n", at(w), residual, at(tm.Prior[1]), math.Abs(sum-at(v)) < 1e-15)
	}
	// Output:
	// ELBO -24.5064
	// w=0.5: k−Q 0.3481 = S S⁻¹ S 0.3481; terms sum to var: true
	// w=1.5: k−Q 0.3481 = S S⁻¹ S 0.3481; terms sum to var: true
}
