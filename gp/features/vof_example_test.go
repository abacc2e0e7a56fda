package features_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Hermite VOF of the SE kernel: Kuu = I, and Qff = KufᵀKuf approaches
// k(x, x') as M grows.
func ExampleHermiteVOF() {
	k, _ := kernels.New("se", 1, kernels.Options{Variance: 0.7, Lengthscales: []float64{0.5}})
	for _, m := range []int{5, 20, 40} {
		f, _ := features.NewHermiteVOF(k, m, 1.6)
		s := param.NewSet()
		_ = k.Declare(s, "k.")
		_ = f.Declare(s, "f.")
		t := ad.NewTape()
		b := s.Bind(t)
		kuf := f.Bind(b, "f.").Kuf(k.Bind(b, "k."), t.Const(mat.NewDense(2, 1, []float64{0.3, 0.8}))).Value()
		fmt.Printf("M=%2d  Q(0.3, 0.8) = %.4f\n", m, mat.Dot(kuf.ColView(0), kuf.ColView(1)))
	}
	s := param.NewSet()
	_ = k.Declare(s, "")
	exact := kernels.Matrix(k, s, "", mat.NewDense(1, 1, []float64{0.3}), mat.NewDense(1, 1, []float64{0.8}))
	fmt.Printf("exact k(0.3, 0.8) = %.4f\n", exact.At(0, 0))
	// Output:
	// M= 5  Q(0.3, 0.8) = 0.4469
	// M=20  Q(0.3, 0.8) = 0.4248
	// M=40  Q(0.3, 0.8) = 0.4246
	// exact k(0.3, 0.8) = 0.4246
}
