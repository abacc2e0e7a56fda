package inference

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/internal/goroutines"
)

// Stats are the sufficient statistics of the collapsed bound for a feature
// whose Kuf = Φ does not depend on the hyperparameters (IFF, VFF with a fixed
// interval, B-splines): P = ΦΦᵀ, R = Φy, YY = yᵀy and N. With them every
// evaluation of the bound and its gradient costs O(M³), independent of N.
type Stats struct {
	P  *mat.SymDense // ΦΦᵀ, M×M
	R  []float64     // Φy, length M
	YY float64       // yᵀy
	N  int           // number of observations
}

// M is the number of features.
func (s *Stats) M() int { return len(s.R) }

// FeatureMap returns Φ (M×n) for the n rows of x. dst is nil or an M×n
// matrix of the caller's, with arbitrary contents, that the map may
// overwrite and return instead of allocating Φ: ComputeStats hands each
// goroutine's buffer back chunk after chunk, so that a pass over millions
// of rows leaves no M×chunk matrix per chunk for the collector. It calls
// the map from several goroutines at once, so it must be safe for
// concurrent use.
type FeatureMap func(dst, x *mat.Dense) (*mat.Dense, error)

// Allocating is the FeatureMap of phi, which allocates every Φ itself.
func Allocating(phi func(x *mat.Dense) (*mat.Dense, error)) FeatureMap {
	return func(_, x *mat.Dense) (*mat.Dense, error) { return phi(x) }
}

// StatsChunk is the largest number of rows ComputeStats hands to a
// FeatureMap at once (the IFF paper's chunk of 10 000 points).
const StatsChunk = 10000

// statsChunkFloats bounds one chunk of Φ to about 32 MB, so that large M
// gets shorter chunks. Tests lower the bounds to exercise many chunks.
var (
	statsChunkFloats  = 1 << 22
	statsChunkRows    = StatsChunk
	statsChunkMinRows = 64
	// statsMaxGroups is the number of groups of chunks that get their own
	// partial sums (several per core on small machines, for load balance);
	// statsPartialFloats bounds the partials' memory.
	statsMaxGroups     = 8
	statsPartialFloats = 1 << 23
)

// MaxStatsFeatures bounds the number of features of ComputeStats: ΦΦᵀ
// alone takes 8·M² bytes, 34 GB at the bound.
const MaxStatsFeatures = 1 << 16

// ComputeStats computes the statistics of m features over (x, y) in O(NM²)
// time and O(M² + M·chunk) memory per worker: the rows are split into
// chunks, Φ is built per chunk into the worker's one buffer (see
// FeatureMap), and ΦΦᵀ is accumulated with a symmetric rank-k update
// (dsyrk). Chunks are spread over all cores; the result is bitwise the
// same on any number of cores.
func ComputeStats(x *mat.Dense, y []float64, m int, phi FeatureMap) (*Stats, error) {
	if x == nil {
		return nil, errors.New("inference: stats: X is nil")
	}
	n, _ := x.Dims()
	if n == 0 {
		return nil, errEmpty
	}
	if len(y) != n {
		return nil, fmt.Errorf("inference: stats: X has %d rows but y has %d values", n, len(y))
	}
	if m < 1 {
		return nil, fmt.Errorf("inference: stats: %d features, want ≥ 1", m)
	}
	if m > MaxStatsFeatures {
		// Refused here, not by a worker's allocation: a panic in a worker
		// goroutine cannot be recovered by the caller and ends the process.
		return nil, fmt.Errorf("inference: stats: %d features need a %d×%d matrix ΦΦᵀ (%.3g GB); at most %d features are supported: use fewer",
			m, m, m, 8*float64(m)*float64(m)/1e9, MaxStatsFeatures)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("inference: stats: y[%d] = %v is not finite", i, v)
		}
	}
	chunk := max(statsChunkMinRows, min(statsChunkRows, statsChunkFloats/m))
	nChunks := (n + chunk - 1) / chunk
	// The chunks are split into fixed groups, each accumulated into its own
	// partial in chunk order, and the partials are added in group order: the
	// same sums on any number of cores. Goroutines take whole groups.
	groups := min(nChunks, statsMaxGroups, max(1, statsPartialFloats/(m*m)))

	type partial struct {
		p   []float64 // upper triangle of ΦΦᵀ, row-major M×M
		r   []float64
		err error
	}
	parts := make([]partial, groups)
	var next atomic.Int64
	// A panic on one of these goroutines (a feature map's, or an M×M
	// partial too large to allocate) is raised again here, on the caller.
	var g goroutines.Group
	for range min(runtime.GOMAXPROCS(0), groups) {
		g.Go(func() {
			var buf []float64 // this goroutine's Φ, reused by every chunk
			for {
				g := int(next.Add(1)) - 1
				if g >= groups {
					return
				}
				part := &parts[g]
				part.p = make([]float64, m*m)
				part.r = make([]float64, m)
				for c := g * nChunks / groups; c < (g+1)*nChunks/groups && part.err == nil; c++ {
					lo, hi := c*chunk, min((c+1)*chunk, n)
					if buf == nil {
						buf = make([]float64, m*chunk)
					}
					part.err = accumulateStats(x, y, m, lo, hi, phi, mat.NewDense(m, hi-lo, buf[:m*(hi-lo)]), part.p, part.r)
				}
			}
		})
	}
	g.Wait()
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
	}
	s := &Stats{P: mat.NewSymDense(m, parts[0].p), R: parts[0].r, N: n}
	for _, p := range parts[1:] {
		for i := 0; i < m; i++ {
			dst, src := s.P.RawSymmetric().Data[i*m+i:i*m+m], p.p[i*m+i:i*m+m]
			for j, v := range src {
				dst[j] += v
			}
			s.R[i] += p.r[i]
		}
	}
	// Both triangles in P's storage: the collapsed bound then reads P as a
	// dense matrix without copying it at every step (Stats.dense).
	pd := s.P.RawSymmetric().Data
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			pd[j*m+i] = pd[i*m+j]
		}
	}
	for _, v := range y {
		s.YY += v * v
	}
	return s, nil
}

