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
	"sgplab/gp/param"
)

// The collapsed bound with inducing points at the training inputs equals the
// exact log marginal likelihood (up to the jitter CholeskyJitter adds to the
// ill-conditioned Kuu); with fewer points it lies below it.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(50, 1, nil)
	y := make([]float64, 50)
	for i := range y {
		x.Set(i, 0, 6*rng.Float64())
		y[i] = math.Sin(x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	k, _ := kernels.New("se", 1, kernels.Options{Lengthscales: []float64{1}})
	s := param.NewSet()
	_ = k.Declare(s, "k.")
	_ = s.AddScalar("noise", 0.01, param.DefaultPositive)
	_ = features.NewInducingPoints(x).Declare(s, "all.")
	_ = features.NewInducingPoints(x.Slice(0, 5, 0, 1).(*mat.Dense)).Declare(s, "few.")

	t := ad.NewTape()
	b := s.Bind(t)
	kb, xn, noise := k.Bind(b, "k."), t.Const(x), b.Get("noise")
	exact, _, _ := inference.ExactLML(kb, xn, y, noise, inference.Options{})
	all, _, _ := inference.SGPR(kb, (&features.InducingPoints{}).Bind(b, "all."), xn, y, noise, inference.Options{})
	few, _, _ := inference.SGPR(kb, (&features.InducingPoints{}).Bind(b, "few."), xn, y, noise, inference.Options{})
	fmt.Printf("exact %.4f\nZ = X %.4f\nM = 5 below exact: %v\n", exact.Scalar(), all.Scalar(), few.Scalar() < exact.Scalar())

	// Gradients with respect to every parameter, for an optimiser.
	t.Backward(few)
	fmt.Println("gradient entries:", len(b.Gradient()))
	// Output:
	// exact 19.5995
	// Z = X 19.5995
	// M = 5 below exact: true
	// gradient entries: 58
}
