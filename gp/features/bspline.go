package features

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// NewBSplines returns the B-spline features of Cunningham et al. (2023,
// ASVGP) as the IFF paper uses them: per dimension, `bases` cubic (order 4)
// B-splines on a regular knot grid whose bases cover [a, b] (knot spacing
// δ = (b − a)/(bases − 3)), u_j = ⟨f, B_j⟩_H the Matérn RKHS inner product
// on [a, b]. Kuf = B_j(x) (four non-zeros per input, independent of the
// hyperparameters) and Kuu is banded (bandwidth 3 per dimension).
// Structures and kernels are as for NewVFF; 2-D tensor products use
// Kronecker with a Separable kernel. Masks are not supported.
func NewBSplines(k kernels.Kernel, intervals []Interval, bases int, s Structure) (*IntervalFeature, error) {
	if len(intervals) == 0 {
		return nil, fmt.Errorf("features: bspline: no intervals")
	}
	if bases < 4 {
		return nil, fmt.Errorf("features: bspline: %d bases per dimension, cubic B-splines need ≥ 4", bases)
	}
	orders, err := maternOrders("B-spline features", k, len(intervals), s)
	if err != nil {
		return nil, err
	}
	bs := make([]basis1D, len(intervals))
	for d, iv := range intervals {
		if err := iv.validate(); err != nil {
			return nil, fmt.Errorf("features: bspline: dimension %d: %w", d, err)
		}
		bs[d] = newSplineBasis(iv, bases, orders[d])
	}
	return newIntervalFeature("bspline", s, bs, orders, false)
}

// splineBasis holds the θ-independent pieces of the Matérn Gram matrix.
// With L = (D + λ)^p, p = ν + ½, the Matérn-ν RKHS inner product on [a, b]
// (the state-space view: driving-noise energy plus the stationary prior of
// the initial state s = (g, g′, …, g^{(p−1)}) at a) is
//
//	⟨g, h⟩ = κ_p/(λ^{2p−1}σ²) ∫_a^b (Lg)(Lh) dx + s_g(a)ᵀ P∞⁻¹ s_h(a),
//
// κ = ½, ¼, 3⁄16 and P∞_ij = σ² λ^{i+j} π_ij (π = 1; I; [1 0 −⅓; 0 ⅓ 0; −⅓ 0 1]).
// Expanding in powers of λ, Kuu = σ⁻² Σ_e λ^{1−e} T_e + σ⁻² Σ_e λ^{−e} B_e
// with constant banded T_e, B_e computed once.
type splineBasis struct {
	iv    Interval
	m     int
	delta float64
	t, bc []*mat.Dense // T_e (scaled by κ) and B_e, e = 0 … 2p
}

func newSplineBasis(iv Interval, m int, nu float64) *splineBasis {
	b := &splineBasis{iv: iv, m: m, delta: iv.Width() / float64(m-3)}
	p := int(nu + 0.5)
	kappa := map[int]float64{1: 0.5, 2: 0.25, 3: 3.0 / 16}[p]
	b.t = make([]*mat.Dense, 2*p+1)
	b.bc = make([]*mat.Dense, 2*p+1)
	for e := range b.t {
		b.t[e] = mat.NewDense(m, m, nil)
		b.bc[e] = mat.NewDense(m, m, nil)
	}
	// ∫ g^{(j)} h^{(k)} over each knot interval by 4-point Gauss–Legendre
	// (exact for the degree ≤ 6 products of cubics).
	gx, gw := gaussLegendre4()
	vals := make([][4]float64, p+1)
	for iv := 0; iv < m-3; iv++ {
		for q, u := range gx {
			w := gw[q] * b.delta
			for j := 0; j <= p; j++ {
				vals[j] = splineLocal(u, j, b.delta)
			}
			for j := 0; j <= p; j++ {
				for k := 0; k <= p; k++ {
					c := kappa * binom(p, j) * binom(p, k) * w
					te := b.t[j+k]
					for r := 0; r < 4; r++ {
						for s := 0; s < 4; s++ {
							te.Set(iv+r, iv+s, te.At(iv+r, iv+s)+c*vals[j][r]*vals[k][s])
						}
					}
				}
			}
		}
	}
	// Boundary: derivatives of the 4 bases that are non-zero at a (u = 0
	// of the first knot interval).
	pinv := stationaryStateInverse(p)
	for i := 0; i < p; i++ {
		si := splineLocal(0, i, b.delta)
		for j := 0; j < p; j++ {
			if pinv[i][j] == 0 {
				continue
			}
			sj := splineLocal(0, j, b.delta)
			be := b.bc[i+j]
			for r := 0; r < 4; r++ {
				for s := 0; s < 4; s++ {
					be.Set(r, s, be.At(r, s)+pinv[i][j]*si[r]*sj[s])
				}
			}
		}
	}
	return b
}

