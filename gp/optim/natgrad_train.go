package optim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/linalg"
	"sgplab/gp/param"
)

// Gaussian names the parameters of one Gaussian factor q = N(m, LLᵀ) in a
// param.Set: Mu (M×1) and Sqrt (M×M, lower triangle used), both with the
// identity transform.
type Gaussian struct{ Mu, Sqrt string }

// NatGradSettings configure TrainNatGrad.
type NatGradSettings struct {
	// MaxIter is the number of steps; 0 evaluates the objective once.
	MaxIter int
	// Gamma is the natural-gradient step size of the Gaussian factors
	// (1 lands on the optimum of a conjugate objective).
	Gamma float64
	// LearningRate is Adam's step size for every other trainable parameter;
	// 0 is DefaultAdamLearningRate.
	LearningRate float64
	// Stop ends the fit once the convergence rule holds (StatusStopRule);
	// the zero Rule is off.
	Stop Rule
}

// TrainNatGrad maximises obj with natural-gradient steps on the Gaussian
// factors qs and Adam on every other trainable parameter of set, with
// separate step sizes. Each step evaluates obj once (one minibatch, if obj
// draws one per call) with one backward pass, and updates both from that
// gradient:
//
//	q:    (m, S) ← NatGradStep(m, S, ∂L/∂m, ∂L/∂S, γ),  L ← chol(S),
//	rest: Adam ascent step of size LearningRate,
//
// where ∂L/∂S is recovered from the gradient of the stored Cholesky factor
// L by the Cholesky adjoint, ∂L/∂S = ½ L⁻ᵀ(P + Pᵀ)L⁻¹ with P = Φ(Lᵀ ∂L/∂L)
// (lower triangle, halved diagonal), exact because the objective sees L
// only through S = LLᵀ. The step is computed in L directly, without
// forming S or inverting it (natGradUpdate). The factors' Sqrt must have
// a positive diagonal (the canonical factor; initialise q with one).
// Parameters marked
// non-trainable stay fixed; the factors must be trainable. set is left at
// the last finite point.
func TrainNatGrad(ctx context.Context, set *param.Set, obj func(t *ad.Tape, b *param.Bound) (*ad.Node, error),
	qs []Gaussian, s NatGradSettings, cb func(Progress)) (Report, error) {
	if !(s.Gamma > 0) || math.IsInf(s.Gamma, 0) {
		return Report{}, fmt.Errorf("optim: natural-gradient step %v must be positive and finite", s.Gamma)
	}
	if s.MaxIter < 0 {
		return Report{}, fmt.Errorf("optim: %d iterations", s.MaxIter)
	}
	if !(s.Stop.Tol >= 0) {
		return Report{}, fmt.Errorf("optim: stopping tolerance %v must be ≥ 0", s.Stop.Tol)
	}
	lr := s.LearningRate
	if lr == 0 {
		lr = DefaultAdamLearningRate
	}
	if !(lr > 0) || math.IsInf(lr, 0) {
		return Report{}, fmt.Errorf("optim: Adam learning rate %v must be positive and finite", s.LearningRate)
	}
	segs, gauss, err := natGradLayout(set, qs)
	if err != nil {
		return Report{}, err
	}
	// Another optimiser (an L-BFGS warm start, say) may leave a factor
	// with negative diagonal entries; the update needs the Cholesky
	// factor, which differs only by the signs of its columns.
	x0 := set.Vector()
	for _, q := range segs {
		canonicalFactor(x0, q)
	}
	set.SetVector(x0)
	start := time.Now()
	t := ad.NewTape() // reused: Reset recycles the previous evaluation's matrices
	eval := func() (float64, []float64, error) {
		t.Reset()
		b := set.Bind(t)
		out, err := obj(t, b)
		if err != nil {
			return 0, nil, err
		}
		if r, c := out.Dims(); r != 1 || c != 1 {
			return 0, nil, fmt.Errorf("objective is %d×%d, want 1×1", r, c)
		}
		t.Backward(out)
		g := b.Gradient()
		if !finite(out.Scalar()) || !allFinite(g) {
			return 0, nil, fmt.Errorf("%w: objective %v", ErrNonFinite, out.Scalar())
		}
		return out.Scalar(), g, nil
	}
	var rep Report
	report := func(it int, f float64) {
		p := Progress{Phase: "natgrad+adam", Iteration: it, Objective: f, Elapsed: time.Since(start)}
		rep.Trace = append(rep.Trace, p)
		rep.Objective, rep.Iterations = f, it
		if cb != nil {
			cb(p)
		}
	}
	f, g, err := eval()
	if err != nil {
		return rep, fmt.Errorf("optim: natgrad: objective failed at the initial point: %w", err)
	}
	report(0, f)
	stop := newStopper(s.Stop)
	stop.add(f)
	n := len(g)
	m1, m2 := make([]float64, n), make([]float64, n)
	for it := 1; it <= s.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			rep.Status = StatusCancelled
			return rep, err
		}
		prev := set.Vector()
		x := append([]float64(nil), prev...)
		for _, q := range segs {
			if err := natGradUpdate(x, g, q, s.Gamma); err != nil {
				rep.Status = StatusNonFinite
				return rep, fmt.Errorf("optim: natgrad step %d: %w", it, err)
			}
		}
		c1 := 1 - math.Pow(adamBeta1, float64(it))
		c2 := 1 - math.Pow(adamBeta2, float64(it))
		for i := range x {
			if gauss[i] {
				continue
			}
			m1[i] = adamBeta1*m1[i] + (1-adamBeta1)*g[i]
			m2[i] = adamBeta2*m2[i] + (1-adamBeta2)*g[i]*g[i]
			x[i] += lr * (m1[i] / c1) / (math.Sqrt(m2[i]/c2) + adamEps) // ascent
		}
		set.SetVector(x)
		fNew, gNew, err := eval()
		if err != nil {
			set.SetVector(prev)
			rep.Status = StatusNonFinite
			return rep, fmt.Errorf("optim: natgrad step %d: %w; stopped at the last finite point (objective %g)", it, err, f)
		}
		f, g = fNew, gNew
		report(it, f)
		if stop.add(f) {
			rep.Status = StatusStopRule
			return rep, nil
		}
	}
	rep.Status = StatusIterations
	if s.MaxIter == 0 {
		rep.Status = StatusEvaluated
	}
	return rep, nil
}

