package inference

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
)

// DefaultJitter is the jitter GPflow adds to Kuu before factorising it.
const DefaultJitter = 1e-6

// DefaultMaxTries is the number of jitter escalations tried when a
// factorisation fails.
const DefaultMaxTries = 5

// Options control the numerics of every objective.
type Options struct {
	// Jitter is added to the diagonal of Kuu (or K + σ²I) before it is
	// factorised. Zero adds nothing.
	Jitter float64
	// MaxTries is passed to ad.CholeskyJitter, which escalates the jitter
	// when the factorisation fails; 0 means DefaultMaxTries.
	MaxTries int
}

func (o Options) validate() error {
	if o.Jitter < 0 || math.IsNaN(o.Jitter) || math.IsInf(o.Jitter, 0) {
		return fmt.Errorf("inference: jitter must be finite and non-negative, got %v", o.Jitter)
	}
	if o.MaxTries < 0 {
		return fmt.Errorf("inference: max tries must be non-negative, got %d", o.MaxTries)
	}
	return nil
}

func (o Options) maxTries() int {
	if o.MaxTries == 0 {
		return DefaultMaxTries
	}
	return o.MaxTries
}

// Info reports numerical facts about one evaluation.
type Info struct {
	// Jitter is the total value added to the diagonal of the factorised
	// prior matrix (Options.Jitter plus any escalation).
	Jitter float64
	// OrthJitter is the same for S_vv, the prior of the orthogonal
	// variables of a decoupled model (0 when it is not factorised).
	OrthJitter float64
}

// sqrtFactor is a square root K = LLᵀ on the tape that can only whiten:
// enough for every quantity that depends on L through L⁻¹ applied to
// something and on LLᵀ otherwise (the whitened SVGP ELBO and posterior).
// L need not be triangular.
type sqrtFactor interface {
	size() int
	solveL(b *ad.Node) *ad.Node // L⁻¹ b
	jitter() float64
}

// factor is a factorisation K = LLᵀ with L lower triangular, on the tape.
// Dense matrices use a Cholesky factor; diagonal ones use √diag, so that
// structured features never pay for a dense factorisation.
type factor interface {
	sqrtFactor
	solveLT(b *ad.Node) *ad.Node // L⁻ᵀ b
	logDet() *ad.Node            // log|K|, 1×1
	lower() *mat.Dense           // value of L (dense, lower triangular)
}

// factorKuu factorises Kuu of the bound feature, using its diagonal when the
// feature advertises one.
func factorKuu(k kernels.Bound, f features.Bound, opt Options) (factor, error) {
	if w, ok := f.(whitenedBound); ok {
		f = w.Bound // the whitener cannot give L⁻ᵀ or log|Kuu|
	}
	if d, ok := f.(features.DiagonalKuu); ok {
		return newDiagFactor("Kuu", d.KuuDiag(k), opt)
	}
	return newDenseFactor("Kuu", f.Kuu(k), opt)
}

// WhitenerFunc returns b ↦ L⁻¹b (b is M×C) for a square root Kuu = LLᵀ of
// the bound kernel k, recorded on k's tape so that gradients flow through
// it. L need not be triangular. maxTries bounds the jitter escalations of
// any small Cholesky factorisation inside it.
// (*features.IntervalFeature).Whitener is one.
type WhitenerFunc func(k kernels.Bound, maxTries int) (func(*ad.Node) *ad.Node, error)

// KuuWhitener is implemented by bound features whose Kuu has a square root
// cheaper than a dense Cholesky factor (block-diagonal, Kronecker,
// diagonal-plus-low-rank blocks). The whitened SVGP objectives (SVGP, KL,
// SVGPMarginals and SVGPPosterior with Variational.Whiten) use it instead
// of factorising Kuu: they need L only through L⁻¹Kuf and LLᵀ, so any
// square root gives the same ELBO for the same q(u), and the KL term
// against N(0, I) needs no factor at all. The non-whitened
// parameterisation needs L⁻ᵀ and log|Kuu| as well, which a whitening map
// does not give, so it still factorises Kuu (densely, or by its diagonal).
//
// Options.Jitter is not added to Kuu before a structured whitener (there is
// nothing to factorise; the structure supplies its own exact square root),
// and Info.Jitter is then 0.
type KuuWhitener interface {
	features.Bound
	Whitener(k kernels.Bound, maxTries int) (func(*ad.Node) *ad.Node, error)
}

// WithWhitener returns f with w attached as its KuuWhitener, leaving Kuu
// and Kuf as they are. It lets a caller hand a feature's structured square
// root (e.g. features.IntervalFeature.Whitener) to the SVGP path without
// the feature package knowing about inference. The non-whitened path sees
// through the wrapper to f (and so still uses f's diagonal Kuu if it has
// one).
func WithWhitener(f features.Bound, w WhitenerFunc) features.Bound {
	return whitenedBound{Bound: f, w: w}
}

type whitenedBound struct {
	features.Bound
	w WhitenerFunc
}

func (b whitenedBound) Whitener(k kernels.Bound, maxTries int) (func(*ad.Node) *ad.Node, error) {
	if b.w == nil {
		return nil, errors.New("inference: WithWhitener: nil whitener")
	}
	return b.w(k, maxTries)
}

