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
	// GramFirst makes the collapsed SGPR bound form Kuf Kfu first and
	// whiten it afterwards (L⁻¹ Kuf Kfu L⁻ᵀ), saving one triangular solve
	// of Kuf (N·M² flops) per evaluation, instead of whitening Kuf first.
	// It amplifies rounding by about cond(Kuu) instead of √cond(Kuu): use
	// it only when Kuu is well conditioned.
	GramFirst bool
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

// Kuu is the one description of Kuu's structure (dense, diagonal,
// precision-diagonal, structured root) that every path reads: the
// collapsed bound from statistics (CollapsedFromStats, StatsPosterior)
// takes it directly, and SGPR, SVGP and the block bounds get it from the
// feature through features.StructureOf.
type Kuu = features.KuuStructure

// factorKuu factorises Kuu of the bound feature as a triangular factor with
// log-determinant (SGPR, non-whitened SVGP): by √ of a diagonal or of the
// reciprocal precision, densely otherwise. A structured root gives neither
// L⁻ᵀ nor log|Kuu|, so it is not accepted here (such features return
// their dense Kuu).
func factorKuu(k kernels.Bound, f features.Bound, opt Options) (factor, error) {
	s, err := features.StructureOf(k, f, opt.maxTries(), features.FactorForms)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Diag != nil:
		return newDiagFactor("Kuu", s.Diag, opt)
	case s.Precision != nil:
		if err := checkPrecision(s.Precision, f.M(), true); err != nil {
			return nil, fmt.Errorf("%w; the whitened parameterisation drops such features, this one needs log|Kuu|", err)
		}
		return newDiagFactor("Kuu", ad.Pow(s.Precision, -1), opt)
	case s.Whiten != nil:
		return nil, errors.New("inference: a structured root of Kuu cannot give log|Kuu|")
	}
	return newDenseFactor("Kuu", s.Dense, opt)
}

// sqrtKuu returns the square root of Kuu the whitened objectives use: the
// feature's structure read as a root (a structured root or precision
// without factorisation, a diagonal or dense Kuu by its factor); the
// non-whitened ones get factorKuu's.
func sqrtKuu(k kernels.Bound, f features.Bound, whitened bool, opt Options) (sqrtFactor, error) {
	if !whitened {
		return factorKuu(k, f, opt)
	}
	s, err := features.StructureOf(k, f, opt.maxTries(), features.AllForms)
	if err != nil {
		return nil, err
	}
	return rootOf(s, f.M(), opt)
}

// rootOf returns a square root Kuu = LLᵀ for a structure of M features:
// a triangular factor for dense and diagonal Kuu (with Options.Jitter), and
// whitening maps (no jitter: nothing is factorised) for a precision
// diagonal and a structured root.
func rootOf(s Kuu, m int, opt Options) (sqrtFactor, error) {
	form, err := s.Form()
	if err != nil {
		return nil, fmt.Errorf("inference: %w", err)
	}
	switch form {
	case "root":
		return structFactor{m: m, w: s.Whiten}, nil
	case "dense":
		if r, c := s.Dense.Dims(); r != m || c != m {
			return nil, fmt.Errorf("inference: Kuu is %d×%d, want %d×%d", r, c, m, m)
		}
		return newDenseFactor("Kuu", s.Dense, opt)
	case "diagonal":
		if r, c := s.Diag.Dims(); r != m || c != 1 {
			return nil, fmt.Errorf("inference: diagonal of Kuu is %d×%d, want %d×1", r, c, m)
		}
		return newDiagFactor("Kuu", s.Diag, opt)
	}
	if err := checkPrecision(s.Precision, m, false); err != nil {
		return nil, err
	}
	w := ad.Sqrt(ad.AddConst(s.Precision, sqrtPrecisionFloor))
	return structFactor{m: m, w: func(b *ad.Node) *ad.Node { return ad.MulColVec(b, w) }}, nil
}

// sqrtPrecisionFloor keeps √d differentiable at d = 0.
const sqrtPrecisionFloor = 1e-300

// checkPrecision checks an M×1 precision diagonal: finite and ≥ 0, or > 0
// when positive is set.
func checkPrecision(p *ad.Node, m int, positive bool) error {
	if r, c := p.Dims(); r != m || c != 1 {
		return fmt.Errorf("inference: precision of Kuu is %d×%d, want %d×1", r, c, m)
	}
	for i := 0; i < m; i++ {
		v := p.Value().At(i, 0)
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("inference: precision (1/Kuu) entry %d is %v; want finite and ≥ 0 (is the spectral density finite?)", i, v)
		}
		if positive && v == 0 {
			return fmt.Errorf("inference: precision (1/Kuu) entry %d is 0 (infinite prior variance)", i)
		}
	}
	return nil
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
	// v − v is 0 for a finite v and NaN otherwise: four independent sums
	// of it scan a chunk of Kuf at several entries per cycle; only a
	// matrix that fails is searched again for the entry to name.
	var s0, s1, s2, s3 float64
	for i := 0; i < r; i++ {
		row := a.RawRowView(i)[:c]
		j := 0
		for ; j+4 <= len(row); j += 4 {
			s0 += row[j] - row[j]
			s1 += row[j+1] - row[j+1]
			s2 += row[j+2] - row[j+2]
			s3 += row[j+3] - row[j+3]
		}
		for ; j < len(row); j++ {
			s0 += row[j] - row[j]
		}
	}
	if s0+s1+s2+s3 == 0 {
		return nil
	}
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
