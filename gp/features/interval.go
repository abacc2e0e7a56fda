package features

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Interval is the closed interval [A, B] on which a one-dimensional basis
// (Fourier harmonics, B-splines) is defined.
type Interval struct{ A, B float64 }

// Width is B − A.
func (iv Interval) Width() float64 { return iv.B - iv.A }

func (iv Interval) validate() error {
	if math.IsNaN(iv.A) || math.IsNaN(iv.B) || math.IsInf(iv.A, 0) || math.IsInf(iv.B, 0) || !(iv.B > iv.A) {
		return fmt.Errorf("interval [%v, %v] must be finite with a < b", iv.A, iv.B)
	}
	return nil
}

// PaddedIntervals returns, per column of x, [min − margin, max + margin]:
// the IFF paper's choice (margin 0.1) for VFF and B-splines. A column with
// zero range and zero margin gets a margin of 0.5 so the interval is not
// empty.
func PaddedIntervals(x *mat.Dense, margin float64) ([]Interval, error) {
	if x == nil {
		return nil, errors.New("features: intervals of nil inputs")
	}
	if margin < 0 || math.IsNaN(margin) || math.IsInf(margin, 0) {
		return nil, fmt.Errorf("features: interval margin %v, want finite and ≥ 0", margin)
	}
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("features: intervals of empty inputs")
	}
	out := make([]Interval, d)
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			v := x.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("features: input [%d,%d] = %v is not finite", i, j, v)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		m := margin
		if hi == lo && m == 0 {
			m = 0.5
		}
		out[j] = Interval{lo - m, hi + m}
	}
	return out, nil
}

// Structure says how per-dimension bases combine into one feature set.
type Structure int

const (
	// Additive: f = Σ_d f_d(x_d), one 1-D feature set per dimension; Kuu is
	// block diagonal and Kuf stacks the per-dimension bases (needs an
	// additive kernel).
	Additive Structure = iota
	// Kronecker: f has a separable product kernel Π_d k_d(x_d, x_d'); the
	// features are products of per-dimension basis functions, Kuu = ⊗_d Kuu_d
	// and Kuf is the row-wise Khatri–Rao product of the per-dimension Kuf
	// (needs a Separable kernel, or a 1-D kernel).
	Kronecker
)

func (s Structure) String() string {
	if s == Kronecker {
		return "kronecker"
	}
	return "additive"
}

// factoredBasis is a basis whose Gram matrix has a square root cheaper
// than a dense Cholesky: whiten returns x ↦ L⁻¹x with gram = LLᵀ.
type factoredBasis interface {
	whiten(k kernels.SpectralBound, nu float64) func(*ad.Node) *ad.Node
}

// basis1D is a θ-independent one-dimensional basis with a closed-form RKHS
// Gram matrix for a Matérn kernel.
type basis1D interface {
	size() int
	interval() Interval
	// fill writes basis function i at x[n] into out[i, n]; x is inside the
	// interval (checked by the caller).
	fill(x []float64, out *mat.Dense)
	// gram is the RKHS Gram matrix Kuu for the 1-D Matérn kernel k of
	// order nu (0.5, 1.5, 2.5).
	gram(k kernels.SpectralBound, nu float64) *ad.Node
	// freq is the frequency index of basis function i, used by the
	// spherical mask of a Kronecker grid (−1 if the basis has none).
	freq(i int) int
	maxFreq() int
}

// IntervalFeature is a set of inter-domain features built from 1-D bases on
// a box Π_d [a_d, b_d] whose Kuf is a fixed basis Φ(x) (independent of the
// hyperparameters for inputs inside the box) and whose Kuu is the
// structured RKHS Gram matrix of a Matérn kernel: VFF (NewVFF) and B-spline
// features (NewBSplines). Inputs outside the box are an error.
type IntervalFeature struct {
	name      string
	structure Structure
	bases     []basis1D
	orders    []float64 // Matérn ν per dimension
	keep      []int     // Kronecker mask: kept rows of the full grid (nil = all)
	m         int
}

// Name returns "vff" or "bspline" with the structure, e.g. "vff(additive)".
func (f *IntervalFeature) Name() string { return f.name + "(" + f.structure.String() + ")" }

