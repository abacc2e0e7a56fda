package kernels

import (
	"math"
	"math/big"
)

// The SE kernel evaluates e^x N·M times per objective (twice in the
// chunked collapsed bound), which made math.Exp the largest cost outside
// BLAS. scaledExp computes s·e^(a·x) over a slice with a table-driven
// exponential, four lanes at a time with AVX2 where the CPU has it, and
// the same operations one at a time otherwise: every operation is a
// separately rounded IEEE multiply, add or subtract (no fused
// multiply-adds), so both paths give the same bits, on every platform.
//
// The method: x = (k·expN + j)·ln2/expN + r with |r| ≤ ln2/(2·expN), and
//
//	e^x = 2^k · 2^(j/expN) · e^r,  e^r − 1 ≈ r + r²(½ + r/6 + r²/24 + r³/120),
//
// the truncation below 10⁻¹⁸ relative; 2^(j/expN) is held as a rounded
// value and its remainder, so the result is within about 0.51 ulp (math.Exp
// promises 1 ulp). Outside (−707, 709), where e^x would be subnormal or
// overflow, and for NaN, it is math.Exp.

const (
	expBits = 7
	expN    = 1 << expBits
	// expShift rounds a float64 of magnitude below 2⁵¹ to an integer when
	// added and subtracted again; the sum's low mantissa bits then hold
	// that integer.
	expShift = 0x1.8p52
	// expLow and expHigh bound the arguments taken by the table path.
	expLow, expHigh = -707.0, 709.0
	// expBias is 1023·expN: added to the rounded k·expN + j before the
	// shift by expBits, it makes the biased binary exponent of 2^k.
	expBias = 1023 << expBits
)

// expTable holds 2^(j/expN), j in [0, expN), as a rounded value and its
// remainder, so that a product with it carries about 2⁻¹⁰⁶ relative error.
var expTable = newExpTable()

// The reduction constants: expN/ln 2, and ln 2/expN split into a head with
// the low 21 bits of its mantissa clear (so kd·head is exact for
// |kd| < 2²¹) and the rest.
var expInvLn2N, expLn2HiN, expLn2LoN = expReduction()

func expReduction() (inv, hi, lo float64) {
	const prec = 256
	ln2, _, err := big.ParseFloat("0.693147180559945309417232121458176568075500134360255254120680009493393621969694715605863326996418687542", 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	step := new(big.Float).SetPrec(prec).Quo(ln2, big.NewFloat(expN))
	s, _ := step.Float64()
	hi = math.Float64frombits(math.Float64bits(s) &^ (1<<21 - 1))
	lo, _ = new(big.Float).SetPrec(prec).Sub(step, big.NewFloat(hi)).Float64()
	inv, _ = new(big.Float).SetPrec(prec).Quo(big.NewFloat(expN), ln2).Float64()
	return inv, hi, lo
}

func newExpTable() (t [expN][2]float64) {
	const prec = 256
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range expBits { // 2^(1/expN) by repeated square roots
		root.Sqrt(root)
	}
	p := new(big.Float).SetPrec(prec).SetInt64(1)
	for j := range t {
		hi, _ := p.Float64()
		lo, _ := new(big.Float).SetPrec(prec).Sub(p, big.NewFloat(hi)).Float64()
		t[j] = [2]float64{hi, lo}
		p.Mul(p, root)
	}
	return t
}

// exp is e^x by the table method (math.Exp outside (expLow, expHigh)).
// Explicit conversions keep every product rounded on its own: Go may
// otherwise fuse a multiply and an add on some platforms.
func exp(x float64) float64 {
	if !(x > expLow && x < expHigh) {
		return math.Exp(x)
	}
	z := float64(x*expInvLn2N) + expShift
	kd := z - expShift
	r := float64(x-float64(kd*expLn2HiN)) - float64(kd*expLn2LoN)
	q := float64(r*(1.0/120)) + 1.0/24
	q = float64(r*q) + 1.0/6
	q = float64(r*q) + 0.5
	p := r + float64(float64(r*r)*q)
	bits := math.Float64bits(z)
	t := &expTable[bits&(expN-1)]
	y := t[0] + (float64(t[0]*p) + t[1])
	// bits − 0x4338… is k·expN + j; (that + expBias) >> expBits is the
	// biased exponent of 2^k, correct modulo 2¹² (all that the shift into
	// place keeps) and in [1, 2046] over the range.
	scale := math.Float64frombits((bits + expBias) >> expBits << 52)
	return float64(y * scale)
}

// scaledExp sets x[i] = s·e^(a·x[i]) (each product rounded, as
// float64(s·exp(float64(a·x[i])))).
func scaledExp(x []float64, a, s float64) {
	for i := 0; i < len(x); {
		if haveVectorExp {
			i += expVec(x[i:], a, s)
			if i == len(x) {
				return
			}
		}
		// A group the vector loop stopped at (an argument outside the
		// table's range or the last few entries), or all of x.
		end := len(x)
		if haveVectorExp {
			end = min(i+expLanes, len(x))
		}
		for ; i < end; i++ {
			x[i] = s * exp(float64(a*x[i]))
		}
	}
}

// expLanes is the width of the vector loop's groups.
const expLanes = 4

// expVecConsts holds the vector loop's constants, each repeated in four
// lanes, in the order the assembly reads them (offsets 32·i).
var expVecConsts = func() (c [12][expLanes]uint64) {
	vals := []uint64{
		math.Float64bits(expInvLn2N), math.Float64bits(expShift),
		math.Float64bits(expLn2HiN), math.Float64bits(expLn2LoN),
		math.Float64bits(expLow), math.Float64bits(expHigh),
		math.Float64bits(1.0 / 120), math.Float64bits(1.0 / 24),
		math.Float64bits(1.0 / 6), math.Float64bits(0.5),
		expN - 1, expBias,
	}
	for i, v := range vals {
		for l := range c[i] {
			c[i][l] = v
		}
	}
	return c
}()
