package kernels

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"weak"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/gp/sphere"
)

// ZonalBound is implemented by bound kernels of the form
//
//	k(x, x') = ρ(x)^p ρ(x')^p s(x̂ᵀx̂'),   x̃ = (√w∘x, √b, …), ρ = ‖x̃‖, x̂ = x̃/ρ,
//
// a zonal kernel s on the sphere S^{d−1} carried to input space by the
// radius of the bias-augmented input (vish-spec §1.2): f(x) = ρ(x)^p g(x̂)
// with g ~ GP(0, s(x̂ᵀx̂')). Spherical inducing features (harmonics,
// activation units) need the pieces separately.
type ZonalBound interface {
	Bound
	// SphereDim is d, the dimension of the augmented input x̃.
	SphereDim() int
	// RadialPower is p (1 for the VISH map and arc-cosine order 1).
	RadialPower() int
	// Augment returns x̃ (N×d) for the rows of x (N×D), differentiable in
	// the weight and bias variances and in x.
	Augment(x *ad.Node) *ad.Node
	// AugmentValue is Augment on values only (no tape), safe for
	// concurrent use: for precomputing features over chunks of the data.
	// It writes x̃ into dst (N×d) and returns it; a nil dst gets a new
	// matrix.
	AugmentValue(dst, x *mat.Dense) *mat.Dense
	// Coefficients returns λ_ℓ, ℓ = 0…maxLevel ((maxLevel+1)×1), the
	// Funk–Hecke coefficients of s under the surface measure (package
	// sphere): s(t) = Σ_ℓ λ_ℓ N(d,ℓ)/Ω_{d−1} R_ℓ(t). Levels that vanish by
	// symmetry (Parity) are exact zeros.
	Coefficients(maxLevel int) (*ad.Node, error)
	// ShapeAtOne is s(1), 1×1 (k(x, x) = ρ(x)^{2p} s(1)).
	ShapeAtOne() *ad.Node
	// Parity says which levels vanish exactly.
	Parity() sphere.Parity
}

// zonalKinds are the zonal kernels New accepts besides the arc-cosine ones:
// the spectral route â_ℓ ∝ S(√(ℓ(ℓ+d−2))) (what the VISH experiments use)
// and the chordal route s(t) = f(√(2−2t)/ℓ) with Funk–Hecke coefficients
// (what the spherical-ODGP paper uses).
var zonalNames = []string{
	"sphere-matern12", "sphere-matern32", "sphere-matern52", "sphere-se",
	"chordal-matern12", "chordal-matern32", "chordal-matern52", "chordal-se",
}

// DefaultTruncation is the number of levels of the Mercer series that
// defines the spectral ("sphere-…") kernels, unless Options.Truncation
// says otherwise.
const DefaultTruncation = 64

// Zonal is a zonal kernel on the bias-augmented inputs with a linear
// radial factor, k(x, x') = ρρ' s(x̂ᵀx̂'); see ZonalBound and the package
// documentation. Parameters: variance σ² = s(1), one lengthscale, weight
// variances w (1 or D) and the bias variance b.
type Zonal struct {
	name       string
	prof       profile
	spectral   bool
	dim        int // D, before augmentation
	biasCols   int
	truncation int
	variance   float64
	ls         float64
	weights    []float64
	bias       float64
	diag       radialCache
}

func newZonal(name string, dim int, opts Options) (*Zonal, error) {
	k := &Zonal{name: name, dim: dim, biasCols: opts.BiasColumns, truncation: opts.Truncation}
	route, prof, _ := strings.Cut(name, "-")
	k.spectral = route == "sphere"
	k.prof = profile(prof)
	if k.biasCols == 0 {
		k.biasCols = 1
	}
	if k.biasCols < 1 || k.biasCols > 2 {
		return nil, fmt.Errorf("kernels: %s: bias columns %d, want 1 or 2", name, opts.BiasColumns)
	}
	if dim+k.biasCols < 2 {
		return nil, fmt.Errorf("kernels: %s: sphere dimension %d, want ≥ 2", name, dim+k.biasCols)
	}
	if k.truncation == 0 {
		k.truncation = DefaultTruncation
	}
	if k.truncation < 1 || k.truncation > sphere.MaxQuadratureLevel+1 {
		return nil, fmt.Errorf("kernels: %s: truncation %d levels, want 1…%d", name, opts.Truncation, sphere.MaxQuadratureLevel+1)
	}
	var err error
	if k.variance, err = positive("variance", opts.Variance, 1); err != nil {
		return nil, err
	}
	ls, err := perDim("lengthscales", opts.Lengthscales, 1, false)
	if err != nil {
		return nil, fmt.Errorf("%w (a zonal kernel has one lengthscale; per-dimension scales are the weight variances)", err)
	}
	k.ls = ls[0]
	if k.weights, err = perDim("weight variances", opts.WeightVariances, dim, opts.ARD); err != nil {
		return nil, err
	}
	if k.bias, err = positive("bias variance", opts.BiasVariance, 1); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Zonal) Name() string { return k.name }
