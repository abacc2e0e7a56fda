package runner

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"sgplab/methods"
	"sgplab/results"
)

func TestSweptAndShortLabel(t *testing.T) {
	runs, _, err := expand(t, base+"[grid.dataset]\nn = 50\n", "")
	if err != nil {
		t.Fatal(err)
	}
	// base sweeps splits 0..2 and num_inducing 10, 20; n is fixed.
	if got, want := Swept(runs), []string{"num_inducing", "split"}; !slices.Equal(got, want) {
		t.Errorf("Swept = %v, want %v", got, want)
	}
	labels := map[string]bool{}
	for _, r := range runs {
		l := r.ShortLabel(Swept(runs))
		if labels[l] {
			t.Errorf("two runs share the label %q", l)
		}
		labels[l] = true
		if strings.Contains(l, "dataset.n") || strings.Contains(l, "seed=") {
			t.Errorf("label %q shows a parameter that does not vary", l)
		}
	}
	if l := runs[0].ShortLabel(Swept(runs)); l != "g fake-mean toy num_inducing=10 split=0" {
		t.Errorf("label %q", l)
	}
}

func TestCost(t *testing.T) {
	spec := func(method string, params map[string]any, it int) *RunSpec {
		return &RunSpec{Method: method, Params: params, Iterations: it}
	}
	size := func(*RunSpec) int { return 1000 }
	sparse := Cost(spec("sgpr", map[string]any{"num_inducing": 10}, 99), size)
	if want := 100 * (1000*100 + 1000.0 + stepOverhead); sparse != want {
		t.Errorf("sparse cost %v, want %v", sparse, want)
	}
	if bigger := Cost(spec("sgpr", map[string]any{"num_inducing": 40}, 99), size); bigger <= sparse {
		t.Errorf("M = 40 costs %v ≤ M = 10's %v", bigger, sparse)
	}
	exact := Cost(spec("gpr", map[string]any{}, 99), size)
	if want := 100 * (1e9/3 + stepOverhead); exact != want {
		t.Errorf("exact cost %v, want %v", exact, want)
	}
	// The decoupled sets add.
	if got, want := Cost(spec("odvgp", map[string]any{"num_inducing": 30, "num_orthogonal": 70}, 0), size), 1000*1e4+1e6+stepOverhead; got != want {
		t.Errorf("odvgp cost %v, want %v (M = 100)", got, want)
	}
	// A minibatch step costs its batch, not N.
	mb := spec("svgp", map[string]any{"num_inducing": 10}, 0)
	mb.BatchSize = 100
	if got, want := Cost(mb, size), 100*100+1000.0+stepOverhead; got != want {
		t.Errorf("minibatch cost %v, want %v", got, want)
	}
	// M is capped at N.
	if capped := Cost(spec("sgpr", map[string]any{"num_inducing": 5000}, 0), size); capped != 1000*1e6+1e9+stepOverhead {
		t.Errorf("M > N cost %v", capped)
	}
	// A method with neither inducing variables nor an exact solve costs N.
	if got := Cost(spec("fake-mean", map[string]any{}, 0), size); got != 1000+stepOverhead {
		t.Errorf("fake-mean cost %v, want 1000 + stepOverhead", got)
	}
}

// TestETAFromCost: after a cheap run took 1 s, a run of 4 times its cost
// is expected to take 4 s.
func TestETAFromCost(t *testing.T) {
	cheap := &RunSpec{ID: "a", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 9}
	dear := &RunSpec{ID: "b", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 39}
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{cheap, dear}, 0, func(*RunSpec) int { return 100 })
	p.runStarts["a"] = time.Now().Add(-time.Second)
	p.finish(cheap, results.Run{Status: results.StatusDone}, nil)
	if got := p.prefix(); got != "[1/2] ETA 4s" {
		t.Errorf("prefix %q, want [1/2] ETA 4s", got)
	}
}

