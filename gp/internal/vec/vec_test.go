package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every loop is its scalar definition bit for bit, at every length (the
// lanes, the tail and both) and on every kind of operand (signed zeros,
// subnormals, ±Inf, NaN, overflow).
func TestLoopsBitwiseScalar(t *testing.T) {
	if !HasAVX2 {
		t.Skip("no AVX2 here: every loop is its scalar definition")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{0, math.Copysign(0, -1), 5e-324, -2.2e-308, math.Inf(1), math.Inf(-1), math.NaN(), 1e308, -1e200, 3}
	draw := func() float64 {
		if rng.IntN(4) == 0 {
			return special[rng.IntN(len(special))]
		}
		return rng.NormFloat64() * math.Exp(20*rng.NormFloat64())
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for n := 0; n <= 41; n++ {
		for range 20 {
			a, b, s, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range n {
				a[i], b[i], s[i], d[i] = draw(), draw(), draw(), draw()
			}
			c := draw()
			for _, tc := range []struct {
				name string
				run  func(dst []float64)
				want func(i int, dst float64) float64
			}{
				{"Mul", func(dst []float64) { Mul(dst, a, b) }, func(i int, _ float64) float64 { return a[i] * b[i] }},
				{"MulScaled", func(dst []float64) { MulScaled(dst, a, b, s) }, func(i int, _ float64) float64 { return a[i] * b[i] * s[i] }},
				{"SubScaledSquares", func(dst []float64) { SubScaledSquares(dst, a, c) }, func(i int, x float64) float64 {
					v := c * a[i]
					return x - v*v
				}},
				{"SubSignedSquares+", func(dst []float64) { SubSignedSquares(dst, a, 1) }, func(i int, x float64) float64 { return x - 1*a[i]*a[i] }},
				{"SubSignedSquares-", func(dst []float64) { SubSignedSquares(dst, a, -1) }, func(i int, x float64) float64 { return x - -1*a[i]*a[i] }},
			} {
				got := append([]float64(nil), d...)
				tc.run(got)
				for i := range n {
					if w := tc.want(i, d[i]); !same(got[i], w) {
						t.Fatalf("%s, n=%d: entry %d is %v (%x), scalar %v (%x)", tc.name, n, i, got[i], math.Float64bits(got[i]), w, math.Float64bits(w))
					}
				}
			}
		}
	}
}
