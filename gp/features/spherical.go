package features

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/gp/sphere"
)

// SphericalHarmonics are the variational inducing spherical harmonics
// (VISH) of Dutordoir, Durrande & Hensman (2020): u_m = ⟨f, ρ^p φ_m⟩_H for
// an orthonormal basis φ_m of complete levels of spherical harmonics on the
// sphere of the bias-augmented inputs, with a zonal kernel
// k(x, x') = ρ^p ρ'^p s(x̂ᵀx̂') (kernels.ZonalBound). By the reproducing
// property and the Mercer expansion s = Σ_ℓ λ_ℓ Σ_k φ_{ℓk} φ_{ℓk},
//
//	Kuf[m, n] = ρ(x_n)^p φ_m(x̂_n),   Kuu = diag(1/λ_{ℓ(m)}),
//
// so Kuu is diagonal and never factorised (vish-spec §1.7). Levels whose
// coefficient vanishes (odd levels ≥ 3 of arc-cosine order 1) are left
// out: their Kuu entry would be infinite. Kuf depends on the kernel's
// weight and bias variances only (through x̂ and ρ), so with those fixed
// the collapsed bound precomputes ΦΦᵀ once (Phi).
type SphericalHarmonics struct {
	basis   *sphere.Basis
	levelOf []int // level of every feature
	maxL    int
	// scratch holds Phi's augmented inputs and radii (*[]float64) for the
	// next call: the precompute calls it on hundreds of chunks.
	scratch sync.Pool
}

// NewSphericalHarmonics returns the harmonics of the levels 0…maxLevel of
// S^{d−1} whose coefficient under a kernel with the given parity does not
// vanish.
func NewSphericalHarmonics(d, maxLevel int, parity sphere.Parity) (*SphericalHarmonics, error) {
	if d < 2 {
		return nil, fmt.Errorf("features: spherical harmonics: sphere dimension %d, want ≥ 2", d)
	}
	if maxLevel < 0 {
		return nil, fmt.Errorf("features: spherical harmonics: maximum level %d, want ≥ 0", maxLevel)
	}
	var levels []int
	for l := 0; l <= maxLevel; l++ {
		if !parity.Zero(l) {
			levels = append(levels, l)
		}
	}
	b, err := sphere.NewBasisLevels(d, levels)
	if err != nil {
		return nil, fmt.Errorf("features: spherical harmonics: %w", err)
	}
	return &SphericalHarmonics{basis: b, levelOf: b.LevelOf(), maxL: maxLevel}, nil
}

// NewSphericalHarmonicsFor sizes the basis for the bound zonal kernel k:
// its sphere dimension and the levels 0…maxLevel that do not vanish, and
// checks that every kept coefficient is positive and above the accuracy of
// its quadrature (a level too high for float64 is an error, not a silently
// wrong Kuu).
func NewSphericalHarmonicsFor(k kernels.ZonalBound, maxLevel int) (*SphericalHarmonics, error) {
	f, err := NewSphericalHarmonics(k.SphereDim(), maxLevel, k.Parity())
	if err != nil {
		return nil, err
	}
	if err := f.CheckKernel(k); err != nil {
		return nil, err
	}
	return f, nil
}

// CheckKernel reports whether k fits the features: same sphere dimension,
// and every used level with a positive coefficient that stands above the
// quadrature noise (sphere.Accurate).
func (f *SphericalHarmonics) CheckKernel(k kernels.ZonalBound) error {
	if k.SphereDim() != f.basis.Dim() {
		return fmt.Errorf("features: spherical harmonics on S^%d, kernel on S^%d", f.basis.Dim()-1, k.SphereDim()-1)
	}
	lam, err := k.Coefficients(f.maxL)
	if err != nil {
		return fmt.Errorf("features: spherical harmonics: %w", err)
	}
	v := mat.Col(nil, 0, lam.Value())
	for _, l := range f.basis.Levels() {
		if !(v[l] > 0) || !sphere.Accurate(v, l) {
			return fmt.Errorf("features: spherical harmonics: the kernel's coefficient of level %d is %.3g (level 0: %.3g), not a usable positive value in float64; use fewer levels (at most %d here)",
				l, v[l], v[0], lastAccurate(v))
		}
	}
	return nil
}

