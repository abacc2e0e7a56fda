package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/sphere"
)

// The arc-cosine kernel of order n is zonal with radial power n:
// k = ρⁿρ'ⁿ s_n(t), s_n(t) = σ² J_n(arccos t)/π. Its Funk–Hecke
// coefficients vanish exactly on one parity class above a low level:
// s_1 − σ²t/2 is even (odd levels ≥ 3 vanish), s_0 − σ²/2 is odd (even
// levels ≥ 2 vanish) and s_2 − σ²(1+2t²)/2 is odd (even levels ≥ 4).

var arcCosineParity = [3]sphere.Parity{{First: 2}, {First: 3}, {First: 4}}

func (b *arcCosineBound) SphereDim() int        { return b.k.dim + 1 }
func (b *arcCosineBound) RadialPower() int      { return b.k.order }
func (b *arcCosineBound) Parity() sphere.Parity { return arcCosineParity[b.k.order] }

// ShapeAtOne is s_n(1) = σ² J_n(0)/π.
func (b *arcCosineBound) ShapeAtOne() *ad.Node {
	return ad.Scale(diagFactor[b.k.order], b.variance)
}

func (b *arcCosineBound) Augment(x *ad.Node) *ad.Node {
	checkInputs(b.k.Name(), b.k.dim, x)
	return augment(x, b.w, b.bias, b.k.dim, 1)
}

func (b *arcCosineBound) AugmentValue(dst, x *mat.Dense) *mat.Dense {
	return augmentValue(dst, x, b.w, b.bias, b.k.dim, 1)
}

// DiagSum is Σ_n k(x_n, x_n) = s(1) Σ_n ρ_n^{2n} (kernels.DiagSummer).
func (b *arcCosineBound) DiagSum(x *mat.Dense) *ad.Node {
	if b.w.NeedsGrad() || b.bias.NeedsGrad() {
		return ad.Sum(b.Diag(b.variance.Tape().Const(x)))
	}
	return b.k.diag.radialDiagSum(x, b.w, b.bias, b.k.dim, 1, b.k.order, b.ShapeAtOne())
}

// ArcCosineShape returns s_n(t)/σ² = J_n(arccos t)/π.
func ArcCosineShape(order int, t float64) float64 {
	t = math.Max(-1, math.Min(1, t))
	th := math.Acos(t)
	j, _ := angular(order, th, t, math.Sqrt(1-t*t))
	return j / math.Pi
}

func (b *arcCosineBound) Coefficients(maxLevel int) (*ad.Node, error) {
	if maxLevel < 0 || maxLevel > sphere.MaxQuadratureLevel {
		return nil, fmt.Errorf("kernels: %s: coefficients up to level %d, want 0…%d", b.k.Name(), maxLevel, sphere.MaxQuadratureLevel)
	}
	order := b.k.order
	lam, _, err := sphere.FunkHecke(b.SphereDim(), maxLevel, func(t float64) (float64, float64) {
		return ArcCosineShape(order, t), 0
	}, b.Parity())
	if err != nil {
		return nil, fmt.Errorf("kernels: %s: %w", b.k.Name(), err)
	}
	return ad.MulScalar(b.variance.Tape().Const(mat.NewDense(maxLevel+1, 1, lam)), b.variance), nil
}
