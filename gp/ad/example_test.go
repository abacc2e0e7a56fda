package ad_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// The log marginal likelihood of a tiny GP with an SE kernel, and its
// gradient with respect to the log-lengthscale.
func Example() {
	x := mat.NewDense(3, 1, []float64{0, 0.5, 2})
	y := mat.NewDense(3, 1, []float64{0.3, 0.1, -0.8})

	t := ad.NewTape()
	logEll := t.Var(mat.NewDense(1, 1, []float64{0}))
	xn, yn := t.Const(x), t.Const(y)

	// K = exp(−‖x − x'‖² / (2ℓ²)) + 0.1·I
	ell2 := ad.Exp(ad.Scale(2, logEll))
	k := ad.Exp(ad.Neg(ad.DivScalar(ad.SqDist(xn, xn), ad.Scale(2, ell2))))
	k = ad.AddDiag(k, t.Scalar(0.1))

	l, err := ad.Cholesky(k)
	if err != nil {
		panic(err)
	}
	alpha := ad.SolveLower(l, yn)
	lml := ad.AddConst(ad.Sub(ad.Scale(-0.5, ad.Dot(alpha, alpha)), ad.Scale(0.5, ad.LogDetChol(l))), -1.5*math.Log(2*math.Pi))

	t.Backward(lml)
	fmt.Printf("log marginal likelihood %.4f, d/d log ℓ %.4f\n", lml.Scalar(), logEll.Grad().At(0, 0))
	// Output: log marginal likelihood -2.6832, d/d log ℓ 0.5602
}