func (k *Zonal) Dim() int     { return k.dim }

// SphereDim is d = D + bias columns.
func (k *Zonal) SphereDim() int { return k.dim + k.biasCols }

func (k *Zonal) Declare(s *param.Set, prefix string) error {
	if err := s.AddScalar(prefix+"variance", k.variance, param.DefaultPositive); err != nil {
		return err
	}
	if err := s.AddScalar(prefix+"lengthscales", k.ls, param.DefaultPositive); err != nil {
		return err
	}
	if err := s.Add(prefix+"weight_variances", row(k.weights), param.DefaultPositive); err != nil {
		return err
	}
	return s.AddScalar(prefix+"bias_variance", k.bias, param.DefaultPositive)
}

func (k *Zonal) Bind(b *param.Bound, prefix string) Bound {
	zb := &zonalBound{k: k, variance: b.Get(prefix + "variance"), ls: b.Get(prefix + "lengthscales"),
		w: b.Get(prefix + "weight_variances"), bias: b.Get(prefix + "bias_variance")}
	if r, c := zb.w.Dims(); r != 1 || (c != 1 && c != k.dim) {
		panic(fmt.Sprintf("kernels: %s: %sweight_variances is %d×%d, want 1×1 or 1×%d", k.name, prefix, r, c, k.dim))
	}
	return zb
}

type zonalBound struct {
	k                     *Zonal
	variance, ls, w, bias *ad.Node
}

func (b *zonalBound) SphereDim() int        { return b.k.SphereDim() }
func (b *zonalBound) RadialPower() int      { return 1 }
func (b *zonalBound) ShapeAtOne() *ad.Node  { return b.variance }
func (b *zonalBound) Parity() sphere.Parity { return sphere.Parity{} }
func (b *zonalBound) Variance() *ad.Node    { return b.variance }

// SeriesLevels is T for a spectral kernel, defined as its Mercer series
// truncated at T levels, s(t) = Σ_{ℓ<T} λ_ℓ N(d,ℓ)/Ω_{d−1} R_ℓ(t) with
// Coefficients(T−1) normalised to Σ_{ℓ<T} λ_ℓ N(d,ℓ)/Ω_{d−1} = s(1), so that
// a feature set can sum the levels it leaves out (features.TraceResidual);
// 0 for a chordal kernel, whose series does not end.
func (b *zonalBound) SeriesLevels() int {
	if b.k.spectral {
		return b.k.truncation
	}
	return 0
}

func (b *zonalBound) Augment(x *ad.Node) *ad.Node {
	checkInputs(b.k.name, b.k.dim, x)
	return augment(x, b.w, b.bias, b.k.dim, b.k.biasCols)
}

// DiagSum is Σ_n k(x_n, x_n) = s(1) Σ_n ρ_n² (kernels.DiagSummer): with
// the weight and bias variances fixed Σρ² is a constant and only s(1) is
// on the tape; otherwise it is the sum of Diag, differentiable in them.
func (b *zonalBound) DiagSum(x *mat.Dense) *ad.Node {
	if b.w.NeedsGrad() || b.bias.NeedsGrad() {
		return ad.Sum(b.Diag(b.variance.Tape().Const(x)))
	}
	return b.k.diag.radialDiagSum(x, b.w, b.bias, b.k.dim, b.k.biasCols, 1, b.ShapeAtOne())
}

