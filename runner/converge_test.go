package runner

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/optim"
	"sgplab/gp/param"
	"sgplab/methods"
	"sgplab/results"
)

func init() {
	methods.Register(methods.Method{
		Name: "fake-trace", Summary: "reports a trace of a given shape", Tasks: []methods.Task{methods.Regression},
		Params: []methods.ParamDoc{
			{Name: "shape", Kind: methods.String, Default: "flat", Choices: []string{"flat", "rising", "slow"}, Doc: "trace shape"},
			{Name: "status", Kind: methods.String, Default: "", Doc: "optimiser status to report"},
		},
		New: func(p methods.Params) (methods.Model, error) {
			return &traceModel{shape: p.String("shape"), status: p.String("status")}, nil
		},
	})
}

// traceModel reports objective(i) of its shape for i = 0 … Iterations and
// records the stopping rule it was given.
type traceModel struct {
	meanModel
	shape, status string
}

var (
	stopMu    sync.Mutex
	stopsSeen []optim.Rule // FitOptions.Stop of every fit
)

func (m *traceModel) Fit(ctx context.Context, d gp.Data, opt methods.FitOptions, progress func(methods.Progress)) (methods.FitResult, error) {
	stopMu.Lock()
	stopsSeen = append(stopsSeen, opt.Stop)
	stopMu.Unlock()
	f := func(i int) float64 {
		switch m.shape {
		case "rising":
			return -100 + float64(i)
		case "slow": // 1e-4 of the scale (100) per iteration
			return -100 + 1e-2*float64(i)
		}
		return -100
	}
	for i := 0; i <= opt.Iterations; i++ {
		progress(methods.Progress{Phase: "adam", Iteration: i, Objective: f(i)})
	}
	if _, err := m.meanModel.Fit(ctx, d, methods.FitOptions{}, progress); err != nil {
		return methods.FitResult{}, err
	}
	return methods.FitResult{Objective: f(opt.Iterations), Iterations: opt.Iterations, Status: m.status,
		Hyper: []param.Named{{Name: "kernel.lengthscales", Value: []float64{0.5, 2}}, {Name: "noise_variance", Value: []float64{0.125}}}}, nil
}

func (m *traceModel) Predict(x *mat.Dense) (methods.Prediction, error) { return m.meanModel.Predict(x) }