// Structure reports how the dimensions combine.
func (f *IntervalFeature) Structure() Structure { return f.structure }

// M is the number of features.
func (f *IntervalFeature) M() int { return f.m }

// Dim is the input dimension.
func (f *IntervalFeature) Dim() int { return len(f.bases) }

// Intervals returns the box, one interval per input dimension.
func (f *IntervalFeature) Intervals() []Interval {
	out := make([]Interval, len(f.bases))
	for d, b := range f.bases {
		out[d] = b.interval()
	}
	return out
}

// Declare registers nothing: the box and the basis are fixed.
func (f *IntervalFeature) Declare(*param.Set, string) error { return nil }

// Bind returns the feature for evaluation with a bound kernel.
func (f *IntervalFeature) Bind(*param.Bound, string) Bound { return boundInterval{f} }

// maternOrders checks that kernel k fits the structure and returns the
// Matérn order of each dimension's kernel.
func maternOrders(what string, k kernels.Kernel, dim int, s Structure) ([]float64, error) {
	supported := what + " supports the Matérn kernels matern12, matern32 and matern52 (1-D, additive(…) or separable(…) of them)"
	order := func(k kernels.Kernel) (float64, error) {
		mk, ok := k.(kernels.Matern)
		if !ok {
			return 0, fmt.Errorf("features: kernel %s: %s", k.Name(), supported)
		}
		if mk.Dim() != 1 {
			return 0, fmt.Errorf("features: kernel %s on %d dimensions: %s must be 1-D", k.Name(), mk.Dim(), what)
		}
		if nu, ok := mk.MaternOrder(); ok {
			return nu, nil
		}
		return 0, fmt.Errorf("features: kernel %s: %s", k.Name(), supported)
	}
	if k == nil {
		return nil, errors.New("features: " + what + ": kernel is nil")
	}
	var parts []kernels.Kernel
	switch kk := k.(type) {
	case *kernels.AdditiveKernel:
		if s != Additive {
			return nil, fmt.Errorf("features: %s with %s structure needs a separable product kernel, got %s", what, s, k.Name())
		}
		parts = kk.Parts()
	case *Separable:
		if s != Kronecker {
			return nil, fmt.Errorf("features: %s with %s structure needs an additive kernel, got %s", what, s, k.Name())
		}
		parts = kk.Parts()
	default:
		if dim != 1 {
			return nil, fmt.Errorf("features: kernel %s on %d input dimensions: %s needs additive(…) (additive structure) or separable(…) (Kronecker structure)", k.Name(), dim, what)
		}
		parts = []kernels.Kernel{k}
	}
	if len(parts) != dim {
		return nil, fmt.Errorf("features: kernel %s has %d components for %d intervals", k.Name(), len(parts), dim)
	}
	out := make([]float64, dim)
	for d, p := range parts {
		nu, err := order(p)
		if err != nil {
			return nil, err
		}
		out[d] = nu
	}
	return out, nil
}

// newIntervalFeature assembles the feature and its Kronecker mask.
func newIntervalFeature(name string, s Structure, bases []basis1D, orders []float64, mask bool) (*IntervalFeature, error) {
	f := &IntervalFeature{name: name, structure: s, bases: bases, orders: orders}
	switch s {
	case Additive:
		if mask {
			return nil, fmt.Errorf("features: %s: a frequency mask applies to the Kronecker structure only", name)
		}
		for _, b := range bases {
			f.m += b.size()
		}
	case Kronecker:
		f.m = 1
		for _, b := range bases {
			f.m *= b.size()
		}
		if mask {
			keep, err := sphericalMask(bases)
			if err != nil {
				return nil, fmt.Errorf("features: %s: %w", name, err)
			}
			f.keep = keep
			f.m = len(keep)
		}
	default:
		return nil, fmt.Errorf("features: %s: unknown structure %d", name, s)
	}
	return f, nil
}

