package sphere

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// withScalarProducts runs f with the vector products switched off.
func withScalarProducts(f func()) {
	saved := haveVectorMul
	haveVectorMul = false
	defer func() { haveVectorMul = saved }()
	f()
}

// The vector products are the scalar loops' bit for bit, at every length
// (the lanes, the tail and both together) and for every kind of operand
// (signed zeros, subnormals, infinities, NaN).
func TestMulIntoBitwise(t *testing.T) {
	if !haveVectorMul {
		t.Skip("no AVX2 here: mulInto is the scalar loop")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{0, math.Copysign(0, -1), 5e-324, -2.2e-308, math.Inf(1), math.Inf(-1), math.NaN(), 1e308, 3}
	draw := func() float64 {
		if rng.IntN(4) == 0 {
			return special[rng.IntN(len(special))]
		}
		return rng.NormFloat64() * math.Exp(20*rng.NormFloat64())
	}
	for n := 1; n <= 41; n++ {
		a, b, s := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i], s[i] = draw(), draw(), draw()
		}
		got, gotScaled := make([]float64, n), make([]float64, n)
		mulInto(got, a, b)
		mulScaledInto(gotScaled, a, b, s)
		for i := range n {
			want := a[i] * b[i]
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("n=%d: (a·b)[%d] = %x, scalar %x", n, i, math.Float64bits(got[i]), math.Float64bits(want))
			}
			want = want * s[i]
			if math.Float64bits(gotScaled[i]) != math.Float64bits(want) {
				t.Fatalf("n=%d: (a·b·s)[%d] = %x, scalar %x", n, i, math.Float64bits(gotScaled[i]), math.Float64bits(want))
			}
		}
	}
}

// Eval with the vector products is bitwise Eval without them.
func TestEvalVectorMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, c := range []struct{ d, maxL, n int }{{2, 4, 130}, {3, 5, 257}, {9, 3, 301}} {
		b, _ := NewBasis(c.d, c.maxL)
		x := randomUnit(rng, c.n, c.d)
		x.Scale(1.3, x)
		s := make([]float64, c.n)
		for i := range s {
			s[i] = 0.5 + rng.Float64()
		}
		for _, scale := range [][]float64{nil, s} {
			got := mat.NewDense(b.M(), c.n, nil)
			b.EvalScaledInto(got, x, scale)
			want := mat.NewDense(b.M(), c.n, nil)
			withScalarProducts(func() { b.EvalScaledInto(want, x, scale) })
			for i, v := range got.RawMatrix().Data {
				if w := want.RawMatrix().Data[i]; math.Float64bits(v) != math.Float64bits(w) {
					t.Fatalf("d=%d L=%d scaled=%v: entry %d is %v, scalar %v", c.d, c.maxL, scale != nil, i, v, w)
				}
			}
		}
	}
}

// BenchmarkEval is the harmonics of one chunk of the statistics'
// precompute: VISH's d = 9 (eight inputs and the bias), levels 0…3
// (M = 210), 10 000 points, with and without the vector products.
func BenchmarkEval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	basis, _ := NewBasis(9, 3)
	x := randomUnit(rng, 10000, 9)
	out := mat.NewDense(basis.M(), 10000, nil)
	for _, c := range []struct {
		name   string
		vector bool
	}{{"vector", true}, {"scalar", false}} {
		if c.vector && !haveVectorMul {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			saved := haveVectorMul
			haveVectorMul = c.vector
			defer func() { haveVectorMul = saved }()
			for b.Loop() {
				basis.EvalInto(out, x)
			}
		})
	}
}