// gaussSeg locates one factor in the flat trainable vector.
type gaussSeg struct {
	mu, sqrt int // offsets
	m        int
	work     *natGradWork // the update's matrices, kept across steps (nil: fresh ones)
}

// natGradWork holds the M×M matrices of natGradUpdate from one step to the
// next: at M = 200 allocating and zeroing them took a quarter of the
// update's time. Only lower triangles are written into l and lbar, so
// their upper triangles stay zero.
type natGradWork struct {
	l, lbar, p, rev, r, b *mat.Dense
}

func (w *natGradWork) ensure(n int) {
	if w.l != nil {
		if r, _ := w.l.Dims(); r == n {
			return
		}
	}
	*w = natGradWork{
		l: mat.NewDense(n, n, nil), lbar: mat.NewDense(n, n, nil), p: mat.NewDense(n, n, nil),
		rev: mat.NewDense(n, n, nil), r: mat.NewDense(n, n, nil), b: mat.NewDense(n, n, nil),
	}
}

func natGradLayout(set *param.Set, qs []Gaussian) ([]gaussSeg, []bool, error) {
	if len(qs) == 0 {
		return nil, nil, errors.New("optim: natural gradients need at least one Gaussian factor")
	}
	offset := map[string]int{}
	k := 0
	for _, name := range set.Names() {
		if !set.Trainable(name) {
			continue
		}
		offset[name] = k
		r, c := set.Value(name).Dims()
		k += r * c
	}
	gauss := make([]bool, k)
	segs := make([]gaussSeg, len(qs))
	for i, q := range qs {
		for _, name := range []string{q.Mu, q.Sqrt} {
			if !set.Has(name) {
				return nil, nil, fmt.Errorf("optim: natgrad: no parameter %q (have %v)", name, set.Names())
			}
			if _, ok := offset[name]; !ok {
				return nil, nil, fmt.Errorf("optim: natgrad: Gaussian parameter %q is not trainable", name)
			}
		}
		mr, mc := set.Value(q.Mu).Dims()
		sr, sc := set.Value(q.Sqrt).Dims()
		if mc != 1 || sr != mr || sc != mr {
			return nil, nil, fmt.Errorf("optim: natgrad: %s is %d×%d and %s %d×%d, want M×1 and M×M", q.Mu, mr, mc, q.Sqrt, sr, sc)
		}
		segs[i] = gaussSeg{mu: offset[q.Mu], sqrt: offset[q.Sqrt], m: mr, work: new(natGradWork)}
		for j := 0; j < mr; j++ {
			gauss[segs[i].mu+j] = true
		}
		for j := 0; j < mr*mr; j++ {
			gauss[segs[i].sqrt+j] = true
		}
	}
	return segs, gauss, nil
}

