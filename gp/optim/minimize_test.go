package optim

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func rosenbrock(x, grad []float64) float64 {
	var f float64
	for i := 0; i+1 < len(x); i++ {
		a, b := 1-x[i], x[i+1]-x[i]*x[i]
		f += a*a + 100*b*b
		grad[i] += -2*a - 400*b*x[i]
		grad[i+1] += 200 * b
	}
	return f
}

// quadratic is ½xᵀAx − bᵀx with A SPD; its minimiser solves Ax = b.
func quadratic(a *mat.SymDense, b []float64) Objective {
	return func(x, grad []float64) float64 {
		n := len(x)
		var f float64
		for i := 0; i < n; i++ {
			var ax float64
			for j := 0; j < n; j++ {
				ax += a.At(i, j) * x[j]
			}
			grad[i] = ax - b[i]
			f += 0.5*x[i]*ax - b[i]*x[i]
		}
		return f
	}
}

func testQuadratic() (*mat.SymDense, []float64, []float64) {
	a := mat.NewSymDense(3, []float64{4, 1, 0, 1, 3, -1, 0, -1, 2})
	b := []float64{1, -2, 0.5}
	var ch mat.Cholesky
	ch.Factorize(a)
	var xs mat.VecDense
	_ = ch.SolveVecTo(&xs, mat.NewVecDense(3, b))
	return a, b, xs.RawVector().Data
}

