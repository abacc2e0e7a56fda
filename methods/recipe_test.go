package methods

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"sgplab/gp/optim"
)

// TestResolveRecipe: what a grid's fit settings replace in a default
// recipe. An optimiser named by the grid replaces the default's and its
// natural gradients; natgrad_step asks for them; Adam's step is the
// grid's, else the default's, else optim's; with L-BFGS it is 0.
func TestResolveRecipe(t *testing.T) {
	ng := Recipe{Optimizer: optim.Adam, LearningRate: 0.05, NatGrad: 1, Iterations: 40}
	svgp, err := Lookup("svgp")
	if err != nil {
		t.Fatal(err)
	}
	withNG, err := svgp.Validate(map[string]any{"natgrad_step": 0.3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		def  Recipe
		p    Params
		opt  FitOptions
		want Recipe
	}{
		{"defaults", ng, Params{}, FitOptions{Iterations: 7}, Recipe{Optimizer: optim.Adam, LearningRate: 0.05, NatGrad: 1, Iterations: 7}},
		{"named adam drops natural gradients", ng, Params{}, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: 0.05}},
		{"named lbfgs", ng, Params{}, FitOptions{Optimizer: "LBFGS", LearningRate: 0.2}, Recipe{Optimizer: optim.LBFGS}},
		{"grid rate", ng, Params{}, FitOptions{LearningRate: 0.2}, Recipe{Optimizer: optim.Adam, LearningRate: 0.2, NatGrad: 1}},
		{"natgrad_step", Recipe{Optimizer: optim.LBFGS}, withNG, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, NatGrad: 0.3}},
		{"optim's rate", Recipe{Optimizer: optim.LBFGS}, Params{}, FitOptions{Optimizer: "adam"}, Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate}},
		{"stop", Recipe{Optimizer: optim.LBFGS, StopTol: 1e-5}, Params{}, FitOptions{Stop: optim.Rule{Tol: 1e-3}}, Recipe{Optimizer: optim.LBFGS, StopTol: 1e-3}},
		{"stop window", Recipe{Optimizer: optim.Adam, StopTol: 1e-5, StopWindow: 1000}, Params{}, FitOptions{Stop: optim.Rule{Tol: 1e-4}},
			Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, StopTol: 1e-4, StopWindow: 1000}},
		{"no stop, no window", Recipe{Optimizer: optim.Adam, StopTol: 1e-5, StopWindow: 1000}, Params{}, FitOptions{Iterations: 50},
			Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, Iterations: 50}},
		{"the caller's window", Recipe{Optimizer: optim.Adam, StopTol: 1e-5, StopWindow: 1000}, Params{}, FitOptions{Stop: optim.Rule{Tol: 1e-5, MinWindow: 40}},
			Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, StopTol: 1e-5, StopWindow: 40}},
		{"no fit", Recipe{}, Params{}, FitOptions{Optimizer: "adam", Iterations: 3}, Recipe{Iterations: 3}},
	} {
		if got := resolveRecipe(tc.def, tc.p, tc.opt); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestDeclaredRecipeRuns: every method fits by the optimiser its declared
// default recipe names (the trace's phase), so that what `sgplab methods`
// shows and a run stores (Method.Recipe) is what runs.
func TestDeclaredRecipeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every method")
	}
	for _, m := range All() {
		c, ok := reproCases[m.Name]
		if !ok {
			c = reproDefault
		}
		t.Run(m.Name, func(t *testing.T) {
			raw := maps.Clone(c.raw)
			if raw == nil {
				raw = map[string]any{}
			}
			if paramDocOf(m, "init_iterations") != nil {
				raw["init_iterations"] = int64(0) // its phases are relabelled init/all
			}
			p, err := m.Validate(raw)
			if err != nil {
				t.Fatal(err)
			}
			train := reproData(1, min(c.n, 300), c.dim)
			opt := FitOptions{Iterations: 2, Seed: 1, Task: Regression}
			want := m.Recipe(p, opt, train.N())
			model, err := Build(m.Name, raw)
			if err != nil {
				t.Fatal(err)
			}
			phases := map[string]bool{}
			if _, err := model.Fit(context.Background(), train, opt, func(pr Progress) { phases[pr.Phase] = true }); err != nil {
				t.Fatal(err)
			}
			var ran []string
			for ph := range phases {
				ran = append(ran, ph)
			}
			phase := want.Optimizer
			if want.NatGrad > 0 {
				phase = "natgrad+adam"
			}
			switch {
			case want.Optimizer == "" && len(ran) > 0:
				t.Errorf("declared no optimisation, ran phases %v", ran)
			case want.Optimizer != "" && (len(ran) != 1 || !strings.HasPrefix(ran[0], phase)):
				t.Errorf("declared %s (phase %s), ran phases %v", want, phase, ran)
			}
		})
	}
}