// accumulateStats adds ΦΦᵀ (upper triangle) to p and Φy to r for the rows
// [lo, hi) of x, with dst (M×(hi−lo)) offered to the map for Φ.
func accumulateStats(x *mat.Dense, y []float64, m, lo, hi int, phi FeatureMap, dst *mat.Dense, p, r []float64) error {
	_, d := x.Dims()
	f, err := phi(dst, x.Slice(lo, hi, 0, d).(*mat.Dense))
	if err != nil {
		return fmt.Errorf("inference: stats: features of rows %d–%d: %w", lo, hi, err)
	}
	if fr, fc := f.Dims(); fr != m || fc != hi-lo {
		return fmt.Errorf("inference: stats: feature map returned %d×%d for %d rows, want %d×%d", fr, fc, hi-lo, m, hi-lo)
	}
	fr := f.RawMatrix()
	blas64.Syrk(blas.NoTrans, 1, fr, 1, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: p})
	blas64.Gemv(blas.NoTrans, 1, fr, blas64.Vector{N: hi - lo, Inc: 1, Data: y[lo:hi]}, 1,
		blas64.Vector{N: m, Inc: 1, Data: r})
	// A non-finite entry of row i of Φ makes the sum of squares p[i,i]
	// non-finite, and it stays so: the M diagonal entries stand for the
	// M×n scan of Φ, which is only made (to name the entry) when one of
	// them is NaN or ±Inf.
	for i := range m {
		if v := p[i*m+i]; math.IsNaN(v) || math.IsInf(v, 0) {
			if err := checkFinite("Φ", f); err != nil {
				return fmt.Errorf("inference: stats: rows %d–%d: %w", lo, hi, err)
			}
			break
		}
	}
	return nil
}

// Validate checks that the statistics are consistent and finite.
func (s *Stats) Validate() error {
	if s == nil || s.P == nil {
		return errors.New("inference: stats are nil")
	}
	if s.N < 1 {
		return errEmpty
	}
	if m := s.P.SymmetricDim(); m != len(s.R) || m == 0 {
		return fmt.Errorf("inference: stats: P is %d×%d but R has %d entries", m, m, len(s.R))
	}
	if !(s.YY >= 0) || math.IsInf(s.YY, 0) {
		return fmt.Errorf("inference: stats: yᵀy = %v", s.YY)
	}
	return checkFinite("P", s.dense())
}

// dense returns P as a dense matrix: a view of P's storage when that holds
// both triangles (as ComputeStats leaves it), else a copy. The collapsed
// bound reads it at every evaluation, and a copy each time would leave
// 2·8·M² bytes per step for the collector.
func (s *Stats) dense() *mat.Dense {
	raw := s.P.RawSymmetric()
	if raw.Uplo == blas.Upper {
		full := true
		for i := 0; i < raw.N && full; i++ {
			for j := i + 1; j < raw.N; j++ {
				if math.Float64bits(raw.Data[i*raw.Stride+j]) != math.Float64bits(raw.Data[j*raw.Stride+i]) {
					full = false
					break
				}
			}
		}
		if full {
			var d mat.Dense
			d.SetRawMatrix(blas64.General{Rows: raw.N, Cols: raw.N, Stride: raw.Stride, Data: raw.Data})
			return &d
		}
	}
	return mat.DenseCopyOf(s.P)
}