// TestETAByClass: each grid's remaining runs are costed at the time per
// unit of cost of its own finished runs; a grid with none finished at the
// sweep's. Two runs left in a grid whose first run took 1 s take 2 s, not
// the 10 s that the other grid's 9 s run would make of one common rate.
func TestETAByClass(t *testing.T) {
	run := func(id, grid string) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: grid, Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 9}
	}
	a1, a2, a3, b1, c1 := run("a1", "fast"), run("a2", "fast"), run("a3", "fast"), run("b1", "slow"), run("c1", "new")
	for _, tc := range []struct {
		todo []*RunSpec
		want string
	}{
		{[]*RunSpec{a1, a2, a3, b1}, "[2/4] ETA 2s"},
		// c1's grid has no finished run: the sweep's 5 s per run.
		{[]*RunSpec{a1, a2, b1, c1}, "[2/4] ETA 6s"},
	} {
		p := newProgress(&bytes.Buffer{}, false, tc.todo, 0, func(*RunSpec) int { return 100 })
		p.runStarts["a1"] = time.Now().Add(-time.Second)
		p.finish(a1, results.Run{Status: results.StatusDone}, nil)
		p.runStarts["b1"] = time.Now().Add(-9 * time.Second)
		p.finish(b1, results.Run{Status: results.StatusDone}, nil)
		if got := p.prefix(); got != tc.want {
			t.Errorf("prefix %q, want %q", got, tc.want)
		}
	}
}

// TestETAHuge: an ETA beyond what a Duration holds (an exact method costed
// on millions of rows) is shown bounded, never as an overflowed value.
func TestETAHuge(t *testing.T) {
	cheap := &RunSpec{ID: "a", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 0}
	huge := &RunSpec{ID: "b", Method: "gpr", Params: map[string]any{}, Iterations: 100}
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{cheap, huge}, 0, func(s *RunSpec) int {
		if s.ID == "b" {
			return 6_000_000
		}
		return 100
	})
	p.runStarts["a"] = time.Now().Add(-time.Second)
	p.finish(cheap, results.Run{Status: results.StatusDone}, nil)
	if got, want := p.prefix(), "[1/2] ETA > "+maxETA.String(); got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
}

// TestCostFromDeclaredM: the ETA's M is the one each method declares for
// the dataset's dimension (methods.Method.Plan), not a guess from parameter
// names: odvff at D = 8 has 8·101 = 808 Fourier features besides its 100
// orthogonal points (the guess read num_orthogonal alone), vish at level 3
// on S²⁰ has 2002 harmonics (the guess said (L+1)² = 16), Kronecker VFF in
// 2-D (2F − 1)² features.
func TestCostFromDeclaredM(t *testing.T) {
	src := `
name = "t"
[[grid]]
name = "g"
methods = ["odvff", "vish", "vff", "sgpr"]
datasets = ["toy"]
iterations = 0
[grid.method.odvff]
frequencies = 51
num_orthogonal = 100
[grid.method.vish]
max_level = 3
[grid.method.vff]
frequencies = 20
[grid.method.sgpr]
num_inducing = 5000
`
	f, err := Parse("test.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    int
		want map[string]int
	}{
		{8, map[string]int{"odvff": 908, "vish": 210, "vff": 39 * 39 * 39 * 39 * 39 * 39 * 39 * 39, "sgpr": 1000}},
		{20, map[string]int{"odvff": 20*101 + 100, "vish": 2002, "sgpr": 1000}},
		{2, map[string]int{"odvff": 2*101 + 100, "vish": 16, "vff": 39 * 39, "sgpr": 1000}},
	} {
		runs, _, err := f.Expand(ExpandOptions{ValidateDataset: fakeValidate,
			Shape: func(string, map[string]any) (int, int, bool) { return 1000, c.d, true }})
		if c.d >= 8 {
			// Kronecker VFF on 8 and 20 dimensions overflows or is refused
			// (no memory limit is set: the count alone decides).
			if c.d == 20 && (err == nil || !strings.Contains(err.Error(), "features")) {
				t.Fatalf("D = 20: Kronecker VFF not refused: %v", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			want, ok := c.want[r.Method]
			if !ok {
				continue
			}
			if r.Plan.M != want {
				t.Errorf("D = %d: %s declares M = %d, want %d", c.d, r.Method, r.Plan.M, want)
			}
			m := float64(want)
			if got := Cost(r, func(*RunSpec) int { return 1000 }); got != 1000*m*m+m*m*m+stepOverhead {
				t.Errorf("D = %d: %s cost %v, want %v", c.d, r.Method, got, 1000*m*m+m*m*m+stepOverhead)
			}
		}
	}
}

// TestETAStopTol: a run that stop_tol may end early is expected to run the
// fraction of its budget that the finished stop_tol runs of its class ran
// (else of any class), not its whole budget. A first run of a grid stopped
// after 100 of its 1000 iterations in 1 s: its grid's next run is expected
// in 1 s, and a run of another grid with the same step cost and budget at
// the same fraction and rate also in 1 s; an Adam run without stop_tol
// runs all its 100 iterations (about 1 s at that rate). Before, each
// stop_tol run was costed at its 1000 iterations (ETA 21 s).
func TestETAStopTol(t *testing.T) {
	run := func(id, grid string, budget int, stop float64) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: grid, Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: budget, StopTol: stop}
	}
	a1, a2, b1, c1 := run("a1", "a", 1000, 1e-5), run("a2", "a", 1000, 1e-5), run("b1", "b", 1000, 1e-5), run("c1", "c", 99, 0)
	c1.Optimizer = "adam"
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{a1, a2, b1, c1}, 0, func(*RunSpec) int { return 100 })
	p.runStarts["a1"] = time.Now().Add(-time.Second)
	p.finish(a1, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 100}})
	if got, want := p.prefix(), "[1/4] ETA 3s"; got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
}