// radialCache remembers Σ_n ‖x̃_n‖^{2p} for the last inputs and weight and
// bias variances it was asked about, so that the collapsed bound's trace
// term costs O(1) per step, not O(N·D) (the inputs are the training set,
// fixed for a fit; a different matrix or parameter value recomputes). It
// knows the inputs by a weak pointer: a fitted kernel does not keep
// millions of training rows alive after the fit.
type radialCache struct {
	mu   sync.Mutex
	x    weak.Pointer[mat.Dense]
	w    []float64
	bias float64
	sum  float64
}

// radialDiagSum is s(1)·Σ_n ‖x̃_n‖^{2p} for x̃ = augment(x).
func (c *radialCache) radialDiagSum(x *mat.Dense, w, bias *ad.Node, dim, biasCols, p int, s1 *ad.Node) *ad.Node {
	wv, bv := expand(w, dim), bias.Scalar()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x != weak.Make(x) || c.bias != bv || !equalFloats(c.w, wv) {
		// Row by row: x̃ of millions of training rows is never needed whole.
		n, _ := x.Dims()
		sw, sb := sqrtAll(wv), math.Sqrt(bv)
		row := make([]float64, dim+biasCols)
		s := 0.0
		for i := 0; i < n; i++ {
			augmentRow(row, x.RawRowView(i), sw, sb)
			r2 := 0.0
			for _, v := range row {
				r2 += v * v
			}
			s += math.Pow(r2, float64(p))
		}
		c.x, c.w, c.bias, c.sum = weak.Make(x), wv, bv, s
	}
	return ad.Scale(c.sum, s1)
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (b *zonalBound) AugmentValue(dst, x *mat.Dense) *mat.Dense {
	return augmentValue(dst, x, b.w, b.bias, b.k.dim, b.k.biasCols)
}

// augmentValue writes x̃ = (√w∘x, √b over biasCols columns) into out (a
// new matrix if nil) and returns it.
func augmentValue(out, x *mat.Dense, w, bias *ad.Node, dim, biasCols int) *mat.Dense {
	n, c := x.Dims()
	if c != dim {
		panic(fmt.Sprintf("kernels: inputs have %d columns, kernel has %d", c, dim))
	}
	if out == nil {
		out = mat.NewDense(n, dim+biasCols, nil)
	} else if r, oc := out.Dims(); r != n || oc != dim+biasCols {
		panic(fmt.Sprintf("kernels: augmented inputs into a %d×%d matrix, want %d×%d", r, oc, n, dim+biasCols))
	}
	sw := sqrtAll(expand(w, dim))
	sb := math.Sqrt(bias.Scalar())
	for i := 0; i < n; i++ {
		augmentRow(out.RawRowView(i), x.RawRowView(i), sw, sb)
	}
	return out
}

// augmentRow writes the augmented row (√w∘src, then sb in every further
// column of dst).
func augmentRow(dst, src, sw []float64, sb float64) {
	for j, v := range src {
		dst[j] = sw[j] * v
	}
	for j := len(src); j < len(dst); j++ {
		dst[j] = sb
	}
}

// augment returns x̃ = (√w∘x, √b repeated over biasCols columns).
func augment(x, w, bias *ad.Node, dim, biasCols int) *ad.Node {
	n, _ := x.Dims()
	xs := ad.MulRowVec(x, ad.Sqrt(broadcastRow(w, dim)))
	ones := x.Tape().NewDenseNonZeroed(n, biasCols) // reused by a reset tape
	for i := range ones.RawMatrix().Data {
		ones.RawMatrix().Data[i] = 1
	}
	return ad.HCat(xs, ad.MulScalar(x.Tape().Const(ones), ad.Sqrt(bias)))
}

// Radius returns ρ = ‖x̃‖ (N×1) of augmented inputs and the unit
// directions x̂ = x̃/ρ (N×d). A zero radius is an error: the direction is
// undefined (it cannot happen with a positive bias variance).
func Radius(xt *ad.Node) (rho, dir *ad.Node, err error) {
	rho = ad.Sqrt(ad.RowSums(ad.Square(xt)))
	rv := rho.Value()
	for i := range rv.RawMatrix().Rows {
		if v := rv.At(i, 0); !(v > 0) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("kernels: augmented input %d has norm %v; its direction on the sphere is undefined (is the bias variance zero?)", i, v)
		}
	}
	return rho, ad.MulColVec(xt, ad.Pow(rho, -1)), nil
}