// TestMinibatchDefaultStartsWarm: every method whose default minibatch
// recipe has natural gradients starts warm (comparable defaults), and a
// warm start (3 iterations here) runs before the natural gradients.
func TestMinibatchDefaultStartsWarm(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every ELBO method")
	}
	var warmed []string
	for _, m := range All() {
		c, ok := reproCases[m.Name]
		if !ok {
			c = reproDefault
		}
		raw := maps.Clone(c.raw)
		if raw == nil {
			raw = map[string]any{}
		}
		if paramDocOf(m, "objective") != nil {
			raw["objective"] = "svgp"
		}
		if paramDocOf(m, "init_iterations") != nil {
			raw["init_iterations"] = int64(0)
		}
		p, err := m.Validate(raw)
		if err != nil {
			continue // an ELBO this method's case cannot take
		}
		train := reproData(1, min(c.n, 300), c.dim)
		opt := FitOptions{Iterations: 2, Seed: 1, Task: Regression, BatchSize: train.N() / 4}
		if r := m.Recipe(p, opt, train.N()); r.WarmStart == 0 {
			if r.NatGrad > 0 {
				t.Errorf("%s: natural gradients without the warm start: %s", m.Name, r)
			}
			continue
		}
		warmed = append(warmed, m.Name)
		raw["warm_start_iterations"] = int64(3) // the default's 100 take long for the interval features
		t.Run(m.Name, func(t *testing.T) {
			model, err := Build(m.Name, raw)
			if err != nil {
				t.Fatal(err)
			}
			phases := map[string]int{}
			if _, err := model.Fit(context.Background(), train, opt, func(pr Progress) { phases[pr.Phase]++ }); err != nil {
				t.Fatal(err)
			}
			if len(phases) != 2 || phases["warm"] == 0 || phases["natgrad+adam"] != 3 {
				t.Errorf("phases %v, want the warm start and 2 natural-gradient steps", phases)
			}
		})
	}
	if len(warmed) < 8 {
		t.Errorf("only %v start warm", warmed)
	}
	t.Logf("start warm: %v", warmed)
}

func paramDocOf(m Method, name string) *ParamDoc {
	for i := range m.Params {
		if m.Params[i].Name == name {
			return &m.Params[i]
		}
	}
	return nil
}

// TestMinibatchStopWindow: a minibatch fit by the default recipe is judged
// converged over at least minibatchStopWindow iterations, and so ends at a
// model close to the optimum instead of where the ELBO's noise first hides
// its climb. Before the window, SVGP stopped "converged" after a few dozen
// iterations with an ELBO far below the collapsed bound's optimum (the
// SVGP optimum for a Gaussian likelihood); now it runs past 2·window and
// ends within 0.02 nats per point of it.
func TestMinibatchStopWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("fits SVGP for thousands of minibatch steps")
	}
	const n, m, batch = 600, 8, 60
	train := reproData(5, n, 1)
	raw := map[string]any{"num_inducing": int64(m), "noise_variance": 0.1}
	fit := func(method string, mini bool) FitResult {
		t.Helper()
		meth, err := Lookup(method)
		if err != nil {
			t.Fatal(err)
		}
		p, err := meth.Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		def := meth.DefaultFit(p, FitCase{Task: Regression, Minibatch: mini})
		opt := FitOptions{Iterations: def.Iterations, Seed: 3, Task: Regression, Stop: optim.Rule{Tol: def.StopTol, Floor: n}}
		if mini {
			opt.BatchSize = batch
			if def.StopWindow != minibatchStopWindow {
				t.Fatalf("%s's minibatch recipe has stop window %d, want %d", method, def.StopWindow, minibatchStopWindow)
			}
		}
		model, err := Build(method, raw)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sgpr, svgp := fit("sgpr", false), fit("svgp", true)
	if svgp.Iterations < 2*minibatchStopWindow-1 {
		t.Errorf("SVGP stopped after %d iterations (%s), before the rule can judge a %d-iteration window", svgp.Iterations, svgp.Status, minibatchStopWindow)
	}
	if gap := (sgpr.Objective - svgp.Objective) / n; gap > 0.02 {
		t.Errorf("SVGP ended %g nats per point below the collapsed bound's optimum %g (ELBO %g after %d iterations, %s)",
			gap, sgpr.Objective, svgp.Objective, svgp.Iterations, svgp.Status)
	}
	t.Logf("SGPR %.2f after %d; SVGP %.2f after %d (%s)", sgpr.Objective, sgpr.Iterations, svgp.Objective, svgp.Iterations, svgp.Status)
}