func TestConvergence(t *testing.T) {
	tp := func(phase string, f ...float64) []results.TracePoint {
		var out []results.TracePoint
		for i, v := range f {
			out = append(out, results.TracePoint{Iteration: i, Objective: v, Phase: phase})
		}
		return out
	}
	ramp := func(n int, slope float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = -1000 + slope*float64(i)
		}
		return out
	}
	flat := ramp(100, 0)
	tests := []struct {
		name      string
		spec      RunSpec
		fit       methods.FitResult
		trace     []results.TracePoint
		converged float64 // NaN: n/a
		relNaN    bool
	}{
		{"flat at the cap", RunSpec{Iterations: 99}, methods.FitResult{Iterations: 99, Status: optim.StatusIterations}, tp("lbfgs", flat...), 1, false},
		{"rising at the cap", RunSpec{Iterations: 99}, methods.FitResult{Iterations: 99, Status: optim.StatusIterations}, tp("adam", ramp(100, 5)...), 0, false},
		{"stopped by the gradient tolerance, short trace", RunSpec{Iterations: 100}, methods.FitResult{Iterations: 6, Status: optim.StatusGradient},
			tp("lbfgs", ramp(7, 50)...), 1, true},
		{"stopped by the rule", RunSpec{Iterations: 100, StopTol: 1e-3}, methods.FitResult{Iterations: 40, Status: optim.StatusStopRule},
			tp("adam", ramp(41, 0.01)...), 1, false},
		{"too short at the cap", RunSpec{Iterations: 10}, methods.FitResult{Iterations: 10, Status: optim.StatusIterations}, tp("adam", ramp(11, 0)...), 0, true},
		{"stop_tol loosens the judgement", RunSpec{Iterations: 99, StopTol: 1e-3}, methods.FitResult{Iterations: 99}, tp("adam", ramp(100, 0.5)...), 1, false},
		{"the same at the default tolerance", RunSpec{Iterations: 99}, methods.FitResult{Iterations: 99}, tp("adam", ramp(100, 0.5)...), 0, false},
		{"only the last phase counts", RunSpec{Iterations: 99}, methods.FitResult{Iterations: 199},
			append(tp("warm", ramp(100, 50)...), tp("all", flat...)...), 1, false},
		{"the last phase still rising", RunSpec{Iterations: 99}, methods.FitResult{Iterations: 199},
			append(tp("warm", flat...), tp("all", ramp(100, 50)...)...), 0, false},
		{"no training: iterations = 0", RunSpec{Iterations: 0}, methods.FitResult{Status: optim.StatusEvaluated}, tp("lbfgs", -5), math.NaN(), true},
		{"a method that fits nothing by optimisation", RunSpec{Iterations: 100}, methods.FitResult{}, nil, math.NaN(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rel := convergence(&tc.spec, tc.fit, tc.trace, 300)
			if !(c == tc.converged || math.IsNaN(c) && math.IsNaN(tc.converged)) {
				t.Errorf("converged %v, want %v (rel change %g)", c, tc.converged, rel)
			}
			if math.IsNaN(rel) != tc.relNaN {
				t.Errorf("rel change %v, want NaN: %v", rel, tc.relNaN)
			}
		})
	}
}

