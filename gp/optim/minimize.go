package optim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// Objective returns the value to minimise at x and fills grad (len(x)) with
// its gradient. It must not keep x or grad.
type Objective func(x, grad []float64) float64

// Settings configure Minimize. Zero values select the defaults below.
type Settings struct {
	Method string // "lbfgs" (default) or "adam"
	// MaxIter is the iteration budget; 0 evaluates the objective once at x0
	// and returns.
	MaxIter int
	// MaxEvals bounds objective evaluations (including the first); 0 means
	// no bound beyond MaxIter.
	MaxEvals int
	// GradTol stops when the largest absolute gradient entry falls below it.
	// Default 1e-6 for L-BFGS; 0 (off) for Adam.
	GradTol float64
	// LearningRate is Adam's step size; default 0.01.
	LearningRate float64
	// ObjectiveTol stops Adam once the objective changes by less than it
	// between consecutive iterates (0: off), the rule of GPyTorch training
	// loops such as the IFF paper's SKI runs.
	ObjectiveTol float64
	// Stop ends either method once the convergence rule holds on the
	// objectives of the iterations so far (StatusStopRule); the zero Rule
	// (Tol 0) is off.
	Stop Rule
	// FTol ends L-BFGS once one iteration reduces the objective by at most
	// FTol·max(|f_k|, |f_k+1|, 1) (StatusRelReduction): SciPy L-BFGS-B's
	// ftol test, whose default is 2.2·10⁻⁹ (factr 10⁷ × machine ε). Papers
	// trained with scipy.optimize's defaults stopped there; 0 is off. Adam
	// ignores it.
	FTol float64
	// LBFGSMemory is the number of curvature pairs L-BFGS keeps; 0 is
	// DefaultLBFGSMemory. SciPy's L-BFGS-B keeps 10 (maxcor) and
	// torch.optim.LBFGS 100 (history_size): on the few thousand
	// parameters of a sparse GP (Z among them) a longer memory can take
	// fewer iterations for the same O(memory·parameters) work each. Adam
	// ignores it.
	LBFGSMemory int
}

// SciPyFTol is SciPy L-BFGS-B's default ftol (factr 10⁷ × machine ε).
const SciPyFTol = 1e7 * 2.220446049250313e-16

// Method names accepted in Settings.Method.
const (
	LBFGS = "lbfgs"
	Adam  = "adam"
)

// Defaults used when a Settings field is zero.
const (
	DefaultLBFGSGradTol     = 1e-6
	DefaultAdamLearningRate = 0.01
	DefaultLBFGSMemory      = 15 // gonum's optimize.LBFGS default
)

// Status values of a Result.
const (
	StatusEvaluated     = "evaluated at initial point" // MaxIter = 0
	StatusGradient      = "converged: gradient tolerance"
	StatusObjective     = "converged: objective stalled"
	StatusStopRule      = "converged: stopping rule (Rule, stop_tol)"
	StatusRelReduction  = "converged: relative reduction of f ≤ ftol (SciPy's L-BFGS-B test)"
	StatusIterations    = "iteration limit"
	StatusEvaluations   = "evaluation limit"
	StatusNonFinite     = "stopped: non-finite objective or gradient"
	StatusCancelled     = "cancelled"
	StatusLineSearchEnd = "stopped: line search made no progress"
)

// Iteration is reported after every iteration (and once, as iteration 0,
// for the starting point).
type Iteration struct {
	Iter     int
	F        float64 // objective at the iterate
	GradNorm float64 // largest absolute gradient entry
	Elapsed  time.Duration
}

// Result is the outcome of Minimize.
type Result struct {
	X           []float64
	F           float64
	Iterations  int
	Evaluations int
	Status      string
	// Rejected counts L-BFGS trial points where the objective was not
	// finite; the line search treated them as too long a step.
	Rejected int
	// Resets counts the times L-BFGS forgot its curvature pairs and went on
	// with a steepest-descent step after a line search failed while the
	// objective still fell.
	Resets int
}

