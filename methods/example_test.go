package methods_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/methods"
)

// Build a registered method from a parameter table (as a TOML grid would
// give it), fit it and predict. Unset parameters take the documented
// defaults; Seed fixes every random draw (here the k-means start of Z).
func Example() {
	const n = 80
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		xi := -2 + 4*float64(i)/(n-1)
		x.Set(i, 0, xi)
		y[i] = math.Sin(2 * xi)
	}
	model, err := methods.Build("sgpr", map[string]any{"num_inducing": int64(12), "noise_variance": 0.01})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := model.Fit(context.Background(), gp.Data{X: x, Y: y}, methods.FitOptions{Iterations: 50, Seed: 1}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pred, err := model.Predict(mat.NewDense(2, 1, []float64{0.5, math.Pi / 4}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("trained %v: f(0.5) ≈ %.2f, f(π/4) ≈ %.2f\n", res.Iterations > 0, pred.Mean[0], pred.Mean[1])
	// Output:
	// trained true: f(0.5) ≈ 0.84, f(π/4) ≈ 1.00
}
