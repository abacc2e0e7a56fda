package sphere

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkEval is the harmonics of one chunk of the statistics'
// precompute: VISH's d = 9 (eight inputs and the bias), levels 0…3
// (M = 210), 10 000 points.
func BenchmarkEval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	basis, _ := NewBasis(9, 3)
	x := randomUnit(rng, 10000, 9)
	out := mat.NewDense(basis.M(), 10000, nil)
	for b.Loop() {
		basis.EvalInto(out, x)
	}
}