// ErrNonFinite is wrapped by the error Minimize returns when the objective or
// its gradient is NaN or infinite.
var ErrNonFinite = errors.New("optim: non-finite objective or gradient")

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func allFinite(xs []float64) bool {
	for _, v := range xs {
		if !finite(v) {
			return false
		}
	}
	return true
}

func maxAbs(xs []float64) float64 {
	var m float64
	for _, v := range xs {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// tracker wraps the objective: it counts evaluations, keeps the best finite
// point, and records the first non-finite evaluation.
type tracker struct {
	f     Objective
	evals int
	bestX []float64
	bestF float64
	bestG []float64
	bad   error
	// tolerate makes a non-finite evaluation count as +Inf (a rejected
	// trial point) instead of an error; rejected counts them.
	tolerate bool
	rejected int
	lastX    []float64 // cache of the last evaluation, for gonum's split Func/Grad
	lastF    float64
	lastG    []float64
	cached   bool
}

func newTracker(f Objective, dim int) *tracker {
	return &tracker{f: f, bestF: math.Inf(1), lastX: make([]float64, dim), lastG: make([]float64, dim)}
}

func (t *tracker) eval(x, grad []float64) float64 {
	t.evals++
	for i := range grad {
		grad[i] = 0
	}
	v := t.f(x, grad)
	copy(t.lastX, x)
	copy(t.lastG, grad)
	t.lastF, t.cached = v, true
	if !finite(v) || !allFinite(grad) {
		if t.tolerate {
			t.rejected++
			t.lastF = math.Inf(1)
			return math.Inf(1)
		}
		if t.bad == nil {
			what := "gradient"
			if !finite(v) {
				what = fmt.Sprintf("objective (%g)", v)
			}
			t.bad = fmt.Errorf("%w: %s at evaluation %d", ErrNonFinite, what, t.evals)
		}
		return v
	}
	if v < t.bestF || t.bestX == nil {
		t.bestF = v
		t.bestX = append(t.bestX[:0], x...)
		t.bestG = append(t.bestG[:0], grad...)
	}
	return v
}

func sameX(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Minimize minimises f from x0. It returns the best point found together
// with an error when the objective turned non-finite (wrapping ErrNonFinite)
// or ctx was cancelled (ctx.Err()); the Result is valid in both cases.
func Minimize(ctx context.Context, f Objective, x0 []float64, s Settings, cb func(Iteration)) (Result, error) {
	if len(x0) == 0 {
		return Result{}, errors.New("optim: nothing to optimise (no parameters)")
	}
	if s.MaxIter < 0 || s.MaxEvals < 0 || s.GradTol < 0 || s.LearningRate < 0 || s.ObjectiveTol < 0 || !(s.Stop.Tol >= 0) || !(s.FTol >= 0 && s.FTol < 1) || s.LBFGSMemory < 0 {
		return Result{}, fmt.Errorf("optim: negative setting in %+v", s)
	}
	method := strings.ToLower(s.Method)
	if method == "" {
		method = LBFGS
	}
	if method != LBFGS && method != Adam {
		return Result{}, fmt.Errorf("optim: unknown method %q (valid: %s, %s)", s.Method, Adam, LBFGS)
	}
	if !allFinite(x0) {
		return Result{}, errors.New("optim: non-finite starting point")
	}
	if cb == nil {
		cb = func(Iteration) {}
	}
	start := time.Now()
	tr := newTracker(f, len(x0))
	g0 := make([]float64, len(x0))
	f0 := tr.eval(x0, g0)
	if tr.bad != nil {
		return Result{X: append([]float64(nil), x0...), F: f0, Evaluations: 1, Status: StatusNonFinite},
			fmt.Errorf("%w (at the starting point)", tr.bad)
	}
	cb(Iteration{Iter: 0, F: f0, GradNorm: maxAbs(g0), Elapsed: time.Since(start)})
	if s.MaxIter == 0 || s.MaxEvals == 1 {
		status := StatusEvaluated
		if s.MaxIter != 0 {
			status = StatusEvaluations
		}
		return Result{X: append([]float64(nil), x0...), F: f0, Evaluations: 1, Status: status}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{X: append([]float64(nil), x0...), F: f0, Evaluations: 1, Status: StatusCancelled}, err
	}
	if method == Adam {
		return adam(ctx, tr, x0, f0, g0, s, cb, start)
	}
	return lbfgs(ctx, tr, x0, f0, g0, s, cb, start)
}

// recorder reports major iterations to the callback. gonum sends each
// leg's starting point as its first major iteration and counts it in
// Stats.MajorIterations; it is not a step, so a leg's step k is its major
// iteration k + 1 and the starting point is not reported again.
type recorder struct {
	cb         func(Iteration)
	start      time.Time
	base       int     // steps of earlier legs (see lbfgs)
	last       int     // last iteration reported
	lastF      float64 // its objective
	prevF      float64 // the objective before it
	steps      int     // steps reported
	sinceMajor int     // function evaluations since the last completed iteration
	// The last iterate of the leg and, once its first trial point is
	// evaluated, the reduction the quadratic model promised for the
	// quasi-Newton step, ½|gᵀp| (pending until then; none at a leg's
	// start, whose steepest-descent trial step has no such scale).
	iterX, iterG []float64
	promised     float64
	pending      bool
}

// step records the objective of a reported step.
func (r *recorder) step(f float64) {
	r.prevF, r.lastF = r.lastF, f
	r.steps++
}

// stalled reports whether the last step reduced the objective by at most
// lineSearchStallTol of its size: the iterate is as good as rounding allows.
func (r *recorder) stalled() bool {
	scale := math.Max(math.Max(math.Abs(r.prevF), math.Abs(r.lastF)), 1)
	return r.steps > 0 && r.prevF-r.lastF <= lineSearchStallTol*scale
}

// promisedRounding reports whether the quasi-Newton step the line search
// was trying when it failed promised a reduction of at most
// lineSearchStallTol of f: had the search succeeded, that step would have
// met scipy's relative-reduction test and ended the fit. The search failed
// because the objective's rounding error was larger than the step's gain
// (seen on SGPR at N = 12 947: a promised 4·10⁻⁸ nats against rounding
// noise of 10⁻⁷), so the fit has converged as far as f can show.
func (r *recorder) promisedRounding() bool {
	scale := math.Max(math.Abs(r.lastF), 1)
	return !r.pending && r.promised > 0 && r.promised <= lineSearchStallTol*scale
}

// lineSearchStallTol is scipy L-BFGS-B's default relative reduction
// (factr 1e7 × machine ε): a line search that fails after a step smaller
// than this has converged to rounding, as scipy would have stopped already.
const lineSearchStallTol = 1e7 * 2.220446049250313e-16

func (r *recorder) Init() error { return nil }

func (r *recorder) Record(loc *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if op&optimize.FuncEvaluation != 0 {
		if r.pending && len(loc.X) == len(r.iterX) && len(r.iterG) == len(r.iterX) {
			var gp float64
			for i, g := range r.iterG {
				gp += g * (loc.X[i] - r.iterX[i])
			}
			r.promised, r.pending = math.Abs(gp)/2, false
		}
		if r.sinceMajor++; r.sinceMajor > maxLineSearchEvals {
			return errLineSearchStalled
		}
	}
	if op == optimize.MajorIteration {
		r.sinceMajor = 0
		r.iterX = append(r.iterX[:0], loc.X...)
		r.iterG = append(r.iterG[:0], loc.Gradient...)
		// After a leg's first step the next direction is quasi-Newton,
		// with the unit step that is the model's minimiser.
		r.promised, r.pending = 0, st.MajorIterations > 1
		if st.MajorIterations <= 1 {
			return nil // the leg's starting point, reported already
		}
		r.last = r.base + st.MajorIterations - 1
		r.step(loc.F)
		r.cb(Iteration{Iter: r.last, F: loc.F, GradNorm: maxAbs(loc.Gradient), Elapsed: time.Since(r.start)})
	}
	return nil
}

// legSteps is the number of steps of a finished gonum leg: its major
// iterations less the starting point.
func legSteps(res *optimize.Result) int {
	if res == nil {
		return 0
	}
	return max(res.Stats.MajorIterations-1, 0)
}

func lbfgs(ctx context.Context, tr *tracker, x0 []float64, f0 float64, g0 []float64, s Settings, cb func(Iteration), start time.Time) (out Result, err error) {
	gradTol := s.GradTol
	if gradTol == 0 {
		gradTol = DefaultLBFGSGradTol
	}
	problem := optimize.Problem{
		Func: func(x []float64) float64 {
			return tr.eval(x, make([]float64, len(x)))
		},
		Grad: func(grad, x []float64) {
			if tr.cached && sameX(x, tr.lastX) {
				copy(grad, tr.lastG)
				return
			}
			tr.eval(x, grad)
		},
		// Status is polled after every evaluation: it is how a NaN or a
		// cancelled context stops gonum's loop at once.
		Status: func() (optimize.Status, error) {
			if tr.bad != nil {
				return optimize.Failure, tr.bad
			}
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	rec := &recorder{cb: cb, start: start, lastF: f0}
	conv := &ruleConverger{inner: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-12, Iterations: 50}, stop: newStopper(s.Stop), ftol: s.FTol}
	settings := &optimize.Settings{
		InitValues:        &optimize.Location{F: f0, Gradient: append([]float64(nil), g0...)},
		GradientThreshold: gradTol,
		MajorIterations:   s.MaxIter + 1, // gonum counts the starting point
		Recorder:          rec,
		Converger:         conv,
	}
	if s.MaxEvals > 0 {
		settings.FuncEvaluations = s.MaxEvals - 1 // the first evaluation was ours
	}
	memory := s.LBFGSMemory
	if memory == 0 {
		memory = DefaultLBFGSMemory
	}
	res, err := optimize.Minimize(problem, x0, settings, &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}, Store: memory})
	iters := legSteps(res)
	resets := 0
	for ctx.Err() == nil && tr.bestX != nil && allFinite(tr.bestG) &&
		(s.MaxIter == 0 || iters < s.MaxIter) && (s.MaxEvals == 0 || tr.evals < s.MaxEvals) {
		var ls optimize.Linesearcher
		switch {
		case tr.bad != nil:
			// A trial point where the objective is not finite (typically a
			// failed Cholesky: the line search tried, say, a noise variance
			// of 1e-6) is a step too far, not a failed fit. More–Thuente
			// cannot interpolate through it, so the search restarts once
			// from the best point with backtracking, which only needs to
			// know that the trial was worse and halves the step; later
			// non-finite trials are rejected the same way.
			tr.bad, tr.tolerate, tr.rejected = nil, true, 1
			ls = &optimize.Backtracking{}
		case err != nil && legSteps(res) > 0 && !rec.stalled() && !rec.promisedRounding():
			// The line search failed while the objective still fell: the
			// curvature pairs in the L-BFGS memory describe where the fit
			// was, not where it is, and the direction they give can be one
			// along which no step meets the Wolfe conditions. As scipy's
			// L-BFGS-B does, forget them and go on from the best point with
			// a steepest-descent step. A leg that fails before its first
			// step started from an empty memory: that failure stands.
			resets++
			ls = &optimize.MoreThuente{}
			if tr.tolerate {
				ls = &optimize.Backtracking{}
			}
		}
		if ls == nil {
			break
		}
		tr.cached = false
		// The best point is the last iterate, or a better trial point the
		// failed line search found: then reaching it was a step.
		if tr.bestF < rec.lastF {
			iters++
			rec.last = iters
			rec.step(tr.bestF)
			cb(Iteration{Iter: iters, F: tr.bestF, GradNorm: maxAbs(tr.bestG), Elapsed: time.Since(start)})
			conv.stop.add(-tr.bestF)
			conv.prevF = tr.bestF
		}
		rec.base, rec.sinceMajor = iters, 0
		conv.skipStart = true // the new leg's starting point is in the history already
		settings.InitValues = &optimize.Location{F: tr.bestF, Gradient: append([]float64(nil), tr.bestG...)}
		if s.MaxIter > 0 {
			settings.MajorIterations = s.MaxIter - iters + 1
		}
		if s.MaxEvals > 0 {
			settings.FuncEvaluations = s.MaxEvals - tr.evals
		}
		res, err = optimize.Minimize(problem, append([]float64(nil), tr.bestX...), settings, &optimize.LBFGS{Linesearcher: ls, Store: memory})
		iters += legSteps(res)
	}
	out = Result{X: tr.bestX, F: tr.bestF, Evaluations: tr.evals, Iterations: iters}
	if res != nil {
		// gonum does not record the iteration that meets a stopping rule.
		if iters > rec.last && finite(res.F) {
			cb(Iteration{Iter: iters, F: res.F, GradNorm: maxAbs(res.Gradient), Elapsed: time.Since(start)})
		}
		// Prefer gonum's final iterate when it ties with the best value.
		if finite(res.F) && res.F <= tr.bestF && allFinite(res.X) {
			out.X, out.F = append([]float64(nil), res.X...), res.F
		}
	}
	out.Rejected, out.Resets = tr.rejected, resets
	defer func() {
		if tr.rejected > 0 {
			out.Status += fmt.Sprintf(" (%d non-finite trial point(s) rejected)", tr.rejected)
		}
		if resets > 0 {
			out.Status += fmt.Sprintf(" (L-BFGS memory reset %d time(s) after a failed line search)", resets)
		}
	}()
	if tr.rejected > 0 && out.F >= f0 && ctx.Err() == nil {
		// Every step tried from the start was non-finite: report it.
		out.Status = StatusNonFinite
		return out, fmt.Errorf("%w: no finite step from the starting point", ErrNonFinite)
	}
	switch {
	case tr.bad != nil:
		out.Status = StatusNonFinite
		return out, fmt.Errorf("%w; stopped at the best finite point (f = %g)", tr.bad, tr.bestF)
	case ctx.Err() != nil:
		out.Status = StatusCancelled
		return out, ctx.Err()
	case err != nil:
		// Line-search failures near an optimum are rounding noise, not a
		// failed fit: the best point is still valid, and when the last step
		// had stalled, or the step tried promised no more than rounding,
		// the fit has converged.
		switch {
		case rec.stalled():
			out.Status = StatusObjective + " (the line search then made no progress: " + err.Error() + ")"
		case rec.promisedRounding():
			out.Status = StatusObjective + fmt.Sprintf(" (the next step promised %.2g, below rounding; its line search made no progress: %v)", rec.promised, err)
		default:
			out.Status = StatusLineSearchEnd + " (" + err.Error() + ")"
		}
		return out, nil
	}
	if conv.relReduction {
		out.Status = StatusRelReduction
		return out, nil
	}
	if conv.fired {
		out.Status = StatusStopRule
		return out, nil
	}
	switch res.Status {
	case optimize.GradientThreshold:
		out.Status = StatusGradient
	case optimize.FunctionConvergence, optimize.MethodConverge:
		out.Status = StatusObjective
	case optimize.IterationLimit:
		out.Status = StatusIterations
	case optimize.FunctionEvaluationLimit:
		out.Status = StatusEvaluations
	default:
		out.Status = res.Status.String()
	}
	return out, nil
}

// ruleConverger is gonum's function convergence test followed by the
// online stopping rule, fed with the objective of every major iteration
// (the starting point first). Its history runs on across the restarted leg
// of lbfgs, as the trace does.
type ruleConverger struct {
	inner optimize.Converger
	stop  *stopper
	fired bool
	// skipStart leaves the next location (a restarted leg's starting
	// point, already seen) out of the stopping rule's history.
	skipStart bool
	// ftol is Settings.FTol; prevF the objective of the last iteration
	// (seen: once there is one), relReduction whether ftol ended the fit.
	ftol         float64
	prevF        float64
	seen         bool
	relReduction bool
}

func (c *ruleConverger) Init(dim int) { c.inner.Init(dim) }

func (c *ruleConverger) Converged(loc *optimize.Location) optimize.Status {
	if st := c.inner.Converged(loc); st != optimize.NotTerminated {
		return st
	}
	if c.skipStart {
		c.skipStart = false
		return optimize.NotTerminated
	}
	// SciPy's test: (f_k − f_k+1) ≤ ftol·max(|f_k|, |f_k+1|, 1).
	prev, seen := c.prevF, c.seen
	c.prevF, c.seen = loc.F, true
	if c.ftol > 0 && seen && prev-loc.F <= c.ftol*math.Max(math.Max(math.Abs(prev), math.Abs(loc.F)), 1) {
		c.relReduction = true
		return optimize.FunctionConvergence
	}
	if c.stop.add(-loc.F) {
		c.fired = true
		return optimize.FunctionConvergence
	}
	return optimize.NotTerminated
}

// maxLineSearchEvals ends an L-BFGS run whose line search has evaluated the
// objective this often without completing an iteration. gonum counts only
// completed iterations against MaxIter, and a More–Thuente search that never
// meets its conditions (seen on a converged SGPR fit at N = 2000) otherwise
// evaluates forever; a healthy search needs a handful.
const maxLineSearchEvals = 100

var errLineSearchStalled = fmt.Errorf("line search made no progress in %d evaluations", maxLineSearchEvals)

// Adam's standard constants (Kingma & Ba 2015).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

func adam(ctx context.Context, tr *tracker, x0 []float64, f0 float64, g0 []float64, s Settings, cb func(Iteration), start time.Time) (Result, error) {
	lr := s.LearningRate
	if lr == 0 {
		lr = DefaultAdamLearningRate
	}
	n := len(x0)
	x := append([]float64(nil), x0...)
	prevX := make([]float64, n)
	g := append([]float64(nil), g0...)
	m, v := make([]float64, n), make([]float64, n)
	f := f0
	stop := newStopper(s.Stop)
	stop.add(-f0)
	out := Result{Status: StatusIterations}
	if s.GradTol > 0 && maxAbs(g) < s.GradTol {
		out.Status = StatusGradient
	}
	for it := 1; it <= s.MaxIter && out.Status == StatusIterations; it++ {
		if err := ctx.Err(); err != nil {
			return Result{X: x, F: f, Iterations: it - 1, Evaluations: tr.evals, Status: StatusCancelled}, err
		}
		copy(prevX, x)
		c1 := 1 - math.Pow(adamBeta1, float64(it))
		c2 := 1 - math.Pow(adamBeta2, float64(it))
		for i := range x {
			m[i] = adamBeta1*m[i] + (1-adamBeta1)*g[i]
			v[i] = adamBeta2*v[i] + (1-adamBeta2)*g[i]*g[i]
			x[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + adamEps)
		}
		fNew := tr.eval(x, g)
		if tr.bad != nil {
			return Result{X: prevX, F: f, Iterations: it - 1, Evaluations: tr.evals, Status: StatusNonFinite},
				fmt.Errorf("%w; stopped at the last finite iterate (f = %g)", tr.bad, f)
		}
		stalled := s.ObjectiveTol > 0 && math.Abs(fNew-f) < s.ObjectiveTol
		f = fNew
		out.Iterations = it
		cb(Iteration{Iter: it, F: f, GradNorm: maxAbs(g), Elapsed: time.Since(start)})
		switch {
		case s.GradTol > 0 && maxAbs(g) < s.GradTol:
			out.Status = StatusGradient
		case stalled:
			out.Status = StatusObjective
		case s.MaxEvals > 0 && tr.evals >= s.MaxEvals:
			out.Status = StatusEvaluations
		case stop.add(-f):
			out.Status = StatusStopRule
		}
	}
	out.X, out.F, out.Evaluations = x, f, tr.evals
	return out, nil
}