// UsableLevels is the largest L ≤ maxLevel such that NewSphericalHarmonicsFor
// accepts levels 0…L for k: every level up to L that does not vanish by
// k's parity has a positive coefficient above its quadrature's accuracy;
// -1 when not even level 0 has.
func UsableLevels(k kernels.ZonalBound, maxLevel int) (int, error) {
	lam, err := k.Coefficients(maxLevel)
	if err != nil {
		return 0, fmt.Errorf("features: spherical harmonics: %w", err)
	}
	v := mat.Col(nil, 0, lam.Value())
	parity := k.Parity()
	for l := 0; l <= maxLevel; l++ {
		if !parity.Zero(l) && (!(v[l] > 0) || !sphere.Accurate(v, l)) {
			return l - 1, nil
		}
	}
	return maxLevel, nil
}

func lastAccurate(v []float64) int {
	last := 0
	for l := range v {
		if v[l] > 0 && sphere.Accurate(v, l) {
			last = l
		} else if v[l] != 0 {
			break
		}
	}
	return last
}

func (f *SphericalHarmonics) Name() string { return "spherical-harmonics" }

// M is the number of features.
func (f *SphericalHarmonics) M() int { return f.basis.M() }

// Levels returns the levels used, ascending.
func (f *SphericalHarmonics) Levels() []int { return f.basis.Levels() }

// LevelOf returns the level of every feature.
func (f *SphericalHarmonics) LevelOf() []int { return append([]int(nil), f.levelOf...) }

// Basis is the orthonormal harmonic basis.
func (f *SphericalHarmonics) Basis() *sphere.Basis { return f.basis }

// Declare: the features have no parameters of their own.
func (f *SphericalHarmonics) Declare(*param.Set, string) error { return nil }

func (f *SphericalHarmonics) Bind(*param.Bound, string) Bound { return sphericalBound{f} }

// Phi returns Kuf = ρ^p Φ(x̂) (M×n) for the rows of x with the values of
// k's weight and bias variances, for precomputing ΦΦᵀ (safe for
// concurrent use). It writes Kuf into dst when dst is not nil (M×n, its
// contents arbitrary), as the statistics' inference.FeatureMap does.
func (f *SphericalHarmonics) Phi(dst *mat.Dense, k kernels.ZonalBound, x *mat.Dense) (*mat.Dense, error) {
	n, _ := x.Dims()
	if dst == nil {
		dst = mat.NewDense(f.basis.M(), n, nil)
	} else if r, c := dst.Dims(); r != f.basis.M() || c != n {
		return nil, fmt.Errorf("features: spherical harmonics: Kuf of %d inputs into a %d×%d matrix, want %d×%d", n, r, c, f.basis.M(), n)
	}
	d := k.SphereDim()
	buf, _ := f.scratch.Get().(*[]float64)
	if buf == nil || cap(*buf) < n*(d+1) {
		b := make([]float64, n*(d+1))
		buf = &b
	}
	defer f.scratch.Put(buf)
	xt := k.AugmentValue(mat.NewDense(n, d, (*buf)[:n*d]), x)
	rho := (*buf)[n*d : n*(d+1)]
	for i := 0; i < n; i++ {
		row := xt.RawRowView(i)
		r := math.Sqrt(dotRow(row, row))
		if !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("features: spherical harmonics: augmented input %d has norm %v; its direction is undefined", i, r)
		}
		rho[i] = r
		for j := range row {
			row[j] /= r
		}
	}
	p := k.RadialPower()
	for i, r := range rho {
		rho[i] = math.Pow(r, float64(p))
	}
	f.basis.EvalScaledInto(dst, xt, rho)
	return dst, nil
}

