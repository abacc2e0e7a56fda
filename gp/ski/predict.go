package ski

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// PosteriorSettings control the solves behind predictions. The defaults
// (DefaultPosteriorSettings) are GPyTorch's evaluation settings.
type PosteriorSettings struct {
	CGTol        float64 // relative residual of the mean solve (eval_cg_tolerance)
	MaxCG        int     // CG iteration cap
	PrecondRank  int     // pivoted-Cholesky preconditioner rank of the mean solve
	VarianceRank int     // Lanczos steps k of the variance cache (max_root_decomposition_size)
	// LanczosStart is the variance cache's Lanczos start vector: "probe"
	// (GPyTorch's InterpolatedPredictionStrategy under fast_pred_var: the
	// column W K_grid e_j of the train-by-grid covariance for a grid point j
	// drawn uniformly, num_probe_vectors = 1; also when empty) or "random"
	// (a Gaussian vector).
	LanczosStart string
}

// LanczosStarts lists the valid PosteriorSettings.LanczosStart values.
var LanczosStarts = []string{"probe", "random"}

// DefaultPosteriorSettings: CG to relative residual 0.01, rank-15
// preconditioner, a rank-100 Lanczos variance cache.
func DefaultPosteriorSettings() PosteriorSettings {
	return PosteriorSettings{CGTol: 0.01, MaxCG: 1000, PrecondRank: 15, VarianceRank: 100, LanczosStart: "probe"}
}

// Check reports the first invalid field.
func (s PosteriorSettings) Check() error {
	switch {
	case !(s.CGTol > 0) || math.IsInf(s.CGTol, 0):
		return fmt.Errorf("ski: predict_cg_tolerance must be positive and finite, got %v", s.CGTol)
	case s.MaxCG < 1:
		return fmt.Errorf("ski: max_cg_iterations must be ≥ 1, got %d", s.MaxCG)
	case s.PrecondRank < 0:
		return fmt.Errorf("ski: preconditioner_rank must be ≥ 0, got %d", s.PrecondRank)
	case s.VarianceRank < 1:
		return fmt.Errorf("ski: variance_rank must be ≥ 1, got %d", s.VarianceRank)
	case s.LanczosStart != "" && s.LanczosStart != "probe" && s.LanczosStart != "random":
		return fmt.Errorf("ski: lanczos_start must be one of %q, got %q", LanczosStarts, s.LanczosStart)
	}
	return nil
}

// Posterior predicts with the SKI posterior given training targets:
//
//	mean(x*) = μ + w*ᵀ K_grid Wᵀ α,          α = K̂⁻¹(y − μ),
//	var(x*)  = w*ᵀ K_grid w* − ‖w*ᵀ K_grid Wᵀ R‖²,   K̂⁻¹ ≈ R Rᵀ,
//
// where w* are the interpolation weights of x*. The mean cache K_grid Wᵀ α
// (M values) comes from one preconditioned CG solve. The variance cache
// K_grid Wᵀ R (M×k) comes from k Lanczos steps on K̂ with full
// reorthogonalisation, K̂ Q ≈ Q T, so that K̂⁻¹ ≈ Q T⁻¹ Qᵀ = R Rᵀ with
// R = Q L⁻ᵀ and T = LLᵀ (LOVE, Pleiss et al. 2018). With k ≥ N the Krylov
// space is complete and both are exact; otherwise the quadratic form is
// underestimated. Each test point then costs O(4^D k).
type Posterior struct {
	op        *Operator
	mu        float64
	meanCache []float64 // K_grid Wᵀ α
	varCache  []float64 // K_grid Wᵀ R, M×k row-major
	rank      int
	CGIters   int     // iterations of the mean solve
	CGResid   float64 // its final relative residual
}

// NewPosterior builds the prediction caches of op for targets y and
// constant mean mu. rng draws the Lanczos start vector.
func (op *Operator) NewPosterior(y []float64, mu float64, s PosteriorSettings, rng *rand.Rand) (*Posterior, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	n := op.N()
	if len(y) != n {
		return nil, fmt.Errorf("ski: %d targets for %d inputs", len(y), n)
	}
	if rng == nil {
		return nil, errors.New("ski: NewPosterior needs a random source for the Lanczos start vector")
	}
	pre, err := newPivChol(op, s.PrecondRank)
	if err != nil {
		return nil, err
	}
	r := make([]float64, n)
	for i, v := range y {
		r[i] = v - mu
	}
	res := op.pcg([][]float64{r}, pre, s.CGTol, 1, s.MaxCG)
	post := &Posterior{op: op, mu: mu, CGIters: res.iters, CGResid: res.resid}
	post.meanCache = make([]float64, op.grid.Len())
	op.w.ScatterAdd(post.meanCache, res.x[0])
	op.gridMul(op.pool[0], post.meanCache)

	rt, err := op.lanczosInvRoot(min(s.VarianceRank, n), op.lanczosStart(s.LanczosStart, rng))
	if err != nil {
		return nil, err
	}
	k, m := len(rt), op.grid.Len()
	post.rank = k
	post.varCache = make([]float64, m*k)
	cols := make([][]float64, k)
	op.parallel(k, func(ws *workspace, j int) {
		g := make([]float64, m)
		op.w.ScatterAdd(g, rt[j])
		op.gridMul(ws, g)
		cols[j] = g
	})
	for j, g := range cols {
		for i, v := range g {
			post.varCache[i*k+j] = v
		}
	}
	return post, nil
}

