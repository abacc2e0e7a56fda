package datasets_test

import (
	"fmt"

	"sgplab/datasets"
)

// Prepare draws the VOF paper's Figure-2 data set (vof-spec §3.2) with a
// fixed seed; the Provenance records what was generated and how.
func ExamplePrepare() {
	p, err := datasets.Prepare(datasets.Request{Name: "vof-regression", Seed: 0})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d training points in %d-D, %d test points\n", p.Name, p.Train.N(), p.Train.D(), p.Test.N())
	fmt.Println("protocol:", p.Provenance.Protocol, "scaling:", p.Provenance.Scaling)
	lo, hi := p.Train.X.At(0, 0), p.Train.X.At(0, 0)
	for i := 0; i < p.Train.N(); i++ {
		lo, hi = min(lo, p.Train.X.At(i, 0)), max(hi, p.Train.X.At(i, 0))
	}
	fmt.Println("inputs inside [-3, 3]:", lo >= -3 && hi <= 3)

	// Parameters override the paper's defaults; unknown ones are rejected.
	_, err = datasets.Prepare(datasets.Request{Name: "vof-regression", Params: map[string]any{"lengthscale": -1}})
	fmt.Println(err)
	// Output:
	// vof-regression: 80 training points in 1-D, 0 test points
	// protocol: synthetic scaling: none
	// inputs inside [-3, 3]: true
	// datasets: need lengthscale > 0, variance > 0, noise_variance >= 0
}