func TestMinimizeConverges(t *testing.T) {
	a, b, xstar := testQuadratic()
	tests := []struct {
		name  string
		f     Objective
		x0    []float64
		s     Settings
		want  []float64
		tol   float64
		evals int // upper bound
	}{
		{"lbfgs rosenbrock 2d", rosenbrock, []float64{-1.2, 1}, Settings{MaxIter: 500}, []float64{1, 1}, 1e-6, 300},
		{"lbfgs rosenbrock 6d", rosenbrock, []float64{-1, 1, -1, 1, -1, 1}, Settings{MaxIter: 1000}, []float64{1, 1, 1, 1, 1, 1}, 1e-5, 1000},
		{"lbfgs quadratic", quadratic(a, b), []float64{0, 0, 0}, Settings{Method: "LBFGS", MaxIter: 100, GradTol: 1e-10}, xstar, 1e-8, 50},
		{"adam quadratic", quadratic(a, b), []float64{0, 0, 0}, Settings{Method: "adam", MaxIter: 3000, LearningRate: 0.05}, xstar, 1e-4, 3001},
		{"adam rosenbrock", rosenbrock, []float64{-1.2, 1}, Settings{Method: "adam", MaxIter: 20000, LearningRate: 0.02}, []float64{1, 1}, 1e-2, 20001},
	}
	for _, tc := range tests {
		var iters []Iteration
		res, err := Minimize(context.Background(), tc.f, tc.x0, tc.s, func(it Iteration) { iters = append(iters, it) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range tc.want {
			if math.Abs(res.X[i]-tc.want[i]) > tc.tol {
				t.Errorf("%s: x = %v, want %v (status %s, %d iters)", tc.name, res.X, tc.want, res.Status, res.Iterations)
				break
			}
		}
		g := make([]float64, len(res.X))
		if fx := tc.f(res.X, g); fx != res.F {
			t.Errorf("%s: Result.F %g but f(X) = %g", tc.name, res.F, fx)
		}
		if res.Evaluations > tc.evals || res.Evaluations < res.Iterations {
			t.Errorf("%s: %d evaluations for %d iterations", tc.name, res.Evaluations, res.Iterations)
		}
		if len(iters) != res.Iterations+1 || iters[0].Iter != 0 || iters[len(iters)-1].Iter != res.Iterations {
			t.Errorf("%s: %d callbacks for %d iterations", tc.name, len(iters), res.Iterations)
		}
		if tc.s.Method != "adam" && res.Status != StatusGradient && res.Status != StatusObjective {
			t.Errorf("%s: status %q, want convergence", tc.name, res.Status)
		}
	}
}

func TestMinimizeBudgets(t *testing.T) {
	x0 := []float64{-1.2, 1}
	res, err := Minimize(context.Background(), rosenbrock, x0, Settings{}, nil)
	if err != nil || res.Evaluations != 1 || res.Iterations != 0 || res.X[0] != -1.2 || math.Abs(res.F-24.2) > 1e-12 || res.Status != StatusEvaluated {
		t.Errorf("MaxIter 0: %+v, %v; want one evaluation at x0 (f = 24.2)", res, err)
	}
	for _, method := range []string{LBFGS, Adam} {
		res, err = Minimize(context.Background(), rosenbrock, x0, Settings{Method: method, MaxIter: 5}, nil)
		if err != nil || res.Iterations != 5 || res.Status != StatusIterations || !(res.F < 24.2) {
			t.Errorf("%s MaxIter 5: %+v, %v", method, res, err)
		}
		res, err = Minimize(context.Background(), rosenbrock, x0, Settings{Method: method, MaxIter: 1000, MaxEvals: 12}, nil)
		if err != nil || res.Evaluations > 12 || res.Status != StatusEvaluations {
			t.Errorf("%s MaxEvals 12: %+v, %v", method, res, err)
		}
	}
	for _, s := range []Settings{{Method: "bfgs", MaxIter: 1}, {MaxIter: -1}} {
		if _, err := Minimize(context.Background(), rosenbrock, x0, s, nil); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if _, err := Minimize(context.Background(), rosenbrock, nil, Settings{MaxIter: 1}, nil); err == nil {
		t.Error("empty x0: no error")
	}
}

// The objective is NaN beyond x = 2 while its minimum is at x = 5. L-BFGS
// treats a non-finite trial point as a step too far: it backtracks and ends
// at the boundary x ≈ 2 without an error, saying how many trials it
// rejected. Adam has no line search: it stops at the best finite point
// with an ErrNonFinite error.
func TestMinimizeNonFinite(t *testing.T) {
	f := func(x, grad []float64) float64 {
		if x[0] > 2 {
			return math.NaN()
		}
		d := x[0] - 5
		grad[0] = 2 * d
		return d * d
	}
	res, err := Minimize(context.Background(), f, []float64{0}, Settings{Method: LBFGS, MaxIter: 100}, nil)
	if err != nil {
		t.Errorf("lbfgs: error %v, want none (non-finite trials are rejected)", err)
	}
	if !(res.X[0] <= 2 && res.X[0] > 1.9) || !strings.Contains(res.Status, "non-finite trial") {
		t.Errorf("lbfgs: %+v; want x just below 2 and the rejected trials in the status", res)
	}
	res, err = Minimize(context.Background(), f, []float64{0}, Settings{Method: Adam, MaxIter: 10000, LearningRate: 0.5}, nil)
	if !errors.Is(err, ErrNonFinite) {
		t.Errorf("adam: error %v, want ErrNonFinite", err)
	}
	if res.Status != StatusNonFinite || !(res.X[0] <= 2) || math.IsNaN(res.F) || res.F >= 25 {
		t.Errorf("adam: %+v; want a finite improved point with x ≤ 2", res)
	}
	// Non-finite everywhere but the start: no step is possible, an error.
	h := func(x, grad []float64) float64 {
		if x[0] != 1 {
			return math.Inf(1)
		}
		grad[0] = 2
		return 1
	}
	if res, err := Minimize(context.Background(), h, []float64{1}, Settings{MaxIter: 10}, nil); !errors.Is(err, ErrNonFinite) || res.X[0] != 1 {
		t.Errorf("no finite step: %+v, %v; want ErrNonFinite at x0", res, err)
	}
	// A NaN gradient at the start counts too.
	g := func(x, grad []float64) float64 { grad[0] = math.NaN(); return x[0] * x[0] }
	if _, err := Minimize(context.Background(), g, []float64{1}, Settings{MaxIter: 10}, nil); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN gradient: %v", err)
	}
}

func TestMinimizeCancel(t *testing.T) {
	for _, method := range []string{LBFGS, Adam} {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := Minimize(ctx, rosenbrock, []float64{-1.2, 1}, Settings{Method: method, MaxIter: 1000}, func(it Iteration) {
			if it.Iter == 3 {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) || res.Status != StatusCancelled || res.Iterations > 4 || !(res.F < 24.2) {
			t.Errorf("%s: %+v, %v", method, res, err)
		}
		cancel()
	}
}

func BenchmarkLBFGSRosenbrock(b *testing.B) {
	x0 := make([]float64, 100)
	for b.Loop() {
		if _, err := Minimize(context.Background(), rosenbrock, x0, Settings{MaxIter: 2000}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Adam with ObjectiveTol stops at the first iterate whose objective changed
// by less than the tolerance, and only then.
func TestAdamObjectiveTol(t *testing.T) {
	a, b, _ := testQuadratic()
	var fs []float64
	res, err := Minimize(context.Background(), quadratic(a, b), []float64{0, 0, 0},
		Settings{Method: Adam, MaxIter: 5000, LearningRate: 0.05, ObjectiveTol: 1e-6}, func(it Iteration) { fs = append(fs, it.F) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusObjective || res.Iterations >= 5000 {
		t.Fatalf("status %q after %d iterations, want %q before the budget", res.Status, res.Iterations, StatusObjective)
	}
	n := len(fs)
	if d := math.Abs(fs[n-1] - fs[n-2]); d >= 1e-6 {
		t.Errorf("stopped with |Δf| = %g", d)
	}
	for i := 1; i < n-1; i++ {
		if math.Abs(fs[i]-fs[i-1]) < 1e-6 {
			t.Fatalf("iteration %d already had |Δf| = %g but Adam went on", i, math.Abs(fs[i]-fs[i-1]))
		}
	}
	if _, err := Minimize(context.Background(), quadratic(a, b), []float64{0}, Settings{Method: Adam, ObjectiveTol: -1}, nil); err == nil {
		t.Error("negative ObjectiveTol accepted")
	}
}

// Every reported L-BFGS iteration is a step: gonum hands each leg's starting
// point over as a "major iteration", which must be neither reported again
// (iteration 1 equal to iteration 0, a restarted leg repeating its start)
// nor counted against MaxIter or Result.Iterations.
func TestLBFGSCountsSteps(t *testing.T) {
	nanBeyond2 := func(x, grad []float64) float64 {
		if x[0] > 2 {
			return math.NaN()
		}
		d := x[0] - 5
		grad[0] = 2 * d
		return d * d
	}
	tests := []struct {
		name    string
		f       Objective
		x0      []float64
		maxIter int
		restart bool // a non-finite trial point restarts the search
	}{
		{"rosenbrock, capped", rosenbrock, []float64{-1.2, 1}, 5, false},
		{"rosenbrock, to convergence", rosenbrock, []float64{-1.2, 1}, 500, false},
		{"non-finite beyond 2, restarted", nanBeyond2, []float64{0}, 100, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var iters []Iteration
			res, err := Minimize(context.Background(), tc.f, tc.x0, Settings{MaxIter: tc.maxIter}, func(it Iteration) { iters = append(iters, it) })
			if err != nil {
				t.Fatal(err)
			}
			if tc.restart != (res.Rejected > 0) {
				t.Fatalf("rejected %d trial points; the case expects a restart: %v", res.Rejected, tc.restart)
			}
			for i, it := range iters {
				if it.Iter != i {
					t.Fatalf("callback %d reports iteration %d (iterations %v)", i, it.Iter, iterNumbers(iters))
				}
				if i > 0 && !(it.F < iters[i-1].F) {
					t.Errorf("iteration %d: f = %.17g, not below iteration %d's %.17g: not a step", i, it.F, i-1, iters[i-1].F)
				}
			}
			if res.Iterations != len(iters)-1 {
				t.Errorf("Result.Iterations = %d for %d steps reported", res.Iterations, len(iters)-1)
			}
			if res.Status == StatusIterations && res.Iterations != tc.maxIter {
				t.Errorf("stopped at the iteration limit after %d steps, MaxIter %d", res.Iterations, tc.maxIter)
			}
		})
	}
}

func iterNumbers(its []Iteration) []int {
	var n []int
	for _, it := range its {
		n = append(n, it.Iter)
	}
	return n
}

// A line search that fails after the objective has stalled to rounding (a
// gradient slightly inconsistent with f, as GP objectives' are near their
// optimum), or on a step whose promised gain is below rounding while the
// last step's was not, ends a converged fit; one that fails while f still
// falls does not.
func TestLBFGSLineSearchEndAtRounding(t *testing.T) {
	biased := func(x, grad []float64) float64 {
		var s float64
		for i := range x {
			d := x[i] - float64(i+1)
			s += d * d * float64(i+1)
			grad[i] = 2*d*float64(i+1) + 1e-4 // rounding-like error
		}
		return 1000 + s
	}
	// Rounding noise of 3e-6 in f ≈ 1000 (3e-9 relative, as SGPR's bound
	// at N = 12 947 has 1e-7 in 3364): L-BFGS's last step gains 5.9e-6,
	// above scipy's 2.2e-9 × 1000, the next promises 3e-7 and its line
	// search fails on the noise.
	noisy := func(x, grad []float64) float64 {
		var s, phase float64
		for i := range x {
			phase += x[i] * float64(i+3)
		}
		for i := range x {
			l := math.Pow(100, float64(i))
			d := x[i] - float64(i+1)
			s += 0.5*l*d*d + 0.1*d*d*d*d
			grad[i] = l*d + 0.4*d*d*d
		}
		return 1000 + s + 3e-6*math.Sin(1e9*phase)
	}
	tests := []struct {
		name      string
		f         Objective
		x0        []float64
		converged bool
	}{
		{"stalled at rounding", biased, []float64{5, -3, 2, 7}, true},
		{"next step's promise below rounding", noisy, []float64{5, -3, 2, 7}, true},
		{"failed mid-descent", wrongSignBeyondOne, []float64{0}, false},
	}
	for _, tc := range tests {
		res, err := Minimize(context.Background(), tc.f, tc.x0, Settings{MaxIter: 500, GradTol: 1e-300}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(res.Status, "line search") {
			t.Fatalf("%s: status %q; the case must end in a failed line search", tc.name, res.Status)
		}
		if got := strings.HasPrefix(res.Status, "converged:"); got != tc.converged {
			t.Errorf("%s: status %q, converged %v, want %v", tc.name, res.Status, got, tc.converged)
		}
	}
}

// After a line search fails while the objective still falls, L-BFGS
// forgets its curvature pairs and goes on with a steepest-descent step (as
// scipy's L-BFGS-B does); a leg that fails from an empty memory ends the
// fit.
func TestLBFGSResetsStaleMemory(t *testing.T) {
	// A steep wall for x < 0 and a gentle slope to the minimum at x = 10,
	// with rounding-like noise of 1e-6 in f (not in the gradient). From
	// x = −1 the first step lands at 0; its curvature pair says 1e6, so
	// the next quasi-Newton step is ≈ 1e-7 long and gains ≈ 1e-8, below
	// the noise: the line search cannot meet the Wolfe conditions along
	// it, while steepest descent from 0 gains 0.5.
	wallThenSlope := func(x, grad []float64) float64 {
		w := math.Min(x[0], 0)
		d := x[0] - 10
		grad[0] = 1e6*w + 1e-2*d
		return 0.5e6*w*w + 0.5e-2*d*d + 1e-6*math.Sin(1e9*x[0])
	}
	tests := []struct {
		name      string
		f         Objective
		x0        []float64
		converged bool
		resets    int
		want      float64 // x at the end (converged cases)
	}{
		{"stale memory after a curvature drop", wallThenSlope, []float64{-1}, true, 1, 10},
		{"failing again from an empty memory", wrongSignBeyondOne, []float64{0}, false, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var iters []Iteration
			res, err := Minimize(context.Background(), tc.f, tc.x0, Settings{MaxIter: 200, GradTol: 1e-6}, func(it Iteration) { iters = append(iters, it) })
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.HasPrefix(res.Status, "converged:"); got != tc.converged {
				t.Fatalf("status %q (x = %v after %d iterations), converged %v, want %v", res.Status, res.X, res.Iterations, got, tc.converged)
			}
			if res.Resets != tc.resets {
				t.Errorf("%d memory resets, want %d (status %q)", res.Resets, tc.resets, res.Status)
			}
			if tc.converged && math.Abs(res.X[0]-tc.want) > 1e-3 {
				t.Errorf("x = %v, want %v", res.X, tc.want)
			}
			if res.Iterations != len(iters)-1 {
				t.Errorf("Result.Iterations = %d for %d steps reported", res.Iterations, len(iters)-1)
			}
			for i, it := range iters {
				if it.Iter != i {
					t.Fatalf("callback %d reports iteration %d (iterations %v)", i, it.Iter, iterNumbers(iters))
				}
			}
		})
	}
}

// wrongSignBeyondOne is (x − 5)² with a gradient that points uphill beyond
// x = 1: a line search from there cannot succeed.
func wrongSignBeyondOne(x, grad []float64) float64 {
	d := x[0] - 5
	grad[0] = 2 * d
	if x[0] >= 1 {
		grad[0] = -2 * d
	}
	return d * d
}

// FTol is SciPy L-BFGS-B's relative-reduction test: the fit ends at the
// first iteration whose reduction is at most ftol·max(|f_k|, |f_k+1|, 1),
// and not before. Rosenbrock is offset by 10³ so that the scale, not the
// floor of 1, sets the threshold.
func TestLBFGSFTol(t *testing.T) {
	const offset = 1e3
	f := func(x, grad []float64) float64 { return rosenbrock(x, grad) + offset }
	for _, ftol := range []float64{1e-4, 1e-7, SciPyFTol} {
		fs := []float64{}
		res, err := Minimize(context.Background(), f, []float64{-1, 1, -1, 1, -1, 1}, Settings{MaxIter: 5000, FTol: ftol},
			func(it Iteration) { fs = append(fs, it.F) })
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusRelReduction {
			t.Fatalf("ftol %g: status %q after %d iterations, want %q", ftol, res.Status, res.Iterations, StatusRelReduction)
		}
		met := func(i int) bool {
			return fs[i-1]-fs[i] <= ftol*math.Max(math.Max(math.Abs(fs[i-1]), math.Abs(fs[i])), 1)
		}
		n := len(fs)
		if !met(n - 1) {
			t.Errorf("ftol %g: stopped after a reduction of %g at f = %g", ftol, fs[n-2]-fs[n-1], fs[n-1])
		}
		for i := 1; i < n-1; i++ {
			if met(i) {
				t.Fatalf("ftol %g: iteration %d already met the test (reduction %g) but L-BFGS went on", ftol, i, fs[i-1]-fs[i])
			}
		}
		if res.Iterations != n-1 {
			t.Errorf("ftol %g: %d iterations reported, %d in the trace", ftol, res.Iterations, n-1)
		}
		t.Logf("ftol %g: %d iterations, f − offset = %.3g", ftol, res.Iterations, res.F-offset)
	}
	if _, err := Minimize(context.Background(), rosenbrock, []float64{0, 0}, Settings{FTol: -1}, nil); err == nil {
		t.Error("negative FTol accepted")
	}
}

// TestLBFGSMemory: LBFGSMemory is the number of curvature pairs L-BFGS
// keeps. 0 is DefaultLBFGSMemory (the same bits as asking for it), and on
// an ill-conditioned quadratic (eigenvalues 1 … 10⁴ in 60 dimensions) a
// memory as long as the dimension takes far fewer iterations to reduce the
// objective 10¹⁰-fold than a memory of 2, as L-BFGS nears conjugate
// gradients. A negative memory is refused.
func TestLBFGSMemory(t *testing.T) {
	const n = 60
	quad := func(x, grad []float64) float64 {
		var f float64
		for i, v := range x {
			d := math.Pow(1e4, float64(i)/(n-1))
			grad[i] = d * v
			f += 0.5 * d * v * v
		}
		return f
	}
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = 1
	}
	// run returns the trace and the first iteration at which f fell below
	// 10⁻¹⁰ of its start.
	run := func(memory int) ([]float64, []float64, int) {
		t.Helper()
		var fs []float64
		res, err := Minimize(context.Background(), quad, x0, Settings{MaxIter: 5000, LBFGSMemory: memory},
			func(it Iteration) { fs = append(fs, it.F) })
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range fs {
			if f <= 1e-10*fs[0] {
				return fs, res.X, i
			}
		}
		t.Fatalf("memory %d: f = %g after %d iterations (%s), never below 10⁻¹⁰ of %g", memory, res.F, res.Iterations, res.Status, fs[0])
		return nil, nil, 0
	}
	defTrace, defX, def := run(0)
	explicitTrace, explicitX, _ := run(DefaultLBFGSMemory)
	if !slices.Equal(defTrace, explicitTrace) || !slices.Equal(defX, explicitX) {
		t.Errorf("memory 0 and memory %d differ", DefaultLBFGSMemory)
	}
	_, _, short := run(2)
	_, _, long := run(n)
	t.Logf("iterations to 10⁻¹⁰ of the start: memory 2 %d, %d %d, %d %d", short, DefaultLBFGSMemory, def, n, long)
	if !(long < def && def < short) {
		t.Errorf("iterations by memory: 2 → %d, %d → %d, %d → %d; want fewer with a longer memory", short, DefaultLBFGSMemory, def, n, long)
	}
	if _, err := Minimize(context.Background(), quad, x0, Settings{LBFGSMemory: -1}, nil); err == nil {
		t.Error("negative LBFGSMemory accepted")
	}
}