// whiten returns a function b ↦ L⁻¹b with Kuu = LLᵀ, plus the jitter used.
func (k statsKuu) whiten(m int, opt Options) (func(*ad.Node) *ad.Node, float64, error) {
	f, err := rootOf(Kuu(k), m, opt)
	if err != nil {
		return nil, 0, err
	}
	return f.solveL, f.jitter(), nil
}

type statsKuu Kuu

// statsTerms are the pieces of the A-form bound shared by the objective and
// the posterior.
type statsTerms struct {
	bound   *ad.Node
	whiten  func(*ad.Node) *ad.Node
	la      *ad.Node // chol(I + B)
	c       *ad.Node // L_A⁻¹ L⁻¹ r / σ²
	jitter  float64
	aJitter float64
}

// CollapsedFromStats is the collapsed bound of Titsias (2009) from the
// sufficient statistics s, in the A-form of the IFF paper (App. A): with
// Kuu = LLᵀ, B = L⁻¹PL⁻ᵀ/σ², A = I + B = L_A L_Aᵀ and c = L_A⁻¹L⁻¹r/σ²,
//
//	−½ [N log 2π + log|A| + N log σ² + yᵀy/σ² − ‖c‖² + Σ_n k(x_n,x_n)/σ² − tr B].
//
// kdiagSum is Σ_n k(x_n, x_n) (N·k(0) for a stationary kernel) and noise
// is σ², both 1×1. It is the same value as SGPR on the feature that produced
// s, at O(M³) per evaluation and gradient.
func CollapsedFromStats(s *Stats, kuu Kuu, kdiagSum, noise *ad.Node, opt Options) (*ad.Node, Info, error) {
	st, err := collapsedFromStats(s, kuu, kdiagSum, nil, noise, opt)
	if err != nil {
		return nil, Info{}, err
	}
	return st.bound, Info{Jitter: st.jitter}, nil
}

// CollapsedFromStatsResidual is CollapsedFromStats with the trace term in
// closed form: residual = tr(Kff − Qff) (1×1, features.TraceResidual)
// replaces Σ_n k(x_n,x_n)/σ² − tr B, two sums that agree in their leading
// digits when the kernel's scale is large. The closed form is that of the
// unjittered Kuu: should its factorisation take jitter, the bound uses
// kdiagSum as CollapsedFromStats does.
func CollapsedFromStatsResidual(s *Stats, kuu Kuu, residual, kdiagSum, noise *ad.Node, opt Options) (*ad.Node, Info, error) {
	if residual == nil {
		return nil, Info{}, errors.New("inference: collapsed bound: nil trace residual")
	}
	st, err := collapsedFromStats(s, kuu, kdiagSum, residual, noise, opt)
	if err != nil {
		return nil, Info{}, err
	}
	return st.bound, Info{Jitter: st.jitter}, nil
}

// collapsedFromStats is the bound with the trace term from kdiagSum, or
// from residual (may be nil) when the factor of Kuu took no jitter.
func collapsedFromStats(s *Stats, kuu Kuu, kdiagSum, residual, noise *ad.Node, opt Options) (*statsTerms, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkNoise(noise); err != nil {
		return nil, err
	}
	if r, c := kdiagSum.Dims(); r != 1 || c != 1 {
		return nil, fmt.Errorf("inference: Σ k(x_n, x_n) is %d×%d, want 1×1", r, c)
	}
	if v := kdiagSum.Scalar(); math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("inference: Σ k(x_n, x_n) = %v", v)
	}
	if residual != nil {
		if r, c := residual.Dims(); r != 1 || c != 1 {
			return nil, fmt.Errorf("inference: tr(Kff − Qff) is %d×%d, want 1×1", r, c)
		}
		if v := residual.Scalar(); !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("inference: tr(Kff − Qff) = %v, want finite and ≥ 0", v)
		}
	}
	m := s.M()
	whiten, jit, err := statsKuu(kuu).whiten(m, opt)
	if err != nil {
		return nil, err
	}
	t := noise.Tape()
	p := t.Const(s.dense())
	r := t.Const(mat.NewDense(m, 1, append([]float64(nil), s.R...)))
	n := float64(s.N)

	// B = L⁻¹ P L⁻ᵀ / σ², symmetrised against rounding.
	lp := whiten(p)
	if lp == nil {
		return nil, errors.New("inference: Kuu whitener returned nil")
	}
	if r, c := lp.Dims(); r != m || c != m {
		return nil, fmt.Errorf("inference: Kuu whitener maps %d×%d to %d×%d, want %d×%d (does it belong to these features?)", m, m, r, c, m, m)
	}
	b := whiten(ad.T(lp))
	b = ad.Scale(0.5, ad.Add(b, ad.T(b)))
	b = ad.DivScalar(b, noise)
	a := ad.AddDiag(b, t.Scalar(1))
	la, aJit, err := ad.CholeskyJitter(a, opt.maxTries())
	if err != nil {
		return nil, fmt.Errorf("inference: A = I + L⁻¹PL⁻ᵀ/σ² (%d×%d) not positive definite: %w", m, m, err)
	}
	c := ad.DivScalar(ad.SolveLower(la, whiten(r)), noise)
	invNoise := ad.Pow(noise, -1)
	cc := ad.Sum(ad.Square(c)).Scalar()
	closed := residual != nil && jit == 0
	if closed {
		// The closed form has no Σk/σ² − tr B that rounding could make
		// negative.
		err = checkCollapsedTerms(s, 0, noise.Scalar(), cc, 0)
	} else {
		err = checkCollapsedTerms(s, kdiagSum.Scalar(), noise.Scalar(), cc, ad.Trace(b).Scalar())
	}
	if err != nil {
		return nil, err
	}
	terms := []*ad.Node{
		t.Scalar(-0.5 * n * math.Log(2*math.Pi)),
		ad.Scale(-0.5*n, ad.Log(noise)),
		ad.Scale(-0.5, ad.LogDetChol(la)),
		ad.Scale(-0.5*s.YY, invNoise),
		ad.Scale(0.5, ad.Sum(ad.Square(c))),
	}
	if closed {
		terms = append(terms, ad.Scale(-0.5, ad.Mul(residual, invNoise)))
	} else {
		terms = append(terms, ad.Scale(-0.5, ad.Mul(kdiagSum, invNoise)), ad.Scale(0.5, ad.Trace(b)))
	}
	bound := add(terms...)
	return &statsTerms{bound: bound, whiten: whiten, la: la, c: c, jitter: jit, aJitter: aJit}, nil
}