// sphericalMask keeps the grid points whose frequency indices lie in the
// ellipsoid Σ_d (m_d / max_d)² ≤ 1: a hyperparameter-free sphere in index
// space, as the IFF paper's code does for its "refined" VFF grid. Only the
// points inside are visited (maskedGrid), so the cost is the kept count,
// not the full grid's.
func sphericalMask(bases []basis1D) ([]int, error) {
	sizes, maxFreq := make([]int, len(bases)), make([]int, len(bases))
	for d, b := range bases {
		if b.maxFreq() < 0 {
			return nil, errors.New("the basis has no frequencies to mask")
		}
		sizes[d], maxFreq[d] = b.size(), b.maxFreq()
	}
	var keep []int
	maskedGrid(sizes, maskTerm(func(d, i int) int { return bases[d].freq(i) }, maxFreq), maskLimit, func(idx []int) bool {
		flat := 0
		for d, i := range idx {
			flat = flat*sizes[d] + i
		}
		keep = append(keep, flat)
		return true
	})
	return keep, nil
}

// CheckInputs reports the first input outside the box, with how to widen
// it; nil means Phi and Kuf accept x.
func (f *IntervalFeature) CheckInputs(x *mat.Dense) error { return f.checkInside(x) }

func (f *IntervalFeature) checkInside(x *mat.Dense) error {
	n, d := x.Dims()
	if d != len(f.bases) {
		return fmt.Errorf("features: %s: inputs have %d columns, the feature has %d dimensions", f.Name(), d, len(f.bases))
	}
	for j, b := range f.bases {
		iv := b.interval()
		for i := 0; i < n; i++ {
			v := x.At(i, j)
			if math.IsNaN(v) {
				return fmt.Errorf("features: %s: input [%d,%d] is NaN; remove or impute it", f.Name(), i, j)
			}
			if !(v >= iv.A && v <= iv.B) {
				return fmt.Errorf("features: %s: input [%d,%d] = %v lies outside the interval [%v, %v] of dimension %d; "+
					"widen the interval (method parameters interval_margin, or interval_lower/interval_upper) so that it covers all training and test inputs",
					f.Name(), i, j, v, iv.A, iv.B, j)
			}
		}
	}
	return nil
}

// Phi is Kuf = Φ(x), M×n, for inputs inside the box. It does not depend on
// the hyperparameters and is safe for concurrent use (inference.Allocating
// of it is the FeatureMap of the precomputed statistics).
func (f *IntervalFeature) Phi(x *mat.Dense) (*mat.Dense, error) {
	if x == nil {
		return nil, fmt.Errorf("features: %s: inputs are nil", f.Name())
	}
	if err := f.checkInside(x); err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	per := make([]*mat.Dense, len(f.bases))
	col := make([]float64, n)
	for d, b := range f.bases {
		mat.Col(col, d, x)
		per[d] = mat.NewDense(b.size(), n, nil)
		b.fill(col, per[d])
	}
	if f.structure == Additive {
		out := mat.NewDense(f.m, n, nil)
		r := 0
		for _, p := range per {
			rows, _ := p.Dims()
			out.Slice(r, r+rows, 0, n).(*mat.Dense).Copy(p)
			r += rows
		}
		return out, nil
	}
	// Row-wise Khatri–Rao product, last dimension fastest (the row order of
	// ⊗_d Kuu_d), restricted to the mask.
	rows := f.keep
	if rows == nil {
		rows = make([]int, f.m)
		for i := range rows {
			rows[i] = i
		}
	}
	out := mat.NewDense(len(rows), n, nil)
	idx := make([]int, len(f.bases))
	for r, flat := range rows {
		rem := flat
		for d := len(f.bases) - 1; d >= 0; d-- {
			idx[d] = rem % f.bases[d].size()
			rem /= f.bases[d].size()
		}
		dst := out.RawRowView(r)
		copy(dst, per[0].RawRowView(idx[0]))
		for d := 1; d < len(f.bases); d++ {
			src := per[d].RawRowView(idx[d])
			for i := range dst {
				dst[i] *= src[i]
			}
		}
	}
	return out, nil
}

