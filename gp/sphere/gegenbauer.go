package sphere

import "math"

// Alpha is the Gegenbauer index α = (d−2)/2 of the sphere S^{d−1} ⊂ R^d.
func Alpha(d int) float64 { return float64(d-2) / 2 }

// Gegenbauer returns C_n^{(α)}(t) for α > 0 by the three-term recurrence
//
//	n C_n = 2t(n+α−1) C_{n−1} − (n+2α−2) C_{n−2},  C_0 = 1, C_1 = 2αt,
//
// which is stable for t ∈ [−1, 1], unlike the monomial expansion.
// It returns NaN for n < 0 or α ≤ 0 (C_n^{(0)} vanishes identically for
// n ≥ 1; use NormalizedGegenbauer, whose α → 0 limit is Chebyshev's T_n).
func Gegenbauer(n int, alpha, t float64) float64 {
	if n < 0 || !(alpha > 0) {
		return math.NaN()
	}
	c0, c1 := 1.0, 2*alpha*t
	if n == 0 {
		return c0
	}
	for k := 2; k <= n; k++ {
		fk := float64(k)
		c0, c1 = c1, (2*t*(fk+alpha-1)*c1-(fk+2*alpha-2)*c0)/fk
	}
	return c1
}

// GegenbauerDeriv returns d/dt C_n^{(α)}(t) = 2α C_{n−1}^{(α+1)}(t).
func GegenbauerDeriv(n int, alpha, t float64) float64 {
	if n == 0 {
		return 0
	}
	return 2 * alpha * Gegenbauer(n-1, alpha+1, t)
}

// LogGegenbauerAtOne returns log C_n^{(α)}(1) = log Γ(n+2α) − log n! −
// log Γ(2α), through log-Gamma so that it neither overflows nor loses
// digits at high degree or dimension.
func LogGegenbauerAtOne(n int, alpha float64) float64 {
	a, _ := math.Lgamma(float64(n) + 2*alpha)
	b, _ := math.Lgamma(float64(n) + 1)
	c, _ := math.Lgamma(2 * alpha)
	return a - b - c
}

// GegenbauerAtOne returns C_n^{(α)}(1) = Γ(n+2α)/(n! Γ(2α)).
func GegenbauerAtOne(n int, alpha float64) float64 {
	return math.Exp(LogGegenbauerAtOne(n, alpha))
}

// NormalizedGegenbauer fills r[0…n] with R_k(t) = C_k^{(α)}(t)/C_k^{(α)}(1)
// for α ≥ 0, so that R_k(1) = 1 and |R_k(t)| ≤ 1 on [−1, 1] (T_k when
// α = 0). The recurrence is the one above divided through by C_k(1):
//
//	R_k = 2t(k+α−1)/(k+2α−1) R_{k−1} − (k−1)/(k+2α−1) R_{k−2},  R_0 = 1, R_1 = t.
//
// Its coefficients are O(1) at every degree and dimension.
func NormalizedGegenbauer(r []float64, alpha, t float64) {
	if len(r) == 0 {
		return
	}
	r[0] = 1
	if len(r) == 1 {
		return
	}
	r[1] = t
	for k := 2; k < len(r); k++ {
		fk := float64(k)
		den := fk + 2*alpha - 1
		r[k] = (2*t*(fk+alpha-1)*r[k-1] - (fk-1)*r[k-2]) / den
	}
}

// NormalizedGegenbauerDeriv fills r with R_k(t) as NormalizedGegenbauer
// does and dr with dR_k/dt, by differentiating the recurrence.
func NormalizedGegenbauerDeriv(r, dr []float64, alpha, t float64) {
	NormalizedGegenbauer(r, alpha, t)
	if len(dr) == 0 {
		return
	}
	dr[0] = 0
	if len(dr) == 1 {
		return
	}
	dr[1] = 1
	for k := 2; k < len(dr); k++ {
		fk := float64(k)
		den := fk + 2*alpha - 1
		dr[k] = (2*(fk+alpha-1)*(r[k-1]+t*dr[k-1]) - (fk-1)*dr[k-2]) / den
	}
}

// SurfaceArea returns Ω_{d−1} = |S^{d−1}| = 2π^{d/2}/Γ(d/2), the area of
// the unit sphere in R^d (2 for d = 1, 2π for d = 2, 4π for d = 3).
func SurfaceArea(d int) float64 {
	return math.Exp(LogSurfaceArea(d))
}

// LogSurfaceArea returns log Ω_{d−1}.
func LogSurfaceArea(d int) float64 {
	g, _ := math.Lgamma(float64(d) / 2)
	return math.Ln2 + float64(d)/2*math.Log(math.Pi) - g
}

// LevelCount returns N(d, ℓ), the dimension of the space of degree-ℓ
// spherical harmonics on S^{d−1}:
//
//	N(d, ℓ) = binom(ℓ+d−1, d−1) − binom(ℓ+d−3, d−1)
//
// (1 for ℓ = 0, 2ℓ+1 for d = 3). It returns 0 for d < 2 or ℓ < 0 and
// math.MaxInt when the count does not fit in an int.
func LevelCount(d, l int) int {
	if d < 2 || l < 0 {
		return 0
	}
	if d == 2 {
		if l == 0 {
			return 1
		}
		return 2
	}
	a := binom(l+d-1, d-1)
	b := binom(l+d-3, d-1)
	if a == math.MaxInt {
		return math.MaxInt
	}
	return a - b
}

// CumulativeCount returns Σ_{ℓ=0}^{L} N(d, ℓ) = binom(L+d−1, d−1) +
// binom(L+d−2, d−1), the number of harmonics of levels 0…L
// (math.MaxInt on overflow, 0 for invalid arguments).
func CumulativeCount(d, maxLevel int) int {
	if d < 2 || maxLevel < 0 {
		return 0
	}
	total := 0
	for l := 0; l <= maxLevel; l++ {
		n := LevelCount(d, l)
		if n == math.MaxInt || total > math.MaxInt-n {
			return math.MaxInt
		}
		total += n
	}
	return total
}

// binom returns the binomial coefficient, exactly (each partial product
// c·(n−k+i)/i is an integer), or math.MaxInt on overflow; 0 if k < 0 or
// k > n.
func binom(n, k int) int {
	if k < 0 || n < 0 || k > n {
		return 0
	}
	if k > n-k {
		k = n - k
	}
	c := 1
	for i := 1; i <= k; i++ {
		f := n - k + i
		if c > math.MaxInt/f {
			return math.MaxInt
		}
		c = c * f / i
	}
	return c
}
