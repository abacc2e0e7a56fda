package gp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Data is a set of N observations: inputs X (N×D) and targets Y (length N).
// For classification, Y holds labels in {-1, +1}.
type Data struct {
	X *mat.Dense
	Y []float64
}

// N returns the number of observations.
func (d Data) N() int {
	if d.X == nil {
		return 0
	}
	r, _ := d.X.Dims()
	return r
}

// D returns the input dimension.
func (d Data) D() int {
	if d.X == nil {
		return 0
	}
	_, c := d.X.Dims()
	return c
}

// Validate checks shapes and that every value is finite, so that bad data
// fails with a clear message instead of a panic deep inside a factorisation.
func (d Data) Validate() error {
	if d.X == nil || d.N() == 0 {
		return errors.New("gp: empty data: no observations")
	}
	if len(d.Y) != d.N() {
		return fmt.Errorf("gp: data shape mismatch: X has %d rows but Y has %d values", d.N(), len(d.Y))
	}
	n, dim := d.X.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			if v := d.X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("gp: non-finite input X[%d][%d] = %v", i, j, v)
			}
		}
		if v := d.Y[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("gp: non-finite target Y[%d] = %v", i, v)
		}
	}
	return nil
}

// Subset returns the observations with the given row indices (copied).
func (d Data) Subset(idx []int) Data {
	dim := d.D()
	x := mat.NewDense(len(idx), dim, nil)
	y := make([]float64, len(idx))
	for k, i := range idx {
		for j := 0; j < dim; j++ {
			x.Set(k, j, d.X.At(i, j))
		}
		y[k] = d.Y[i]
	}
	return Data{X: x, Y: y}
}