// collapsedTol is the relative amount by which either non-negative part of
// the collapsed bound may come out negative from rounding before the
// evaluation is rejected. 1e-6 was too loose: on energy L-BFGS still found
// B-spline points whose bound read 1013 (the additive GP's own log marginal
// likelihood is 536 there); at 1e-9 it stops at 395, as on the other split.
const collapsedTol = 1e-9

// checkCollapsedTerms rejects an evaluation whose rounding has broken the
// bound. Its two parts are non-negative in exact arithmetic: the data fit
// yᵀ(Qff + σ²I)⁻¹y = yᵀy/σ² − ‖c‖² and the trace tr(Kff − Qff)/σ² =
// Σ k(x_n,x_n)/σ² − tr B. An ill-conditioned Kuu (a long lengthscale on
// banded B-spline or Fourier features) can make L⁻¹ so inaccurate that ‖c‖²
// or tr B exceeds its bound by orders of magnitude, and the "bound" then
// reads as a huge log likelihood an optimiser would happily climb (seen:
// 6·10¹⁰ for B-splines on energy). kdiagSum = 0 (posterior only) skips
// the trace part.
func checkCollapsedTerms(s *Stats, kdiagSum, noise, cc, trB float64) error {
	fit := s.YY / noise
	if fit-cc < -collapsedTol*math.Max(fit, 1) {
		return fmt.Errorf("inference: collapsed bound lost to rounding: yᵀy/σ² = %.6g < ‖c‖² = %.6g (Kuu too ill-conditioned for these features)", fit, cc)
	}
	if kdiagSum != 0 {
		tr := kdiagSum / noise
		if tr-trB < -collapsedTol*math.Max(tr, 1) {
			return fmt.Errorf("inference: collapsed bound lost to rounding: Σ k(x_n,x_n)/σ² = %.6g < tr(L⁻¹PL⁻ᵀ)/σ² = %.6g, i.e. tr(Kff − Qff) < 0 (Kuu too ill-conditioned for these features)", tr, trB)
		}
	}
	return nil
}

// StatsPosterior returns the predictive posterior of the collapsed bound
// from the statistics, for Posterior.Predict with the feature's Kuf:
//
//	mean(x) = (L_A⁻¹L⁻¹k)ᵀc,   var(x) = k(x,x) − ‖L⁻¹k‖² + ‖L_A⁻¹L⁻¹k‖².
//
// Only values are used; kuu and noise may be constants.
func StatsPosterior(s *Stats, kuu Kuu, noise *ad.Node, opt Options) (*Posterior, error) {
	t := noise.Tape()
	st, err := collapsedFromStats(s, kuu, t.Scalar(0), nil, noise, opt)
	if err != nil {
		return nil, err
	}
	m := s.M()
	id := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		id.Set(i, i, 1)
	}
	linv := st.whiten(t.Const(id)).Value() // L⁻¹
	b := solveLower(lowerOf(st.la.Value()), linv, false)
	alpha := mat.NewDense(m, 1, nil)
	alpha.Mul(b.T(), st.c.Value())
	return &Posterior{Alpha: alpha, A: linv, B: b}, nil
}