// TestConvergenceStored runs grids through the runner: every done run
// stores x_converged (1, 0, or NULL without training) and x_rel_change in
// its metrics whatever the grid's metrics list, and stop_tol reaches Fit
// as the rule with the training-set size as its floor.
func TestConvergenceStored(t *testing.T) {
	src := `
name = "c"
[[grid]]
name = "g"
methods = ["fake-trace"]
datasets = ["toy"]
iterations = [0, 99]
metrics = ["rmse"]
[grid.params]
shape = ["flat", "rising"]

[[grid]]
name = "tol"
methods = ["fake-trace"]
datasets = ["toy"]
iterations = 99
stop_tol = 1e-3
[grid.params]
shape = "slow"

[[grid]]
name = "notol"
methods = ["fake-trace"]
datasets = ["toy"]
iterations = 99
[grid.params]
shape = "slow"
`
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	if _, err := r.Run(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	_, rows, err := st.Query(`SELECT r.grid, p.value, it.value, c.value, rc.value FROM runs r
		JOIN run_params p ON p.run_id = r.id AND p.name = 'shape'
		JOIN run_params it ON it.run_id = r.id AND it.name = 'fit.iterations'
		LEFT JOIN metrics c ON c.run_id = r.id AND c.name = 'x_converged'
		LEFT JOIN metrics rc ON rc.run_id = r.id AND rc.name = 'x_rel_change'
		ORDER BY r.grid, p.value, it.value`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"g", "flat", "0", nil, nil}, {"g", "flat", "99", 1.0, 0.0},
		// rising: a gain of 10 over w = 10 at the scale floor N = 20.
		{"g", "rising", "0", nil, nil}, {"g", "rising", "99", 0.0, 10.0 / 10 / 20},
		{"notol", "slow", "99", 0.0, 0.1 / 10 / 99.055}, {"tol", "slow", "99", 1.0, 0.1 / 10 / 99.055},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	for i, w := range want {
		for j := range w {
			got, want := rows[i][j], w[j]
			if gf, ok := got.(float64); ok {
				if wf, ok := want.(float64); ok && math.Abs(gf-wf) <= 1e-9*math.Max(1, math.Abs(wf)) {
					continue
				}
			}
			if got != want {
				t.Errorf("row %d column %d: %v, want %v (row %v)", i, j, got, want, rows[i])
			}
		}
	}
	stopMu.Lock()
	defer stopMu.Unlock()
	ruled := 0
	for _, s := range stopsSeen {
		switch s {
		case optim.Rule{}:
		case optim.Rule{Tol: 1e-3, Floor: 20}: // stop_tol with the floor N
			ruled++
		default:
			t.Errorf("Fit got the stop rule %+v", s)
		}
	}
	if ruled != 1 {
		t.Errorf("%d fits got the grid's stop_tol, want 1 (of %d)", ruled, len(stopsSeen))
	}
}

// TestOptionalTolKeys: stop_tol, ftol and lbfgs_memory are optional fit
// keys: absent, the ids are those of a grid without them (so existing
// results stay valid); set, each is part of the identity and the stored
// parameters; lists expand, include and exclude match it, profiles
// override it, and bad values are refused with their file:line.
func TestOptionalTolKeys(t *testing.T) {
	ids := func(src, profile string) []string {
		t.Helper()
		runs, _, err := expand(t, src, profile)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	plain := ids(base, "")
	for _, key := range []struct {
		name string
		get  func(*RunSpec) float64
		// set is a value, stored as canon in the spec and flat in the
		// run's parameters; list a two-value axis with 0 first; other a
		// second value; bad and badErr a refused value and its message.
		set, canon, flat, list, other string
		bad, badErr, typeErr          string
	}{
		{"stop_tol", func(r *RunSpec) float64 { return r.StopTol }, "1e-4", "0.0001", "0.0001", "[0, 1e-5]", "1e-3",
			"-1e-5", "must be ≥ 0 and < 1", "want a number"},
		{"ftol", func(r *RunSpec) float64 { return r.FTol }, "1e-4", "0.0001", "0.0001", "[0, 1e-5]", "1e-3",
			"-1e-5", "must be ≥ 0 and < 1", "want a number"},
		{"lbfgs_memory", func(r *RunSpec) float64 { return float64(r.LBFGSMemory) }, "30", "30", "30", "[0, 100]", "10",
			"-1", "must be ≥ 0 (the curvature pairs L-BFGS keeps", "want an integer"},
	} {
		k := key.name
		with := func(v string) string { return strings.Replace(base, "iterations = 5", "iterations = 5\n"+k+" = "+v, 1) }
		if zero := ids(with("0"), ""); !slices.Equal(plain, zero) {
			t.Errorf("%s = 0 changed the run ids: %v, want %v", k, zero, plain)
		}
		set := ids(with(key.set), "")
		for i := range set {
			if set[i] == plain[i] {
				t.Errorf("run %d: %s = %s kept the id %s of the run without it", i, k, key.set, set[i])
			}
		}
		runs, _, err := expand(t, with(key.set), "")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseFloat(key.set, 64)
		if got := key.get(runs[0]); got != want {
			t.Errorf("%s: spec has %v, want %v", k, got, want)
		}
		if !strings.Contains(string(runs[0].Canonical()), `"`+k+`":`+key.canon) {
			t.Errorf("canonical spec lacks %s: %s", k, runs[0].Canonical())
		}
		if !slices.Contains(runs[0].FlatParams(), [2]string{"fit." + k, key.flat}) {
			t.Errorf("stored parameters lack fit.%s: %v", k, runs[0].FlatParams())
		}
		for _, p := range (&RunSpec{}).FlatParams() {
			if p[0] == "fit."+k {
				t.Errorf("a run without %s stores fit.%s", k, k)
			}
		}

		for _, tc := range []struct {
			name, src, profile string
			runs               int
			wantErr            string
		}{
			{"list expands", with(key.list), "", 12, ""},
			{"exclude matches", with(key.list) + "[[grid.exclude]]\n" + k + " = 0\n", "", 6, ""},
			{"include sets it", base + "[[grid.include]]\nsplit = 9\n" + k + " = " + key.other + "\n", "", 8, ""},
			{"profile override", base + "[profiles.quick]\nnote = \"n\"\n[profiles.quick.override]\n" + k + " = " + key.other + "\n", "quick", 6, ""},
			{"per method", base + "[grid.method.fake-mean]\n" + k + " = " + key.list + "\n", "", 12, ""},
			{"negative", with(key.bad), "", 0, "test.toml:10: grid[0]." + k + ": " + key.badErr},
			{"not a number", with("\"1e-5\""), "", 0, "grid[0]." + k + ": " + key.typeErr},
		} {
			t.Run(k+"/"+tc.name, func(t *testing.T) {
				runs, _, err := expand(t, tc.src, tc.profile)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("error %v, want %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != tc.runs {
					t.Errorf("%d runs, want %d", len(runs), tc.runs)
				}
			})
		}
	}
}

// TestNatGradNeedsAdam: natgrad_step pairs natural gradients on q(u) with
// Adam; any other optimizer, or none (the method's default, L-BFGS for
// most), is refused before anything runs, naming the fix.
func TestNatGradNeedsAdam(t *testing.T) {
	grid := func(extra string) string {
		return "name = \"t\"\n[[grid]]\nname = \"g\"\nmethods = [\"svgp\", \"sgpr\"]\ndatasets = [\"toy\"]\niterations = 5\n" + extra
	}
	for _, tc := range []struct {
		name, src string
		wantErr   []string
	}{
		{"grid params, no optimizer", grid("[grid.params]\nnatgrad_step = 1.0\n"),
			[]string{"test.toml:8: grid[0].params.natgrad_step:", "no optimizer (the method's default)", `set optimizer = "adam"`, "method svgp"}},
		{"explicit lbfgs", grid("optimizer = \"lbfgs\"\n[grid.params]\nnatgrad_step = 1.0\n"), []string{`optimizer = "lbfgs"`, `set optimizer = "adam"`}},
		{"a list with lbfgs", grid("optimizer = [\"adam\", \"lbfgs\"]\n[grid.params]\nnatgrad_step = 1.0\n"), []string{`optimizer = "lbfgs"`}},
		{"per-method key", grid("[grid.method.svgp]\nnatgrad_step = 0.5\n"), []string{"grid[0].method.svgp.natgrad_step:"}},
		{"include", grid("optimizer = \"adam\"\n[[grid.include]]\nmethod = \"svgp\"\noptimizer = \"lbfgs\"\nnatgrad_step = 0.5\n"), []string{"grid[0].include[0].natgrad_step:", `optimizer = "lbfgs"`}},
		{"adam", grid("optimizer = \"adam\"\n[grid.params]\nnatgrad_step = 1.0\n"), nil},
		{"no natgrad_step", grid("optimizer = \"lbfgs\"\n"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := expand(t, tc.src, "")
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestHyperparametersStored: a done run's FitResult.Hyper lands in the
// hyperparameters table, one row per entry, in the run's transaction.
func TestHyperparametersStored(t *testing.T) {
	src := "name = \"h\"\n[[grid]]\nname = \"g\"\nmethods = [\"fake-trace\", \"fake-fail\"]\ndatasets = [\"toy\"]\niterations = 5\n"
	runs, _, err := expand(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	r, st := newRunner(t, filepath.Join(t.TempDir(), "r.db"))
	if _, err := r.Run(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	_, rows, err := st.Query("SELECT method, name, idx, value FROM run_hyperparameters ORDER BY method, name, idx")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"fake-trace", "kernel.lengthscales", int64(0), 0.5}, {"fake-trace", "kernel.lengthscales", int64(1), 2.0},
		{"fake-trace", "noise_variance", int64(0), 0.125},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("hyperparameters %v, want %v (none for the failed run)", rows, want)
	}
}