// lanczosStart draws the variance cache's Lanczos start vector (see
// PosteriorSettings.LanczosStart).
func (op *Operator) lanczosStart(kind string, rng *rand.Rand) []float64 {
	q := make([]float64, op.N())
	if kind == "random" {
		for i := range q {
			q[i] = rng.NormFloat64()
		}
		return q
	}
	g := make([]float64, op.grid.Len())
	g[rng.IntN(len(g))] = 1
	op.gridMul(op.pool[0], g)
	op.w.Gather(q, g)
	return q
}

// lanczosInvRoot runs k Lanczos steps on K̂ from start (normalised here),
// with full reorthogonalisation, and returns the columns of R = Q L⁻ᵀ
// (T = LLᵀ), so that R Rᵀ = Q T⁻¹ Qᵀ. It stops early when the Krylov space
// becomes invariant. In exact arithmetic w ᵀQ T⁻¹ Qᵀw ≤ wᵀK̂⁻¹w for every w
// (the Krylov space restricts the maximiser of 2xᵀw − xᵀK̂x), so a rank-k
// cache can only overstate the predictive variance, never make it negative.
func (op *Operator) lanczosInvRoot(k int, start []float64) ([][]float64, error) {
	n := op.N()
	q := append([]float64(nil), start...)
	nrm := math.Sqrt(dot(q, q))
	if !(nrm > 0) {
		return nil, errors.New("ski: Lanczos start vector is zero")
	}
	scal(q, 1/nrm)
	var qs [][]float64
	var diag, off []float64
	w := make([]float64, n)
	for j := 0; j < k; j++ {
		qs = append(qs, q)
		op.Mul([][]float64{w}, [][]float64{q})
		a := dot(q, w)
		diag = append(diag, a)
		for pass := 0; pass < 2; pass++ { // full reorthogonalisation, twice is enough
			for _, qi := range qs {
				axpy(w, -dot(qi, w), qi)
			}
		}
		b := math.Sqrt(dot(w, w))
		if j == k-1 || !(b > 1e-10*math.Abs(a)) {
			break
		}
		off = append(off, b)
		q = make([]float64, n)
		for i := range q {
			q[i] = w[i] / b
		}
	}
	r := len(diag)
	t := mat.NewSymDense(r, nil)
	for j := 0; j < r; j++ {
		t.SetSym(j, j, diag[j])
		if j+1 < r {
			t.SetSym(j, j+1, off[j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(t) {
		return nil, fmt.Errorf("ski: Lanczos tridiagonal (%d×%d) of K̂ is not positive definite", r, r)
	}
	var l mat.TriDense
	ch.LTo(&l)
	// R = Q L⁻ᵀ: row i of R solves L rᵢ = Qᵢ (Q's i-th row), column by column.
	out := make([][]float64, r)
	for j := range out {
		out[j] = make([]float64, n)
	}
	row := mat.NewVecDense(r, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			row.SetVec(j, qs[j][i])
		}
		if err := row.SolveVec(&l, row); err != nil {
			return nil, fmt.Errorf("ski: variance cache: %w", err)
		}
		for j := 0; j < r; j++ {
			out[j][i] = row.AtVec(j)
		}
	}
	return out, nil
}

func scal(v []float64, a float64) {
	for i := range v {
		v[i] *= a
	}
}

func axpy(dst []float64, a float64, x []float64) {
	for i, v := range x {
		dst[i] += a * v
	}
}

// Rank is the number of Lanczos vectors in the variance cache.
func (p *Posterior) Rank() int { return p.rank }

// Predict returns the predictive mean and latent variance at x (N*×D), and
// how many points lay outside the grid and were clamped to its edge. The
// variance is not clipped: SKI's can be negative.
func (p *Posterior) Predict(x *mat.Dense) (mean, varf []float64, clamped int, err error) {
	op := p.op
	w, err := op.grid.Interpolate(x)
	if err != nil {
		return nil, nil, 0, err
	}
	tmp := &Operator{grid: op.grid, w: w, hyp: op.hyp, cols: op.cols}
	kss := tmp.Diag()
	mean, varf = make([]float64, w.N), make([]float64, w.N)
	s, k := w.Stencil, p.rank
	acc := make([]float64, k)
	for i := 0; i < w.N; i++ {
		idx, val := w.Idx[i*s:(i+1)*s], w.Val[i*s:(i+1)*s]
		m := p.mu
		zero(acc)
		for e, j := range idx {
			m += val[e] * p.meanCache[j]
			axpy(acc, val[e], p.varCache[int(j)*k:int(j)*k+k])
		}
		mean[i] = m
		varf[i] = kss[i] - dot(acc, acc)
	}
	return mean, varf, w.Clamped, nil
}