// stationaryStateInverse is π⁻¹ for the Matérn state (f, f′, f″).
func stationaryStateInverse(p int) [][]float64 {
	switch p {
	case 1:
		return [][]float64{{1}}
	case 2:
		return [][]float64{{1, 0}, {0, 1}}
	}
	// inverse of [1 0 −⅓; 0 ⅓ 0; −⅓ 0 1]
	return [][]float64{{9.0 / 8, 0, 3.0 / 8}, {0, 3, 0}, {3.0 / 8, 0, 9.0 / 8}}
}

// splineLocal returns the j-th x-derivative of the four cubic B-splines
// that are non-zero on a knot interval, at local coordinate u ∈ [0, 1],
// in order of increasing index (the first ends on this interval, the last
// starts on it).
func splineLocal(u float64, j int, delta float64) [4]float64 {
	var v [4]float64
	switch j {
	case 0:
		v = [4]float64{(1 - u) * (1 - u) * (1 - u) / 6, (3*u*u*u - 6*u*u + 4) / 6, (-3*u*u*u + 3*u*u + 3*u + 1) / 6, u * u * u / 6}
	case 1:
		v = [4]float64{-(1 - u) * (1 - u) / 2, (3*u*u - 4*u) / 2, (-3*u*u + 2*u + 1) / 2, u * u / 2}
	case 2:
		v = [4]float64{1 - u, 3*u - 2, 1 - 3*u, u}
	case 3:
		v = [4]float64{-1, 3, -3, 1}
	default:
		return v
	}
	s := math.Pow(delta, -float64(j))
	for i := range v {
		v[i] *= s
	}
	return v
}

func gaussLegendre4() (x, w [4]float64) {
	a := math.Sqrt(3.0/7 - 2.0/7*math.Sqrt(6.0/5))
	c := math.Sqrt(3.0/7 + 2.0/7*math.Sqrt(6.0/5))
	wa := (18 + math.Sqrt(30)) / 36
	wc := (18 - math.Sqrt(30)) / 36
	nodes := [4]float64{-c, -a, a, c}
	weights := [4]float64{wc, wa, wa, wc}
	for i := range nodes {
		x[i] = (nodes[i] + 1) / 2 // map to [0, 1]
		w[i] = weights[i] / 2
	}
	return x, w
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func (b *splineBasis) size() int          { return b.m }
func (b *splineBasis) interval() Interval { return b.iv }
func (b *splineBasis) freq(int) int       { return -1 }
func (b *splineBasis) maxFreq() int       { return -1 }

func (b *splineBasis) fill(x []float64, out *mat.Dense) {
	last := b.m - 4
	for n, v := range x {
		s := (v - b.iv.A) / b.delta
		i := min(max(int(math.Floor(s)), 0), last)
		vals := splineLocal(s-float64(i), 0, b.delta)
		for r := 0; r < 4; r++ {
			out.Set(i+r, n, vals[r])
		}
	}
}

// gram is Kuu = σ⁻² Σ_e (λ^{1−e} T_e + λ^{−e} B_e), λ = √(2ν)/ℓ.
func (b *splineBasis) gram(k kernels.SpectralBound, nu float64) *ad.Node {
	t := k.Variance().Tape()
	lam := ad.Scale(math.Sqrt(2*nu), ad.Pow(k.Lengthscales(), -1))
	inv := ad.Pow(k.Variance(), -1)
	var out *ad.Node
	add := func(m *mat.Dense, power float64) {
		term := ad.MulScalar(t.Const(m), ad.Mul(ad.Pow(lam, power), inv))
		if out == nil {
			out = term
		} else {
			out = ad.Add(out, term)
		}
	}
	for e := range b.t {
		add(b.t[e], float64(1-e))
		if e <= len(b.t)-3 {
			add(b.bc[e], float64(-e))
		}
	}
	return out
}