// Cosines returns T = x̂ẑᵀ of unit directions (rows), clipped to
// [−1, 1], with near-parallel pairs recomputed from their chord; see
// cosines.
func Cosines(xh, zh *ad.Node) *ad.Node { return cosines(xh, zh) }

// cosines returns T = x̂ẑᵀ clipped to [−1, 1]. Near t = 1 the product
// loses the chord: 1 − t is recomputed as ½‖x̂ − ẑ‖², which is accurate
// to relative rounding (kernels with a kink at r = 0, like Matérn-½, need
// it). The value changes by rounding only, so the gradient is the
// product's.
func cosines(xh, zh *ad.Node) *ad.Node {
	t := ad.MatMulTB(xh, zh)
	v := mat.DenseCopyOf(t.Value())
	changed := false
	xv, zv := xh.Value(), zh.Value()
	r, _ := v.Dims()
	for i := 0; i < r; i++ {
		row := v.RawRowView(i)
		for j, x := range row {
			if x <= 1-1e-6 && x >= -1 {
				continue
			}
			if x > 1-1e-6 {
				a, b := xv.RawRowView(i), zv.RawRowView(j)
				d2 := 0.0
				for k := range a {
					d2 += (a[k] - b[k]) * (a[k] - b[k])
				}
				row[j] = 1 - d2/2
			}
			row[j] = math.Max(-1, math.Min(1, row[j]))
			changed = true
		}
	}
	if !changed {
		return t
	}
	return ad.Custom(v, func(g *mat.Dense) []*mat.Dense { return []*mat.Dense{g} }, t)
}

func (b *zonalBound) K(x, z *ad.Node) *ad.Node {
	checkInputs(b.k.name, b.k.dim, x, z)
	rx, xh, err := Radius(b.Augment(x))
	if err != nil {
		panic(err.Error())
	}
	rz, zh, err := Radius(b.Augment(z))
	if err != nil {
		panic(err.Error())
	}
	s := b.shape(cosines(xh, zh))
	return ad.MulRowVec(ad.MulColVec(s, rx), ad.T(rz))
}

func (b *zonalBound) Diag(x *ad.Node) *ad.Node {
	checkInputs(b.k.name, b.k.dim, x)
	return ad.MulScalar(ad.RowSums(ad.Square(b.Augment(x))), b.variance)
}

// shape evaluates s elementwise on the cosines t.
func (b *zonalBound) shape(t *ad.Node) *ad.Node {
	if b.k.spectral {
		lam, err := b.Coefficients(b.k.truncation - 1)
		if err != nil {
			panic(err.Error())
		}
		return ZonalSeries(t, lam, b.k.SphereDim())
	}
	return ad.MulScalar(chordalShape(b.k.prof, t, b.ls), b.variance)
}

// Coefficients: spectral kernels normalise S(√(ℓ(ℓ+d−2))) so that the
// truncated series has s(1) = σ²; chordal kernels integrate s by
// Funk–Hecke quadrature.
func (b *zonalBound) Coefficients(maxLevel int) (*ad.Node, error) {
	d := b.k.SphereDim()
	if maxLevel < 0 {
		return nil, fmt.Errorf("kernels: %s: coefficients up to level %d", b.k.name, maxLevel)
	}
	if b.k.spectral {
		if maxLevel >= b.k.truncation {
			return nil, fmt.Errorf("kernels: %s: level %d requested, but the kernel is the Mercer series truncated at %d levels (raise the truncation)", b.k.name, maxLevel, b.k.truncation)
		}
		return ad.MulScalar(spectralCoefficients(b.k.prof, d, b.k.truncation, maxLevel, b.ls), b.variance), nil
	}
	if maxLevel > sphere.MaxQuadratureLevel {
		return nil, fmt.Errorf("kernels: %s: level %d above the quadrature's %d", b.k.name, maxLevel, sphere.MaxQuadratureLevel)
	}
	ls := b.ls.Scalar()
	prof := b.k.prof
	lam, dlam, err := sphere.FunkHecke(d, maxLevel, func(t float64) (float64, float64) {
		v, ds := chordalEval(prof, t, ls)
		return v, ds
	}, sphere.Parity{})
	if err != nil {
		return nil, fmt.Errorf("kernels: %s: %w", b.k.name, err)
	}
	node := ad.Custom(mat.NewDense(maxLevel+1, 1, lam), func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{mat.NewDense(1, 1, []float64{dotAll(g, mat.NewDense(maxLevel+1, 1, dlam))})}
	}, b.ls)
	return ad.MulScalar(node, b.variance), nil
}