func dotRow(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

type sphericalBound struct{ f *SphericalHarmonics }

func (b sphericalBound) M() int { return b.f.M() }

func zonal(k kernels.Bound) kernels.ZonalBound {
	z, ok := k.(kernels.ZonalBound)
	if !ok {
		panic(fmt.Sprintf("features: spherical features need a zonal kernel (kernels.ZonalBound), got %T", k))
	}
	return z
}

// Precision is diag(Kuu⁻¹) = λ_{ℓ(m)}, M×1, differentiable in the kernel's
// variance and lengthscale.
func (b sphericalBound) Precision(k kernels.Bound) *ad.Node {
	lam, err := zonal(k).Coefficients(b.f.maxL)
	if err != nil {
		panic(err.Error())
	}
	return gatherRows(lam, b.f.levelOf)
}

// KuuStructure is the diagonal precision Λ = diag(λ_{ℓ(m)}) when the
// caller accepts it (every path does), else the diagonal 1/λ.
func (b sphericalBound) KuuStructure(k kernels.Bound, _ int, accept Forms) (KuuStructure, error) {
	switch {
	case accept&FormPrecision != 0:
		return KuuStructure{Precision: b.Precision(k)}, nil
	case accept&FormDiag != 0:
		return KuuStructure{Diag: b.KuuDiag(k)}, nil
	}
	return KuuStructure{Dense: b.Kuu(k)}, nil
}

// KuuDiag is 1/λ_{ℓ(m)}.
func (b sphericalBound) KuuDiag(k kernels.Bound) *ad.Node { return ad.Pow(b.Precision(k), -1) }

func (b sphericalBound) Kuu(k kernels.Bound) *ad.Node { return ad.DiagMat(b.KuuDiag(k)) }

// Kuf is ρ^p Φ(x̂), differentiable in x and the weight and bias variances
// (through the harmonics' gradient, sphere.Basis.Gradient).
func (b sphericalBound) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	zk := zonal(k)
	rho, xh, err := kernels.Radius(zk.Augment(x))
	if err != nil {
		panic(err.Error())
	}
	p := zk.RadialPower()
	if p == 0 {
		return harmonics(b.f.basis, xh)
	}
	scale := ad.Pow(rho, float64(p))
	if !xh.NeedsGrad() && !scale.NeedsGrad() {
		// A prediction's Kuf (fixed weight variances): no gradient, so
		// the scale is applied as Φ is written, bitwise Φ·diag(ρ^p) and
		// one pass over M×n less.
		return scaledHarmonics(b.f.basis, xh, scale)
	}
	return ad.MulRowVec(harmonics(b.f.basis, xh), ad.T(scale))
}

// scaledHarmonics records Φ(x̂)·diag(s) (M×n) for the rows of xh and the
// n×1 column s as a constant: neither may need a gradient.
func scaledHarmonics(basis *sphere.Basis, xh, s *ad.Node) *ad.Node {
	xv := xh.Value()
	n, d := xv.Dims()
	if d != basis.Dim() {
		panic(fmt.Sprintf("features: spherical harmonics: points have %d coordinates, the basis is on S^%d ⊂ R^%d", d, basis.Dim()-1, basis.Dim()))
	}
	t := xh.Tape()
	col := t.NewDenseNonZeroed(1, n).RawMatrix().Data
	for i := range col {
		col[i] = s.Value().At(i, 0)
	}
	phi := t.NewDenseNonZeroed(basis.M(), n) // EvalThenScaleInto sets every entry
	basis.EvalThenScaleInto(phi, xv, col)
	return t.Const(phi)
}

// seriesLevels is implemented by zonal kernels that are their Mercer series
// truncated at a finite number of levels (the spectral sphere-* kernels):
// SeriesLevels is that number, or 0 when the series does not end.
type seriesLevels interface{ SeriesLevels() int }

