package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// expRef is e^x to 200 bits (Taylor series of e^(x/2^s), squared s
// times).
func expRef(x float64) *big.Float {
	const prec = 200
	const s = 12
	z := new(big.Float).SetPrec(prec).SetFloat64(x)
	z.Quo(z, new(big.Float).SetPrec(prec).SetInt64(1<<s))
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := 1; i < 40; i++ {
		term.Mul(term, z)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(i)))
		sum.Add(sum, term)
	}
	for range s {
		sum.Mul(sum, sum)
	}
	return sum
}

// ulpsRef is |a − ref| in units of the last place of ref rounded.
func ulpsRef(a float64, ref *big.Float) float64 {
	f, _ := ref.Float64()
	_, e := math.Frexp(f)
	d := new(big.Float).SetPrec(200).Sub(new(big.Float).SetPrec(200).SetFloat64(a), ref)
	df, _ := d.Float64()
	return math.Abs(df) / math.Ldexp(1, e-53)
}

// ulps is |a − b| in units of the last place of b.
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	_, e := math.Frexp(b)
	return math.Abs(a-b) / math.Ldexp(1, e-53)
}

// TestExpAccuracy checks exp against a 200-bit reference on random
// arguments over its whole table range (at most 0.52 ulp), against
// math.Exp on a dense sweep (within 2 ulp: math.Exp itself misses by 1.59
// ulp at x = −375.3679400018868), and its special values.
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	worst := 0.0
	for i := 0; i < 3000; i++ {
		var x float64
		switch i % 3 {
		case 0:
			x = -706.9 + 1415.8*rng.Float64()
		case 1:
			x = -40 * rng.Float64() // the kernels' range
		default:
			x = 1e-3 * rng.NormFloat64()
		}
		if u := ulpsRef(exp(x), expRef(x)); u > worst {
			worst = u
			if u > 0.52 {
				t.Fatalf("exp(%v) = %v, reference %v: %.3g ulp", x, exp(x), expRef(x), u)
			}
		}
	}
	t.Logf("largest error %.3f ulp", worst)
	for x := -706.99; x < 709; x += 0.00371 {
		if u := ulps(exp(x), math.Exp(x)); u > 2 {
			t.Fatalf("exp(%v) = %v, math.Exp %v: %.3g ulp apart", x, exp(x), math.Exp(x), u)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 1e-300, -1e-300, 708.9, -706.99, -707, -745.2, -800, 709, 710, math.Inf(1), math.Inf(-1)} {
		if got, want := exp(x), math.Exp(x); got != want && ulps(got, want) > 1 {
			t.Errorf("exp(%v) = %v, math.Exp %v", x, got, want)
		}
	}
	if exp(0) != 1 {
		t.Errorf("exp(0) = %v, want 1", exp(0))
	}
	if !math.IsNaN(exp(math.NaN())) {
		t.Error("exp(NaN) is not NaN")
	}
}

// scaledExp gives the bits of the scalar s·exp(a·x) entry by entry, with
// the vector loop (where the CPU has it) and without, on slices of every
// length mod 4, with arguments outside the table range and NaN scattered
// among them (each sends its group of four to the scalar path).
func TestScaledExpSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := []float64{0, 1e-310, 1400, 1413.9, 1414.1, 2000, math.Inf(1), math.NaN(), -1500, -1417.9}
	for _, n := range []int{0, 1, 3, 4, 5, 8, 17, 1001} {
		for _, mix := range []bool{false, true} {
			x := make([]float64, n)
			for i := range x {
				x[i] = 60 * rng.Float64() * rng.Float64()
				if mix && rng.IntN(7) == 0 {
					x[i] = special[rng.IntN(len(special))]
				}
			}
			for _, as := range [][2]float64{{-0.5, 1.7}, {-1, 1}, {0.5, 0.3}} {
				a, s := as[0], as[1]
				want := make([]float64, n)
				for i, v := range x {
					want[i] = s * exp(float64(a*v))
				}
				got := append([]float64(nil), x...)
				scaledExp(got, a, s)
				scalar := append([]float64(nil), x...)
				func() {
					defer func(v bool) { haveVectorExp = v }(haveVectorExp)
					haveVectorExp = false
					scaledExp(scalar, a, s)
				}()
				for i := range want {
					same := func(u float64) bool {
						return math.Float64bits(u) == math.Float64bits(want[i]) || (math.IsNaN(u) && math.IsNaN(want[i]))
					}
					if !same(got[i]) || !same(scalar[i]) {
						t.Fatalf("n=%d a=%v s=%v: entry %d (x=%v): %v vector, %v scalar, want %v", n, a, s, i, x[i], got[i], scalar[i], want[i])
					}
				}
			}
		}
	}
	t.Logf("vector loop in use: %v", haveVectorExp)
}

func BenchmarkScaledExp(b *testing.B) {
	xs := make([]float64, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = 40 * rng.Float64()
	}
	buf := make([]float64, len(xs))
	b.Run("scaledExp", func(b *testing.B) {
		for b.Loop() {
			copy(buf, xs)
			scaledExp(buf, -0.5, 1.3)
		}
	})
	b.Run("scalar", func(b *testing.B) {
		defer func(v bool) { haveVectorExp = v }(haveVectorExp)
		haveVectorExp = false
		for b.Loop() {
			copy(buf, xs)
			scaledExp(buf, -0.5, 1.3)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			copy(buf, xs)
			for i, v := range buf {
				buf[i] = 1.3 * math.Exp(-0.5*v)
			}
		}
	})
}
