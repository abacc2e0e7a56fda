package sphere

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
)

// Shape is a zonal shape function s: [−1, 1] → R, possibly depending on
// one hyperparameter θ (e.g. a lengthscale). It returns s(t) and ∂s/∂θ(t)
// (0 when there is no parameter).
type Shape func(t float64) (v, dtheta float64)

// Parity records which levels of a shape function vanish by symmetry:
// levels First, First+2, First+4, … are exactly zero; First = 0 means
// none. s(t) − c·t even (ReLU, softplus, arc-cosine order 1) gives
// First = 3; s − c odd (arc-cosine order 0) gives 2; s − (a + bt²) odd
// (arc-cosine order 2) gives 4.
type Parity struct{ First int }

// Zero reports whether level l vanishes by parity.
func (p Parity) Zero(l int) bool {
	return p.First > 0 && l >= p.First && (l-p.First)%2 == 0
}

// EvenPlusLinear is the parity of ReLU, softplus and arc-cosine order 1.
var EvenPlusLinear = Parity{First: 3}

// Quadrature nodes in θ ∈ [0, π]: composite Gauss–Legendre with panel
// edges at multiples of π/quadPanels, so θ = π/2 (t = 0, the kink of ReLU)
// is an edge. Integrating in θ removes the (1−t²)^{(d−3)/2} weight and the
// √(1−t²) endpoint singularity of the arc-cosine shape.
const (
	quadPanels = 16
	quadNodes  = 48
)

var (
	quadOnce  sync.Once
	quadTheta []float64
	quadW     []float64
)

func quadRule() ([]float64, []float64) {
	quadOnce.Do(func() {
		x := make([]float64, quadNodes)
		w := make([]float64, quadNodes)
		h := math.Pi / quadPanels
		for p := 0; p < quadPanels; p++ {
			quad.Legendre{}.FixedLocations(x, w, float64(p)*h, float64(p+1)*h)
			quadTheta = append(quadTheta, x...)
			quadW = append(quadW, w...)
		}
	})
	return quadTheta, quadW
}

// MaxQuadratureLevel is the highest level FunkHecke resolves: the
// composite rule integrates cos(ℓθ)·(smooth) exactly well below it.
const MaxQuadratureLevel = 200

// FunkHecke returns the coefficients λ_ℓ, ℓ = 0…maxLevel, of the zonal
// function s on S^{d−1} (the eigenvalues of its integral operator for the
// surface measure) and their derivatives with respect to the shape's
// parameter:
//
//	λ_ℓ = Ω_{d−2} ∫_0^π s(cos θ) R_ℓ(cos θ) sin^{d−2}θ dθ,
//
// with R_ℓ the normalised Gegenbauer polynomial (vish-spec §1.5, eq. 5).
// Levels that vanish by parity are set to exactly 0. The derivative is the
// same quadrature applied to ∂s/∂θ, so it is exact for the quadrature's
// value.
func FunkHecke(d, maxLevel int, s Shape, parity Parity) (lam, dlam []float64, err error) {
	if d < 2 {
		return nil, nil, fmt.Errorf("sphere: Funk–Hecke on S^{d−1} needs d ≥ 2, got %d", d)
	}
	if maxLevel < 0 || maxLevel > MaxQuadratureLevel {
		return nil, nil, fmt.Errorf("sphere: Funk–Hecke level %d outside 0…%d", maxLevel, MaxQuadratureLevel)
	}
	theta, wts := quadRule()
	alpha := Alpha(d)
	lam = make([]float64, maxLevel+1)
	dlam = make([]float64, maxLevel+1)
	r := make([]float64, maxLevel+1)
	for i, th := range theta {
		t := math.Cos(th)
		v, dv := s(t)
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(dv) || math.IsInf(dv, 0) {
			return nil, nil, fmt.Errorf("sphere: shape function is %v (derivative %v) at t = %v", v, dv, t)
		}
		w := wts[i] * math.Pow(math.Sin(th), float64(d-2))
		NormalizedGegenbauer(r, alpha, t)
		for l, rl := range r {
			lam[l] += w * v * rl
			dlam[l] += w * dv * rl
		}
	}
	c := SurfaceArea(d - 1)
	for l := range lam {
		if parity.Zero(l) {
			lam[l], dlam[l] = 0, 0
			continue
		}
		lam[l] *= c
		dlam[l] *= c
	}
	return lam, dlam, nil
}

// QuadratureFloor is the relative accuracy of FunkHecke: its error is
// absolute, about ε·max_ℓ|λ_ℓ| (cancellation in ∫ s R_ℓ), so a coefficient
// smaller than QuadratureFloor·max_ℓ|λ_ℓ| is rounding noise and may even
// come out negative.
const QuadratureFloor = 1e-13

// Accurate reports whether lam[l] (from FunkHecke) stands above the
// quadrature's noise floor; a level that vanishes by parity (exactly 0) is
// reported as not accurate either, since it cannot be used as a feature.
func Accurate(lam []float64, l int) bool {
	top := 0.0
	for _, v := range lam {
		top = math.Max(top, math.Abs(v))
	}
	return math.Abs(lam[l]) > QuadratureFloor*top
}

// MercerWeight returns N(d, ℓ)/Ω_{d−1}: s(t) = Σ_ℓ λ_ℓ MercerWeight(d,ℓ)
// R_ℓ(t) by the addition theorem, so s(1) = Σ_ℓ λ_ℓ N(d,ℓ)/Ω_{d−1}.
func MercerWeight(d, l int) float64 {
	return float64(LevelCount(d, l)) / SurfaceArea(d)
}