// TestETATrainedNumbers: a stop_tol run of a class with no finished run is
// expected to run as many iterations per number it trains (methods.Plan
// Params) as the finished stop_tol runs did: a first grid's run trained 10
// numbers and stopped after 30 of its 1000 iterations (31 units of work in
// 1 s); a run of another grid with 5 numbers and the same step cost is
// expected to stop after 15 (16 units: about 0.5 s), not at the 3 % of
// its budget the fraction model would take (31 units) nor its budget.
func TestETATrainedNumbers(t *testing.T) {
	run := func(id, grid string, trained int) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: grid, Method: "sgpr", Params: map[string]any{"num_inducing": 10},
			Iterations: 1000, StopTol: 1e-5, Plan: methods.Plan{M: 10, Params: trained}}
	}
	a1, b1 := run("a1", "a", 10), run("b1", "b", 5)
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{a1, b1}, 0, func(*RunSpec) int { return 100 })
	p.runStarts["a1"] = time.Now().Add(-31 * time.Second)
	p.finish(a1, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 30}})
	if got, want := p.prefix(), "[1/2] ETA 16s"; got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
}

// TestETAEarlyEnds: L-BFGS ends a fit once converged, before its budget,
// with or without stop_tol, so a class's L-BFGS runs are expected to run
// the fraction of their budget its finished runs ran (the demo's 100-step
// SGPR fits stop after about 10: its ETA read 4–6× long); runs of a
// dataset whose files a run found absent cost nothing (they fail at once:
// a quick paper profile read hours while its airline runs were pending).
func TestETAEarlyEnds(t *testing.T) {
	run := func(id, dataset, optimizer string) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: "g", Method: "sgpr", Dataset: dataset, Params: map[string]any{"num_inducing": 10}, Iterations: 99, Optimizer: optimizer}
	}
	a1, a2, g1, g2 := run("a1", "toy", ""), run("a2", "toy", ""), run("g1", "gone", "adam"), run("g2", "gone", "adam")
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{a1, a2, g1, g2}, 0, func(*RunSpec) int { return 100 })
	p.runStarts["a1"] = time.Now().Add(-time.Second)
	p.finish(a1, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 9}})
	if got, want := p.prefix(), "[1/4] ETA 21s"; got != want { // a2 at 10 iterations (1 s); g1, g2 Adam at their 100
		t.Errorf("prefix %q, want %q", got, want)
	}
	p.runStarts["g1"] = time.Now()
	p.absentData(g1)
	p.finish(g1, results.Run{Status: results.StatusFailed}, nil)
	if got, want := p.prefix(), "[2/4] ETA 1s"; got != want {
		t.Errorf("after absent data: prefix %q, want %q", got, want)
	}
}

// TestETAStepOverhead: a step costs a time of its own beside its flops,
// measured on the class's finished runs, and the flops at the machine's
// rate (minFlopRate until a flop-heavy run measured more). After an SVGP
// fit with M = 5 and 101 steps took 1 s (nearly all of it per-step
// overhead), the same fit with M = 20 (300·20² + 20³ flops a step) is
// expected in 1 s + 101 × 128 000 flops / 10⁹ per s ≈ 1.0 s, not 17 s (the
// flops ratio); and once a flop-heavy class measured 10¹⁰ flops per
// second, a fit of 10¹¹ flops in another class is expected in about 10 s.
func TestETAStepOverhead(t *testing.T) {
	run := func(id string, m int) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: "g", Method: "svgp", Params: map[string]any{"num_inducing": m},
			Iterations: 100, Optimizer: "adam", Plan: methods.Plan{M: m}}
	}
	small, large := run("s", 5), run("l", 20)
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{small, large}, 0, func(*RunSpec) int { return 300 })
	p.runStarts["s"] = time.Now().Add(-time.Second)
	p.finish(small, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 100}})
	if got, want := p.prefix(), "[1/2] ETA 1s"; got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
	heavy := &RunSpec{ID: "h", Experiment: "e", Grid: "heavy", Method: "svgp", Iterations: 9, Optimizer: "adam", Plan: methods.Plan{M: 10, StepFlops: 1e9}}
	next := &RunSpec{ID: "n", Experiment: "e", Grid: "next", Method: "svgp", Iterations: 9, Optimizer: "adam", Plan: methods.Plan{M: 10, StepFlops: 1e10}}
	q := newProgress(&bytes.Buffer{}, false, []*RunSpec{heavy, next}, 0, func(*RunSpec) int { return 300 })
	q.runStarts["h"] = time.Now().Add(-time.Second)
	q.finish(heavy, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 9}, {Name: "train_seconds", Value: 1}})
	if got, want := q.prefix(), "[1/2] ETA 10s"; got != want {
		t.Errorf("after a flop-heavy run: prefix %q, want %q", got, want)
	}
}