// partBounds returns the bound 1-D Matérn kernel of each dimension.
func (f *IntervalFeature) partBounds(k kernels.Bound) []kernels.SpectralBound {
	var parts []kernels.Bound
	if p, ok := k.(interface{ Parts() []kernels.Bound }); ok {
		parts = p.Parts()
	} else {
		parts = []kernels.Bound{k}
	}
	if len(parts) != len(f.bases) {
		panic(fmt.Sprintf("features: %s: kernel has %d components for %d dimensions", f.Name(), len(parts), len(f.bases)))
	}
	out := make([]kernels.SpectralBound, len(parts))
	for d, p := range parts {
		sb, ok := p.(kernels.SpectralBound)
		if !ok {
			panic(fmt.Sprintf("features: %s: kernel component %d (%T) is not a Matérn kernel", f.Name(), d, p))
		}
		if r, c := sb.Lengthscales().Dims(); r != 1 || c != 1 {
			panic(fmt.Sprintf("features: %s: kernel component %d has %d×%d lengthscales, want a 1-D kernel", f.Name(), d, r, c))
		}
		out[d] = sb
	}
	return out
}

// Grams returns the per-dimension Gram matrices Kuu_d.
func (f *IntervalFeature) Grams(k kernels.Bound) []*ad.Node {
	parts := f.partBounds(k)
	out := make([]*ad.Node, len(parts))
	for d, p := range parts {
		out[d] = f.bases[d].gram(p, f.orders[d])
	}
	return out
}

// Kuu assembles the full M×M Gram matrix from the per-dimension blocks:
// block diagonal (additive) or a Kronecker product restricted to the mask.
func (f *IntervalFeature) Kuu(k kernels.Bound) *ad.Node {
	g := f.Grams(k)
	if f.structure == Additive {
		return BlockDiag(g...)
	}
	out := g[0]
	for _, b := range g[1:] {
		out = Kron(out, b)
	}
	if f.keep != nil {
		out = SelectSym(out, f.keep)
	}
	return out
}

type boundInterval struct{ f *IntervalFeature }

func (b boundInterval) M() int                       { return b.f.m }
func (b boundInterval) Kuu(k kernels.Bound) *ad.Node { return b.f.Kuu(k) }
func (b boundInterval) Name() string                 { return b.f.Name() }

// KuuStructure is the structured square root of Whitener.
func (b boundInterval) KuuStructure(k kernels.Bound, maxTries int, accept Forms) (KuuStructure, error) {
	if accept&FormRoot == 0 {
		return KuuStructure{Dense: b.f.Kuu(k)}, nil
	}
	w, err := b.f.Whitener(k, maxTries)
	if err != nil {
		return KuuStructure{}, err
	}
	return KuuStructure{Whiten: w}, nil
}

// CheckInputs accepts finite inputs of the feature's dimension: Kuf is
// defined beyond the box by the edge formulas (interval_kuf.go). The
// feature's own CheckInputs is the stricter box check methods use.
func (b boundInterval) CheckInputs(x *mat.Dense) error {
	if _, d := x.Dims(); d != len(b.f.bases) {
		return fmt.Errorf("features: %s: inputs have %d columns, the feature has %d dimensions", b.f.Name(), d, len(b.f.bases))
	}
	return nil
}

// Kuf is the constant Φ(x) for constant inputs inside the box, and
// otherwise the differentiable kufNode (inputs that need a gradient, or lie
// outside the box where Kuf depends on the lengthscales).
func (b boundInterval) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	if !x.NeedsGrad() && b.f.checkInside(x.Value()) == nil {
		phi, err := b.f.Phi(x.Value())
		if err != nil {
			panic(err)
		}
		return x.Tape().Const(phi)
	}
	return b.f.kufNode(k, x)
}

var _ StructuredKuu = boundInterval{}