// TestLBFGSMemoryReachesFit: a grid's lbfgs_memory reaches the optimiser
// of a method's fit. SGPR's L-BFGS trace is the same bits with memory 0
// and with optim.DefaultLBFGSMemory and a different one with memory 2; a
// negative memory is refused before anything runs.
func TestLBFGSMemoryReachesFit(t *testing.T) {
	train := reproData(3, 120, 2)
	trace := func(memory int) []float64 {
		t.Helper()
		model, err := Build("sgpr", map[string]any{"num_inducing": int64(12)})
		if err != nil {
			t.Fatal(err)
		}
		var fs []float64
		opt := FitOptions{Iterations: 40, Seed: 1, LBFGSMemory: memory}
		if _, err := model.Fit(context.Background(), train, opt, func(p Progress) { fs = append(fs, p.Objective) }); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	def, explicit, short := trace(0), trace(optim.DefaultLBFGSMemory), trace(2)
	if !slices.Equal(def, explicit) {
		t.Errorf("memory 0 and memory %d give different traces", optim.DefaultLBFGSMemory)
	}
	if slices.Equal(def, short) {
		t.Errorf("memory 2 gives the default's trace: lbfgs_memory does not reach the optimiser")
	}
	model, err := Build("sgpr", map[string]any{"num_inducing": int64(12)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 5, LBFGSMemory: -1}, nil); err == nil || !strings.Contains(err.Error(), "lbfgs_memory") {
		t.Errorf("memory −1: error %v, want one naming lbfgs_memory", err)
	}
}

// TestMinibatchWarmStart: the default minibatch recipe for a Gaussian
// likelihood starts with minibatchWarmStart L-BFGS iterations on
// minibatchWarmPoints rows; the warm-start parameters replace it (points
// alone keep the default iterations; iterations alone take the
// parameter's documented 20 000 points), a named optimiser drops it as it
// drops natural gradients, and classification, full batches and the
// collapsed bound have none.
func TestMinibatchWarmStart(t *testing.T) {
	mini := FitOptions{Task: Regression, BatchSize: 100, Iterations: 10}
	for _, tc := range []struct {
		name, method string
		raw          map[string]any
		opt          FitOptions
		warm, points int
	}{
		{"default", "svgp", nil, mini, minibatchWarmStart, minibatchWarmPoints},
		{"iterations 0", "svgp", map[string]any{"warm_start_iterations": int64(0)}, mini, 0, 0},
		{"iterations", "svgp", map[string]any{"warm_start_iterations": int64(50)}, mini, 50, defaultWarmStartPoints},
		{"points", "svgp", map[string]any{"warm_start_points": int64(500)}, mini, minibatchWarmStart, 500},
		{"both", "svgp", map[string]any{"warm_start_iterations": int64(7), "warm_start_points": int64(300)}, mini, 7, 300},
		{"named adam", "svgp", nil, FitOptions{Task: Regression, BatchSize: 100, Optimizer: "adam"}, 0, 0},
		{"natgrad_step", "svgp", map[string]any{"natgrad_step": 0.5}, mini, 0, 0},
		{"classification", "svgp", nil, FitOptions{Task: Classification, BatchSize: 100}, 0, 0},
		{"full batch", "svgp", nil, FitOptions{Task: Regression}, 0, 0},
		{"vish", "vish", map[string]any{"objective": "svgp"}, mini, minibatchWarmStart, minibatchWarmPoints},
		{"vish, collapsed", "vish", nil, FitOptions{Task: Regression, Iterations: 10}, 0, 0},
		{"vish, asked", "vish", map[string]any{"objective": "svgp", "warm_start_iterations": int64(20)}, mini, 20, defaultWarmStartPoints},
	} {
		m, err := Lookup(tc.method)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Validate(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		r := m.Recipe(p, tc.opt, 0)
		if r.WarmStart != tc.warm || r.WarmStartPoints != tc.points {
			t.Errorf("%s: warm start %d iterations on %d rows, want %d on %d (%s)", tc.name, r.WarmStart, r.WarmStartPoints, tc.warm, tc.points, r)
		}
		if s := r.String(); (tc.warm > 0) != strings.Contains(s, fmt.Sprintf("L-BFGS warm start (%d iterations on %d random rows), then ", tc.warm, tc.points)) {
			t.Errorf("%s: recipe in words %q", tc.name, s)
		}
	}
}

// TestWarmStartMemory: an ELBO run's planned memory covers the warm
// start's subset when it takes more rows a step than the minibatches:
// 2000 rows by default, warm_start_points when set, none when
// warm_start_iterations = 0.
func TestWarmStartMemory(t *testing.T) {
	const n, m, batch = 10000, 200, 100
	svgp, err := Lookup("svgp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  map[string]any
		rows int
	}{
		{"default", nil, minibatchWarmPoints},
		{"points", map[string]any{"warm_start_points": int64(5000)}, 5000},
		{"more points than rows", map[string]any{"warm_start_points": int64(50000)}, n},
		{"off", map[string]any{"warm_start_iterations": int64(0)}, batch},
	} {
		raw := map[string]any{"num_inducing": int64(m)}
		maps.Copy(raw, tc.raw)
		p, err := svgp.Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := svgp.Plan(p, Shape{N: n, D: 3, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		if want := 8 * float64(2*m*m+2*m*tc.rows); plan.Memory != want {
			t.Errorf("%s: planned %v bytes, want %v (%d rows a step)", tc.name, plan.Memory, want, tc.rows)
		}
	}
}
