package likelihoods

import "math"

const (
	halfLog2Pi = 0.91893853320467274178 // ½ log 2π
	// tailCut is where logNormCDF switches from erfc to the asymptotic
	// series; erfc(−z/√2) is still far from underflow there.
	tailCut = -30.0
)

// NormCDF is the standard normal CDF Φ(z).
func NormCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// LogNormCDF is log Φ(z), accurate in both tails: erfc for moderate negative
// z, log1p for positive z, and the asymptotic Mills-ratio series below −30.
func LogNormCDF(z float64) float64 {
	switch {
	case z >= 0:
		return math.Log1p(-0.5 * math.Erfc(z/math.Sqrt2))
	case z > tailCut:
		return math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
	case math.IsInf(z, -1):
		return math.Inf(-1)
	}
	return -0.5*z*z - math.Log(-z) - halfLog2Pi + math.Log1p(millsSeries(z))
}

// millsSeries is Σ_{k≥1} (−1)ᵏ (2k−1)!!/z^{2k}, so that for z → −∞
// Φ(z) = φ(z)/(−z) · (1 + millsSeries(z)). At |z| ≥ 30 ten terms reach
// double precision.
func millsSeries(z float64) float64 {
	inv := 1 / (z * z)
	var s float64
	term := 1.0
	for k := 1; k <= 10; k++ {
		term *= -float64(2*k-1) * inv
		s += term
	}
	return s
}

// invMills is φ(z)/Φ(z), the derivative of log Φ(z).
func invMills(z float64) float64 {
	if z <= tailCut {
		return -z / (1 + millsSeries(z))
	}
	return math.Exp(-0.5*z*z - halfLog2Pi - LogNormCDF(z))
}

// logNormCDFDerivs returns log Φ(z) and its first two derivatives. The
// second, −r(z + r) with r = φ/Φ, is evaluated without cancellation in the
// far left tail, where z + r ≈ −1/z.
func logNormCDFDerivs(z float64) (h, d1, d2 float64) {
	h = LogNormCDF(z)
	if z <= tailCut {
		s := millsSeries(z)
		r := -z / (1 + s)
		return h, r, -r * z * s / (1 + s)
	}
	r := math.Exp(-0.5*z*z - halfLog2Pi - h)
	return h, r, -r * (z + r)
}
