package inducing_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/inducing"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

func Example() {
	x := mat.NewDense(8, 1, []float64{0, 0.1, 0.2, 3, 3.1, 3.2, 6, 6.1})

	z, err := inducing.KMeans(x, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Printf("k-means objective %.4f\n", inducing.Objective(x, z))

	k, _ := kernels.New("se", 1, kernels.Options{Lengthscales: []float64{0.5}})
	s := param.NewSet()
	_ = k.Declare(s, "kernel.")
	_, idx, err := inducing.Greedy(x, 3, k, s, "kernel.")
	if err != nil {
		panic(err)
	}
	fmt.Println("greedy picks rows", idx)
	// Output:
	// k-means objective 0.0450
	// greedy picks rows [0 4 7]
}
