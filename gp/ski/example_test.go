package ski_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ski"
)

// Estimate the SKI marginal likelihood of 2-D data by MVMs only, then
// predict at a test point.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 500
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = math.Sin(2*a) * math.Cos(b)
	}
	grid, err := ski.NewGrid(x, []int{ski.AutoSize(n, 2)}) // GPyTorch's rule: ⌊√500⌋ = 22 points per axis
	if err != nil {
		panic(err)
	}
	w, err := grid.Interpolate(x)
	if err != nil {
		panic(err)
	}
	op, err := ski.NewOperator(grid, w, ski.Hyper{Variance: 1, Lengthscales: []float64{0.7, 0.7}, Noise: 0.01})
	if err != nil {
		panic(err)
	}
	est, err := op.MarginalLikelihood(y, 0, ski.DefaultSettings(), rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		panic(err)
	}
	fmt.Printf("grid %d points, %d CG iterations, log-likelihood estimate > 0: %v\n", grid.Len(), est.CGIters, est.LML > 0)

	s := ski.DefaultPosteriorSettings()
	s.CGTol = 1e-8
	post, err := op.NewPosterior(y, 0, s, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		panic(err)
	}
	mean, _, _, err := post.Predict(mat.NewDense(1, 2, []float64{0.5, 0}))
	if err != nil {
		panic(err)
	}
	fmt.Printf("mean at (0.5, 0): %.2f (truth %.2f)\n", mean[0], math.Sin(1))
	// Output:
	// grid 484 points, 20 CG iterations, log-likelihood estimate > 0: true
	// mean at (0.5, 0): 0.84 (truth 0.84)
}
