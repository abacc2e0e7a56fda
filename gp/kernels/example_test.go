package kernels_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

func ExampleMatrix() {
	k, err := kernels.New("matern32", 1, kernels.Options{Variance: 2, Lengthscales: []float64{0.5}})
	if err != nil {
		panic(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "kernel."); err != nil {
		panic(err)
	}
	fmt.Println(s.Names())
	x := mat.NewDense(3, 1, []float64{0, 0.5, 1})
	fmt.Printf("%.4f\n", mat.Formatted(kernels.Matrix(k, s, "kernel.", x, x)))
	fmt.Printf("%.4f\n", kernels.DiagValues(k, s, "kernel.", x))
	// Output:
	// [kernel.variance kernel.lengthscales]
	// ⎡2.0000  0.9667  0.2795⎤
	// ⎢0.9667  2.0000  0.9667⎥
	// ⎣0.2795  0.9667  2.0000⎦
	// [2.0000 2.0000 2.0000]
}

func ExampleNew_combinations() {
	for _, name := range []string{"sum(se,periodic)", "additive(matern52)", "product(se,arccos1)"} {
		k, err := kernels.New(name, 2, kernels.Options{})
		if err != nil {
			panic(err)
		}
		s := param.NewSet()
		if err := k.Declare(s, ""); err != nil {
			panic(err)
		}
		fmt.Println(k.Name(), s.Names())
	}
	_, err := kernels.New("rbf", 2, kernels.Options{})
	fmt.Println(err)
	// Output:
	// sum(se,periodic) [k0.variance k0.lengthscales k1.variance k1.lengthscales k1.period]
	// additive(matern52) [d0.variance d0.lengthscales d1.variance d1.lengthscales]
	// product(se,arccos1) [k0.variance k0.lengthscales k1.variance k1.weight_variances k1.bias_variance]
	// kernels: unknown kernel "rbf"; valid names are se, matern12, matern32, matern52, periodic, arccos0, arccos1, arccos2, sphere-matern12, sphere-matern32, sphere-matern52, sphere-se, chordal-matern12, chordal-matern32, chordal-matern52, chordal-se, or sum(…), product(…), additive(…) of them
}