// sqrtKuu returns the square root of Kuu the whitened objectives use: the
// feature's own structured one when it implements KuuWhitener and
// whitened is set, otherwise factorKuu's.
func sqrtKuu(k kernels.Bound, f features.Bound, whitened bool, opt Options) (sqrtFactor, error) {
	if sw, ok := f.(KuuWhitener); ok && whitened {
		w, err := sw.Whitener(k, opt.maxTries())
		if err != nil {
			return nil, fmt.Errorf("inference: structured square root of Kuu: %w", err)
		}
		if w == nil {
			return nil, errors.New("inference: structured square root of Kuu: feature returned a nil whitener")
		}
		return structFactor{m: f.M(), w: w}, nil
	}
	return factorKuu(k, f, opt)
}

// structFactor whitens through a caller's map b ↦ L⁻¹b.
type structFactor struct {
	m int
	w func(*ad.Node) *ad.Node
}

func (f structFactor) size() int       { return f.m }
func (f structFactor) jitter() float64 { return 0 }
func (f structFactor) solveL(b *ad.Node) *ad.Node {
	return f.w(b)
}

// checkWhitened reports a whitener that changed the shape of its input.
func checkWhitened(a, b *ad.Node) error {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		return fmt.Errorf("inference: whitening Kuu's square root maps %d×%d to %d×%d, want the same shape", br, bc, ar, ac)
	}
	return nil
}

type denseFactor struct {
	l   *ad.Node
	jit float64
}

func newDenseFactor(name string, a *ad.Node, opt Options) (*denseFactor, error) {
	r, c := a.Dims()
	if r != c {
		return nil, fmt.Errorf("inference: %s is %d×%d, not square", name, r, c)
	}
	if err := checkFinite(name, a.Value()); err != nil {
		return nil, err
	}
	if opt.Jitter > 0 {
		a = ad.AddDiag(a, a.Tape().Scalar(opt.Jitter))
	}
	l, extra, err := ad.CholeskyJitter(a, opt.maxTries())
	if err != nil {
		return nil, fmt.Errorf("inference: %s (%d×%d) not positive definite after jitter %g and %d escalations: %w",
			name, r, c, opt.Jitter, opt.maxTries(), err)
	}
	return &denseFactor{l: l, jit: opt.Jitter + extra}, nil
}

func (f *denseFactor) size() int                   { r, _ := f.l.Dims(); return r }
func (f *denseFactor) solveL(b *ad.Node) *ad.Node  { return ad.SolveLower(f.l, b) }
func (f *denseFactor) solveLT(b *ad.Node) *ad.Node { return ad.SolveLowerT(f.l, b) }
func (f *denseFactor) logDet() *ad.Node            { return ad.LogDetChol(f.l) }
func (f *denseFactor) lower() *mat.Dense           { return lowerOf(f.l.Value()) }
func (f *denseFactor) jitter() float64             { return f.jit }

type diagFactor struct {
	d, invSqrt *ad.Node // M×1
	jit        float64
}

func newDiagFactor(name string, d *ad.Node, opt Options) (*diagFactor, error) {
	r, c := d.Dims()
	if c != 1 || r == 0 {
		return nil, fmt.Errorf("inference: diagonal of %s is %d×%d, want M×1", name, r, c)
	}
	if opt.Jitter > 0 {
		d = ad.AddConst(d, opt.Jitter)
	}
	for i := 0; i < r; i++ {
		if v := d.Value().At(i, 0); !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("inference: %s (%d×%d, diagonal) not positive definite: entry %d is %v", name, r, r, i, v)
		}
	}
	return &diagFactor{d: d, invSqrt: ad.Pow(d, -0.5), jit: opt.Jitter}, nil
}

func (f *diagFactor) size() int                   { r, _ := f.d.Dims(); return r }
func (f *diagFactor) solveL(b *ad.Node) *ad.Node  { return ad.MulColVec(b, f.invSqrt) }
func (f *diagFactor) solveLT(b *ad.Node) *ad.Node { return ad.MulColVec(b, f.invSqrt) }
func (f *diagFactor) logDet() *ad.Node            { return ad.Sum(ad.Log(f.d)) }
func (f *diagFactor) jitter() float64             { return f.jit }
func (f *diagFactor) lower() *mat.Dense {
	m := f.size()
	l := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		l.Set(i, i, math.Sqrt(f.d.Value().At(i, 0)))
	}
	return l
}

// lowerOf copies the lower triangle of a (the upper one may hold garbage
// in some factorisation routines).
func lowerOf(a *mat.Dense) *mat.Dense {
	n, _ := a.Dims()
	l := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l.Set(i, j, a.At(i, j))
		}
	}
	return l
}

func checkFinite(name string, a *mat.Dense) error {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for j, v := range a.RawRowView(i)[:c] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("inference: %s (%d×%d) has non-finite entry [%d,%d] = %v", name, r, c, i, j, v)
			}
		}
	}
	return nil
}

var errEmpty = errors.New("inference: no observations")

// column returns y as an N×1 matrix.
func column(y []float64) *mat.Dense {
	return mat.NewDense(len(y), 1, append([]float64(nil), y...))
}

func checkData(x *ad.Node, y []float64) error {
	n, _ := x.Dims()
	if n == 0 {
		return errEmpty
	}
	if len(y) != n {
		return fmt.Errorf("inference: X has %d rows but y has %d values", n, len(y))
	}
	return nil
}

func checkNoise(noise *ad.Node) error {
	if r, c := noise.Dims(); r != 1 || c != 1 {
		return fmt.Errorf("inference: noise variance is %d×%d, want 1×1", r, c)
	}
	if v := noise.Scalar(); !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("inference: noise variance must be positive and finite, got %v", v)
	}
	return nil
}

// add sums 1×1 nodes.
func add(terms ...*ad.Node) *ad.Node {
	out := terms[0]
	for _, t := range terms[1:] {
		out = ad.Add(out, t)
	}
	return out
}