// chordalEval returns f(r) with r² = (2−2t)/ℓ² and its derivatives with
// respect to ℓ (second value) and t (third).
func chordalEval(p profile, t, ls float64) (v, dls float64) {
	v, dls, _ = chordalEvalT(p, t, ls)
	return v, dls
}

// eval returns f(r²) of the unit-variance stationary profile and df/d(r²),
// through the profile's vectorised value and scaleGrad on a single entry.
func (p profile) eval(r2 float64) (f, d float64) {
	k, g := []float64{r2}, []float64{0}
	p.value(k, 1)
	p.scaleGrad(g, []float64{1}, k, []float64{r2})
	return k[0], g[0]
}

func chordalEvalT(p profile, t, ls float64) (v, dls, dt float64) {
	r2 := math.Max(2-2*t, 0) / (ls * ls)
	f, df := p.eval(r2)
	return f, df * (-2 * r2 / ls), df * (-2 / (ls * ls))
}

// chordalShape is f(√(2−2t)/ℓ) elementwise, differentiable in t and ℓ.
func chordalShape(p profile, t, ls *ad.Node) *ad.Node {
	tv := t.Value()
	r, c := tv.Dims()
	l := ls.Scalar()
	out := mat.NewDense(r, c, nil)
	dl := mat.NewDense(r, c, nil)
	dt := mat.NewDense(r, c, nil)
	o, gl, gt, tr := out.RawMatrix().Data, dl.RawMatrix().Data, dt.RawMatrix().Data, tv.RawMatrix()
	for i := 0; i < r; i++ {
		for j, x := range tr.Data[i*tr.Stride : i*tr.Stride+c] {
			o[i*c+j], gl[i*c+j], gt[i*c+j] = chordalEvalT(p, x, l)
		}
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		var gT, gL *mat.Dense
		if t.NeedsGrad() {
			gT = elemProd(g, dt)
		}
		if ls.NeedsGrad() {
			gL = mat.NewDense(1, 1, []float64{dotAll(g, dl)})
		}
		return []*mat.Dense{gT, gL}
	}, t, ls)
}

// spectralCoefficients returns λ_ℓ/σ² for ℓ ≤ maxLevel: g_ℓ = S(√e_ℓ),
// e_ℓ = ℓ(ℓ+d−2), with the Matérn-ν or SE density on R^{d−1} (D_S = d−1,
// vish-spec §6.6) of lengthscale κ,
//
//	Matérn: g_ℓ ∝ (2ν/κ² + e_ℓ)^{−(ν+(d−1)/2)},   SE: g_ℓ ∝ exp(−κ² e_ℓ/2),
//
// normalised by Z = Σ_{j<T} g_j N(d,j)/Ω_{d−1} so that the series
// truncated at T levels has s(1) = 1. Constant factors cancel in the
// normalisation; logs keep high levels and dimensions from underflowing.
func spectralCoefficients(p profile, d, trunc, maxLevel int, kappa *ad.Node) *ad.Node {
	k := kappa.Scalar()
	lg := make([]float64, trunc)  // log g_ℓ
	dlg := make([]float64, trunc) // d log g_ℓ / dκ
	nu := p.nu()
	for l := range lg {
		e := float64(l * (l + d - 2))
		if p == se {
			lg[l], dlg[l] = -k*k*e/2, -k*e
			continue
		}
		a := nu + float64(d-1)/2
		base := 2*nu/(k*k) + e
		lg[l] = -a * math.Log(base)
		dlg[l] = a * 4 * nu / (k * k * k) / base
	}
	top := lg[0]
	var z, dz float64
	for l := range lg {
		w := math.Exp(lg[l]-top) * sphere.MercerWeight(d, l)
		z += w
		dz += w * dlg[l]
	}
	mean := dz / z // d log Z / dκ
	lam := make([]float64, maxLevel+1)
	dlam := make([]float64, maxLevel+1)
	for l := range lam {
		lam[l] = math.Exp(lg[l]-top) / z
		dlam[l] = lam[l] * (dlg[l] - mean)
	}
	return ad.Custom(mat.NewDense(maxLevel+1, 1, lam), func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{mat.NewDense(1, 1, []float64{dotAll(g, mat.NewDense(maxLevel+1, 1, dlam))})}
	}, kappa)
}