// TraceResidual is the collapsed bound's trace term without cancellation.
// With Kuu = diag(1/λ_{ℓ(m)}) and Kuf[m, n] = ρ_n^p φ_m(x̂_n), the
// addition theorem Σ_{m in level ℓ} φ_m(x̂)² = N(d,ℓ)/Ω_{d−1} gives
//
//	Q_nn = ρ_n^{2p} Σ_m λ_{ℓ(m)} φ_m(x̂_n)² = ρ_n^{2p} Σ_{ℓ∈F} λ_ℓ N(d,ℓ)/Ω_{d−1}
//
// for the set F of levels used, and a kernel that is its Mercer series
// truncated at T levels has k(x_n, x_n) = ρ_n^{2p} s(1) with
// s(1) = Σ_{ℓ<T} λ_ℓ N(d,ℓ)/Ω_{d−1}, so
//
//	tr(Kff − Qff) = (Σ_n ρ_n^{2p}) · Σ_{ℓ<T, ℓ∉F} λ_ℓ N(d,ℓ)/Ω_{d−1},
//
// a product of sums of positive terms, accurate to rounding relative to
// itself however large k(x, x) is. Σ_n ρ_n^{2p} = Σ_n k(x_n, x_n)/s(1)
// (kernels.DiagSum: cached while the weight and bias variances are
// fixed). A kernel whose series does not end (chordal, arc-cosine) has no
// finite sum of the levels left out: false.
func (b sphericalBound) TraceResidual(t *ad.Tape, k kernels.Bound, x *mat.Dense) (*ad.Node, bool) {
	zk, ok := k.(kernels.ZonalBound)
	if !ok || zk.SphereDim() != b.f.basis.Dim() {
		return nil, false
	}
	s, ok := k.(seriesLevels)
	if !ok || s.SeriesLevels() < 1 {
		return nil, false
	}
	levels := s.SeriesLevels()
	lam, err := zk.Coefficients(levels - 1)
	if err != nil {
		return nil, false
	}
	d := zk.SphereDim()
	left := mat.NewDense(levels, 1, nil) // N(d,ℓ)/Ω for the levels left out
	for l := 0; l < levels; l++ {
		left.Set(l, 0, sphere.MercerWeight(d, l))
	}
	for _, l := range b.f.basis.Levels() {
		if l < levels {
			left.Set(l, 0, 0)
		}
	}
	tail := ad.MatMulTA(t.Const(left), lam)
	radial := ad.DivScalar(kernels.DiagSum(t, k, x), zk.ShapeAtOne())
	return ad.Mul(radial, tail), true
}

// harmonics records Φ(x̂) (M×n) for the rows of xh on the tape.
func harmonics(basis *sphere.Basis, xh *ad.Node) *ad.Node {
	xv := xh.Value()
	n, d := xv.Dims()
	if d != basis.Dim() {
		panic(fmt.Sprintf("features: spherical harmonics: points have %d coordinates, the basis is on S^%d ⊂ R^%d", d, basis.Dim()-1, basis.Dim()))
	}
	// On the tape's arena: a tape reset between the chunks of a prediction
	// reuses Φ instead of leaving M×n of garbage per chunk.
	phi := xh.Tape().NewDenseNonZeroed(basis.M(), n) // EvalInto sets every entry
	basis.EvalInto(phi, xv)
	return ad.Custom(phi, func(g *mat.Dense) []*mat.Dense {
		if !xh.NeedsGrad() {
			return []*mat.Dense{nil}
		}
		gx, err := basis.Gradient(xv, g)
		if err != nil {
			panic(err.Error())
		}
		return []*mat.Dense{gx}
	}, xh)
}

// gatherRows returns v[idx[i]] (len(idx)×1) with the adjoint summed back.
func gatherRows(v *ad.Node, idx []int) *ad.Node {
	n, _ := v.Dims()
	out := mat.NewDense(len(idx), 1, nil)
	for i, j := range idx {
		out.Set(i, 0, v.Value().At(j, 0))
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gv := mat.NewDense(n, 1, nil)
		for i, j := range idx {
			gv.Set(j, 0, gv.At(j, 0)+g.At(i, 0))
		}
		return []*mat.Dense{gv}
	}, v)
}

var (
	_ DiagonalKuu   = sphericalBound{}
	_ StructuredKuu = sphericalBound{}
	_ TraceResidual = sphericalBound{}
)