// canonicalFactor negates each column of the factor's lower triangle in
// x whose diagonal entry is negative: LD with D = diag(±1) has the same
// LLᵀ, so q is unchanged, and the result is the Cholesky factor whenever
// no diagonal entry is zero.
func canonicalFactor(x []float64, q gaussSeg) {
	n := q.m
	l := x[q.sqrt : q.sqrt+n*n]
	for j := 0; j < n; j++ {
		if !(l[j*n+j] < 0) {
			continue
		}
		for i := j; i < n; i++ {
			l[i*n+j] = -l[i*n+j]
		}
	}
}

// natGradUpdate replaces the factor's entries of x by one natural-gradient
// step from the gradient g, in the factor L of S = LLᵀ throughout, so no
// covariance or precision is inverted (NatGradStep's route costs about 7M³
// flops on one core; this one about 1.1M³, in gp/linalg's blocked routines
// on every core, and is as accurate: P and the solve below have triangular
// right-hand sides).
//
// With Y = P + Pᵀ − diag(P) for P = tril(Lᵀ tril(L̄)), the Cholesky adjoint
// is ∂L/∂S = ½L⁻ᵀYL⁻¹ (CholeskyAdjoint), so the new precision is
//
//	S'⁻¹ = S⁻¹ − 2γ ∂L/∂S = L⁻ᵀ A L⁻¹,  A = I − γY,
//
// definite exactly when A is. Factor A = UUᵀ with U upper triangular (the
// Cholesky factor R of JAJ, J the reversal, gives U = JRJ); then
// S' = (LU⁻ᵀ)(LU⁻ᵀ)ᵀ and LU⁻ᵀ is lower triangular with a positive
// diagonal: the new factor L' = LU⁻ᵀ, i.e. JL'ᵀJ = R⁻¹(JLᵀJ), one
// triangular solve. The mean follows from θ₁' = S⁻¹m + γ(∂L/∂m − 2(∂L/∂S)m)
// = L⁻ᵀA L⁻¹m + γ∂L/∂m and m' = L'L'ᵀθ₁'.
func natGradUpdate(x, g []float64, q gaussSeg, gamma float64) error {
	n := q.m
	w := q.work
	if w == nil {
		w = new(natGradWork)
	}
	w.ensure(n)
	l, lbar := w.l, w.lbar
	ld, lbd := l.RawMatrix().Data, lbar.RawMatrix().Data
	for i := 0; i < n; i++ {
		copy(ld[i*n:i*n+i+1], x[q.sqrt+i*n:q.sqrt+i*n+i+1])
		copy(lbd[i*n:i*n+i+1], g[q.sqrt+i*n:q.sqrt+i*n+i+1])
		if !(ld[i*n+i] > 0) {
			return fmt.Errorf("square root of q has diagonal entry %d = %v; natural gradients need the Cholesky factor (positive diagonal)", i, ld[i*n+i])
		}
	}
	p := w.p
	linalg.MulLowerTLowerTo(p, l, lbar) // only P's lower triangle is read below
	pd := p.RawMatrix().Data
	// JAJ, entry (i, j) = A(n−1−i, n−1−j), A = I − γY, written as P is
	// read, row by row: Y(a, b) = P(a, b) for a ≥ b lands at (i, j) =
	// (n−1−a, n−1−b), i ≤ j, and its mirror (j, i).
	rev := w.rev
	rd := rev.RawMatrix().Data
	for a := 0; a < n; a++ {
		i := n - 1 - a
		row := pd[a*n : a*n+a+1]
		for b, y := range row {
			j := n - 1 - b
			v := -gamma * y
			if a == b {
				v++
			}
			rd[i*n+j], rd[j*n+i] = v, v
		}
	}
	r := w.r
	if err := linalg.CholeskyTo(r, rev); err != nil {
		return fmt.Errorf("optim: natural-gradient step %g leaves the precision indefinite; use a smaller step", gamma)
	}

	// θ₁' = L⁻ᵀ A L⁻¹ m + γ ∂L/∂m, from the old factor.
	lt := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: l.RawMatrix().Data}
	v := blas64.Vector{N: n, Inc: 1, Data: append([]float64(nil), x[q.mu:q.mu+n]...)}
	blas64.Trsv(blas.NoTrans, lt, v)
	// A v = v − γ Y v, and Y is P's lower triangle read as symmetric.
	theta := blas64.Vector{N: n, Inc: 1, Data: append([]float64(nil), v.Data...)}
	blas64.Symv(-gamma, blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: pd}, v, 1, theta)
	blas64.Trsv(blas.Trans, lt, theta)
	for i := 0; i < n; i++ {
		theta.Data[i] += gamma * g[q.mu+i]
	}

	// JL'ᵀJ = R⁻¹(JLᵀJ), where (JLᵀJ)(i, j) = L(n−1−j, n−1−i): row a of L
	// lands in column n−1−a. Both are lower triangular, so the solve works
	// on the trailing blocks only (≈ 0.4 of a general solve's flops).
	b := w.b
	bd := b.RawMatrix().Data
	for a := 0; a < n; a++ {
		j := n - 1 - a
		for c, v := range ld[a*n : a*n+a+1] {
			bd[(n-1-c)*n+j] = v
		}
	}
	linalg.SolveLowerLowerInPlace(r, b)
	for i := 0; i < n; i++ {
		row := x[q.sqrt+i*n : q.sqrt+(i+1)*n]
		for j := 0; j <= i; j++ {
			row[j] = bd[(n-1-j)*n+n-1-i] // L'(i, j)
		}
		clear(row[i+1:])
	}
	// m' = L'L'ᵀθ₁'.
	nl := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: x[q.sqrt : q.sqrt+n*n]}
	blas64.Trmv(blas.Trans, nl, theta)
	blas64.Trmv(blas.NoTrans, nl, theta)
	copy(x[q.mu:q.mu+n], theta.Data)
	return nil
}