// TestETAOutsideFit: the time a run spends outside its fit (a child
// process, loading data, predicting) is a per-run cost, not a rate per
// unit of work. After an evaluation without training that took 1 s, of
// which 1 ms was its fit, a 99-iteration fit of another grid is expected
// to take 1 s + 100 × 1 ms, not 100 × 1 s (the VOF quick profile read 38 h
// at run 17 of 82 this way).
func TestETAOutsideFit(t *testing.T) {
	eval := &RunSpec{ID: "e1", Experiment: "e", Grid: "eval", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 0, Plan: methods.Plan{M: 10}}
	eval2 := &RunSpec{ID: "e2", Experiment: "e", Grid: "eval", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 0, Plan: methods.Plan{M: 10}}
	fit := &RunSpec{ID: "f", Experiment: "e", Grid: "fit", Method: "sgpr", Params: map[string]any{"num_inducing": 10}, Iterations: 99, Optimizer: "adam", Plan: methods.Plan{M: 10}}
	p := newProgress(&bytes.Buffer{}, false, []*RunSpec{eval, eval2, fit}, 0, func(*RunSpec) int { return 100 })
	p.runStarts["e1"] = time.Now().Add(-time.Second)
	p.finish(eval, results.Run{Status: results.StatusDone}, []results.Metric{{Name: "iterations", Value: 0}, {Name: "train_seconds", Value: 0.001}})
	if got, want := p.prefix(), "[1/3] ETA 2s"; got != want { // e2: 1 s; f: 1 s + 0.1 s
		t.Errorf("prefix %q, want %q", got, want)
	}
}

// TestProbeFirst: the cheapest run of each grid and method goes first, in
// the order the classes appear; the rest keep their order.
func TestProbeFirst(t *testing.T) {
	run := func(id, grid string, iterations int) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: grid, Method: "sgpr", Iterations: iterations, Plan: methods.Plan{M: 10}}
	}
	todo := []*RunSpec{run("a1", "a", 50), run("a2", "a", 10), run("a3", "a", 10), run("b1", "b", 5), run("c1", "c", 100), run("c2", "c", 200)}
	for _, c := range []struct {
		jobs int
		want []string
	}{
		{1, []string{"a2", "b1", "c1", "a1", "a3", "c2"}}, // then expansion order
		{2, []string{"a2", "b1", "c1", "c2", "a1", "a3"}}, // then longest first (stable)
	} {
		var got []string
		for _, s := range probeFirst(todo, func(*RunSpec) int { return 100 }, c.jobs) {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("jobs %d: order %v, want %v", c.jobs, got, c.want)
		}
	}
}

// TestReplayETA: a replayed sweep of like runs reads the exact time left
// after every run, and runs without a timing are left out.
func TestReplayETA(t *testing.T) {
	run := func(id string) *RunSpec {
		return &RunSpec{ID: id, Experiment: "e", Grid: "g", Method: "sgpr", Iterations: 9, Optimizer: "adam", Plan: methods.Plan{M: 10}}
	}
	todo := []*RunSpec{run("a"), run("b"), run("gone"), run("c")}
	timing := RunTiming{Took: time.Second, Fit: 600 * time.Millisecond, Iterations: 9, Done: true}
	got := ReplayETA(todo, func(*RunSpec) int { return 100 }, map[string]RunTiming{"a": timing, "b": timing, "c": timing}, nil)
	want := []ETAPoint{{1, 2 * time.Second, 2 * time.Second}, {2, time.Second, time.Second}, {3, 0, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("replay %v, want %v", got, want)
	}
}
