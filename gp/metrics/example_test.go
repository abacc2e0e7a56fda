package metrics_test

import (
	"fmt"

	"sgplab/gp/metrics"
)

func ExampleRegression() {
	// Targets in original units; the model predicted in units standardised
	// with mean 10 and standard deviation 2.
	y := []float64{12, 6}
	mean := []float64{1, -1.5}
	varY := []float64{0.25, 1}
	m, err := metrics.Regression(y, mean, varY, metrics.Scale{Shift: 10, Scale: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("rmse %.4f nlpd %.4f coverage %.2f\n", m["rmse"], m["nlpd"], m["coverage95"])
	// Output: rmse 0.7071 nlpd 1.3280 coverage 1.00
}