// CholeskyAdjoint returns the symmetric G = ∂f/∂S of a function f that
// depends on a lower-triangular L (positive diagonal) only through
// S = LLᵀ, from lbar = ∂f/∂L (its lower triangle is read):
// G = ½ L⁻ᵀ (P + Pᵀ) L⁻¹ with P = Φ(Lᵀ lbar), Φ keeping the lower triangle
// and halving the diagonal. It inverts lbar = tril(2GL).
func CholeskyAdjoint(l, lbar *mat.Dense) *mat.SymDense {
	m, _ := l.Dims()
	lo := mat.NewTriDense(m, mat.Lower, nil)
	lb := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			lo.SetTri(i, j, l.At(i, j))
			lb.Set(i, j, lbar.At(i, j))
		}
	}
	var p mat.Dense
	p.Mul(lo.T(), lb)
	y := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			y.Set(i, j, p.At(i, j))
			y.Set(j, i, p.At(i, j))
		}
		y.Set(i, i, p.At(i, i))
	}
	// G = ½ L⁻ᵀ Y L⁻¹: solve Lᵀ Z = Y, then G = ½ Z L⁻¹ = ½ (L⁻ᵀ Zᵀ)ᵀ.
	lr := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: m, Stride: m, Data: lo.RawTriangular().Data}
	blas64.Trsm(blas.Left, blas.Trans, 1, lr, y.RawMatrix())
	zt := mat.DenseCopyOf(y.T())
	blas64.Trsm(blas.Left, blas.Trans, 1, lr, zt.RawMatrix())
	g := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			g.SetSym(i, j, 0.25*(zt.At(i, j)+zt.At(j, i)))
		}
	}
	return g
}