// BlockDiag returns the block-diagonal matrix of square or rectangular
// blocks.
func BlockDiag(blocks ...*ad.Node) *ad.Node {
	if len(blocks) == 0 {
		panic("features: BlockDiag of no blocks")
	}
	if len(blocks) == 1 {
		return blocks[0]
	}
	rows, cols := 0, 0
	for _, b := range blocks {
		r, c := b.Dims()
		rows, cols = rows+r, cols+c
	}
	out := mat.NewDense(rows, cols, nil)
	r0, c0 := 0, 0
	for _, b := range blocks {
		r, c := b.Dims()
		out.Slice(r0, r0+r, c0, c0+c).(*mat.Dense).Copy(b.Value())
		r0, c0 = r0+r, c0+c
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gs := make([]*mat.Dense, len(blocks))
		r0, c0 := 0, 0
		for i, b := range blocks {
			r, c := b.Dims()
			if b.NeedsGrad() {
				gs[i] = mat.DenseCopyOf(g.Slice(r0, r0+r, c0, c0+c))
			}
			r0, c0 = r0+r, c0+c
		}
		return gs
	}, blocks...)
}

// Kron is the Kronecker product a ⊗ b: entry (i·p + k, j·q + l) is
// a_ij b_kl for a m×n and b p×q.
func Kron(a, b *ad.Node) *ad.Node {
	m, n := a.Dims()
	p, q := b.Dims()
	av, bv := a.Value(), b.Value()
	out := mat.NewDense(m*p, n*q, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			blk := out.Slice(i*p, (i+1)*p, j*q, (j+1)*q).(*mat.Dense)
			blk.Scale(av.At(i, j), bv)
		}
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.NeedsGrad() {
			ga = mat.NewDense(m, n, nil)
		}
		if b.NeedsGrad() {
			gb = mat.NewDense(p, q, nil)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				blk := g.Slice(i*p, (i+1)*p, j*q, (j+1)*q)
				if ga != nil {
					ga.Set(i, j, mat.Sum(elem(blk, bv)))
				}
				if gb != nil {
					t := mat.DenseCopyOf(blk)
					t.Scale(av.At(i, j), t)
					gb.Add(gb, t)
				}
			}
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

func elem(a mat.Matrix, b *mat.Dense) *mat.Dense {
	r, c := a.Dims()
	o := mat.NewDense(r, c, nil)
	o.MulElem(a, b)
	return o
}

// SelectSym returns the principal submatrix a[idx, idx] (idx increasing).
func SelectSym(a *ad.Node, idx []int) *ad.Node {
	r, c := a.Dims()
	if !sort.IntsAreSorted(idx) || len(idx) == 0 || idx[len(idx)-1] >= r || idx[0] < 0 {
		panic(fmt.Sprintf("features: SelectSym of %d indices from a %d×%d matrix", len(idx), r, c))
	}
	av := a.Value()
	k := len(idx)
	out := mat.NewDense(k, k, nil)
	for i, ii := range idx {
		row := out.RawRowView(i)
		for j, jj := range idx {
			row[j] = av.At(ii, jj)
		}
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		ga := mat.NewDense(r, c, nil)
		for i, ii := range idx {
			for j, jj := range idx {
				ga.Set(ii, jj, g.At(i, j))
			}
		}
		return []*mat.Dense{ga}
	}, a)
}