// SphereSpectralDensity is the Euclidean spectral density the spectral
// route evaluates at √(ℓ(ℓ+d−2)), in the VISH authors' form (GPML eq. 4.15
// with 4π²s² replaced by s², D_S = d−1, unit variance): for Matérn-ν
//
//	S(s) = 2^{D_S} π^{D_S/2} Γ(ν+D_S/2) (2ν)^ν / (Γ(ν) κ^{2ν}) (2ν/κ² + s²)^{−(ν+D_S/2)},
//
// and for SE (ν = 0) S(s) = (2π)^{D_S/2} κ^{D_S} exp(−s²κ²/2). The zonal
// kernels use it only up to normalisation; it is exported for comparison
// with the authors' unnormalised eigenvalues (vish-spec §1.13).
func SphereSpectralDensity(nu float64, d int, kappa, s float64) float64 {
	ds := float64(d - 1)
	if nu == 0 {
		return math.Pow(2*math.Pi, ds/2) * math.Pow(kappa, ds) * math.Exp(-s*s*kappa*kappa/2)
	}
	lg1, _ := math.Lgamma(nu + ds/2)
	lg2, _ := math.Lgamma(nu)
	logc := ds*math.Ln2 + ds/2*math.Log(math.Pi) + lg1 - lg2 + nu*math.Log(2*nu) - 2*nu*math.Log(kappa)
	return math.Exp(logc - (nu+ds/2)*math.Log(2*nu/(kappa*kappa)+s*s))
}

// ZonalSeries evaluates Σ_ℓ c_ℓ N(d,ℓ)/Ω_{d−1} R_ℓ(t) elementwise on the
// cosines t (any shape) for coefficients c ((L+1)×1), differentiable in
// both: the zonal function with Funk–Hecke coefficients c (a truncated
// Mercer series, an activation unit, or an activation Gram matrix).
func ZonalSeries(t, c *ad.Node, d int) *ad.Node {
	tv := t.Value()
	rows, cols := tv.Dims()
	nl, _ := c.Dims()
	w := make([]float64, nl)
	for l := range w {
		w[l] = c.Value().At(l, 0) * sphere.MercerWeight(d, l)
	}
	alpha := sphere.Alpha(d)
	out := mat.NewDense(rows, cols, nil)
	needT, needC := t.NeedsGrad(), c.NeedsGrad()
	var dt *mat.Dense
	if needT {
		dt = mat.NewDense(rows, cols, nil)
	}
	parallelRows(rows, cols*nl, func(r0, r1 int) {
		r, dr := make([]float64, nl), make([]float64, nl)
		for i := r0; i < r1; i++ {
			for j := 0; j < cols; j++ {
				x := tv.At(i, j)
				if needT {
					sphere.NormalizedGegenbauerDeriv(r, dr, alpha, x)
				} else {
					sphere.NormalizedGegenbauer(r, alpha, x)
				}
				var s, ds float64
				for l := range w {
					s += w[l] * r[l]
					if needT {
						ds += w[l] * dr[l]
					}
				}
				out.Set(i, j, s)
				if needT {
					dt.Set(i, j, ds)
				}
			}
		}
	})
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		var gT, gC *mat.Dense
		if needT {
			gT = elemProd(g, dt)
		}
		if needC {
			// ∂/∂c_ℓ = N/Ω Σ g R_ℓ(t); fixed order over rows.
			acc := make([]float64, nl)
			r := make([]float64, nl)
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					gv := g.At(i, j)
					if gv == 0 {
						continue
					}
					sphere.NormalizedGegenbauer(r, alpha, tv.At(i, j))
					for l := range acc {
						acc[l] += gv * r[l]
					}
				}
			}
			for l := range acc {
				acc[l] *= sphere.MercerWeight(d, l)
			}
			gC = mat.NewDense(nl, 1, acc)
		}
		return []*mat.Dense{gT, gC}
	}, t, c)
}