// Whitener returns b ↦ L⁻¹b for a square root Kuu = LLᵀ computed through
// the structure: per-dimension factors L_d of the blocks (additive:
// L = blockdiag_d L_d) or of the Kronecker factors (L = ⊗_d L_d, applied
// by mode products in O(M Σ_d M_d) per column instead of O(M²)). Each L_d
// is the structured diagonal-plus-low-rank square root of the VFF cos/sin
// blocks (O(M_d) per column, no factorisation; not triangular) or, for
// B-splines, the Cholesky factor of the banded Gram (dense, with
// ad.CholeskyJitter and maxTries). A masked Kronecker grid has no such
// structure and falls back to a dense Cholesky of the masked Kuu. L
// differs from the Cholesky factor of Kuu by an orthogonal factor, which
// the collapsed bound and its posterior do not see (they depend on LLᵀ).
func (f *IntervalFeature) Whitener(k kernels.Bound, maxTries int) (func(*ad.Node) *ad.Node, error) {
	if f.structure == Kronecker && f.keep != nil {
		l, _, err := ad.CholeskyJitter(f.Kuu(k), maxTries)
		if err != nil {
			return nil, fmt.Errorf("features: %s: Kuu: %w", f.Name(), err)
		}
		return func(b *ad.Node) *ad.Node { return ad.SolveLower(l, b) }, nil
	}
	parts := f.partBounds(k)
	ws := make([]func(*ad.Node) *ad.Node, len(parts))
	sizes := make([]int, len(parts))
	for d, p := range parts {
		sizes[d] = f.bases[d].size()
		if fb, ok := f.bases[d].(factoredBasis); ok {
			ws[d] = fb.whiten(p, f.orders[d])
			continue
		}
		l, _, err := ad.CholeskyJitter(f.bases[d].gram(p, f.orders[d]), maxTries)
		if err != nil {
			return nil, fmt.Errorf("features: %s: Kuu of dimension %d: %w", f.Name(), d, err)
		}
		ws[d] = func(b *ad.Node) *ad.Node { return ad.SolveLower(l, b) }
	}
	if len(ws) == 1 {
		return ws[0], nil
	}
	if f.structure == Additive {
		return func(b *ad.Node) *ad.Node {
			_, c := b.Dims()
			out := make([]*ad.Node, len(ws))
			r := 0
			for d, w := range ws {
				out[d] = w(ad.Slice(b, r, r+sizes[d], 0, c))
				r += sizes[d]
			}
			return ad.VCat(out...)
		}, nil
	}
	// Kronecker: (⊗_d L_d)⁻¹ = ⊗_d L_d⁻¹, with each small L_d⁻¹ formed
	// explicitly and applied by mode products.
	inv := make([]*ad.Node, len(ws))
	tape := parts[0].Variance().Tape()
	for d, w := range ws {
		m := sizes[d]
		id := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			id.Set(i, i, 1)
		}
		inv[d] = w(tape.Const(id))
	}
	return func(b *ad.Node) *ad.Node {
		for d, a := range inv {
			b = ModeProduct(a, b, sizes, d)
		}
		return b
	}, nil
}

// ModeProduct multiplies mode d of x by a: the rows of x (M×C) index a
// grid of shape sizes (M = Π sizes, last dimension fastest), and
// y[…, i_d, …, c] = Σ_j a[i_d, j] x[…, j, …, c]. Applying it for every d
// computes (⊗_d A_d) x without forming the Kronecker product.
func ModeProduct(a, x *ad.Node, sizes []int, d int) *ad.Node {
	m, c := x.Dims()
	md := sizes[d]
	if ar, ac := a.Dims(); ar != md || ac != md {
		panic(fmt.Sprintf("features: ModeProduct: factor is %d×%d, mode %d has size %d", ar, ac, d, md))
	}
	pre, total := 1, 1
	for e, s := range sizes {
		total *= s
		if e < d {
			pre *= s
		}
	}
	if total != m {
		panic(fmt.Sprintf("features: ModeProduct: %d rows for a grid of %d points", m, total))
	}
	post := m / (pre * md) * c
	xv := contiguous(x.Value())
	out := mat.NewDense(m, c, nil)
	od := out.RawMatrix().Data
	av := a.Value()
	block := func(data []float64, p int) *mat.Dense {
		return mat.NewDense(md, post, data[p*md*post:(p+1)*md*post])
	}
	for p := 0; p < pre; p++ {
		block(od, p).Mul(av, block(xv, p))
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gv := contiguous(g)
		var ga, gx *mat.Dense
		if a.NeedsGrad() {
			ga = mat.NewDense(md, md, nil)
			var t mat.Dense
			for p := 0; p < pre; p++ {
				t.Mul(block(gv, p), block(xv, p).T())
				ga.Add(ga, &t)
			}
		}
		if x.NeedsGrad() {
			gx = mat.NewDense(m, c, nil)
			gd := gx.RawMatrix().Data
			for p := 0; p < pre; p++ {
				block(gd, p).Mul(av.T(), block(gv, p))
			}
		}
		return []*mat.Dense{ga, gx}
	}, a, x)
}

// contiguous returns the row-major data of a without padding.
func contiguous(a *mat.Dense) []float64 {
	raw := a.RawMatrix()
	if raw.Stride == raw.Cols {
		return raw.Data[:raw.Rows*raw.Cols]
	}
	return mat.DenseCopyOf(a).RawMatrix().Data
}
