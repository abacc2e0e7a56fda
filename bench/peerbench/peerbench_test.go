package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sgplab/gp/inducing"
	"sgplab/gp/optim"
)

// The data both sides read has the reference recipe's bits, and the Z file
// parses to exactly the first M rows of X.
func TestDataRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeData(dir, 50, []int{7}); err != nil {
		t.Fatal(err)
	}
	md, d, err := readData(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceData(50)
	if md.N != 50 || md.D != refDim || !slices.Equal(d.Y, want.Y) || !slices.Equal(d.X.RawMatrix().Data, want.X.RawMatrix().Data) {
		t.Fatalf("data read back differs from the reference recipe")
	}
	z, err := inducing.FromCSV(filepath.Join(dir, md.Z["7"]), refDim)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		for j := range refDim {
			if z.At(i, j) != want.X.At(i, j) {
				t.Fatalf("Z[%d][%d] = %v, want X's %v", i, j, z.At(i, j), want.X.At(i, j))
			}
		}
	}
}

// The offline judgement (converged) finds exactly where sgplab's default
// recipe stopped online, for L-BFGS (SGPR) and natural gradients (SVGP):
// the traces start at iteration 0 (SVGP's after its warm start) and the
// rule is the runner's.
func TestConvergedIsWhereTheFitStopped(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeData(dir, 400, []int{8}); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"sgpr", "svgp"} {
		t.Run(model, func(t *testing.T) {
			var out bytes.Buffer
			o := sideOptions{data: dir, model: model, mode: "converge", m: 8, batch: 100, seed: 1}
			if err := runSide(o, &out); err != nil {
				t.Fatal(err)
			}
			var r run
			if err := parseRecords(&out, &r); err != nil {
				t.Fatal(err)
			}
			// SVGP's default recipe starts warm: its trace begins after
			// the warm start, where the rule starts judging.
			warm := map[string]int{"sgpr": 0, "svgp": 100}[model]
			if r.Final.Kind != "final" || len(r.Trace) < 2 || r.Warm != warm || r.Trace[0].It != warm {
				t.Fatalf("final %q, %d trace points starting at %d after %d warm-start iterations, want %d", r.Final.Kind, len(r.Trace), r.Trace[0].It, r.Warm, warm)
			}
			if !strings.Contains(r.Final.Status, "stop") {
				t.Skipf("the fit ended by %q, not by the rule", r.Final.Status)
			}
			c, _ := converged(r.Trace, 1e-5, 400, stopWindow(shape{Model: model, N: 400, M: 8, Batch: o.batch}))
			if !c.Held || c.Index != len(r.Trace)-1 || c.Steps != r.Final.Iters {
				t.Errorf("rule holds at index %d (held %v, %d steps); the fit stopped at index %d after %d iterations",
					c.Index, c.Held, c.Steps, len(r.Trace)-1, r.Final.Iters)
			}
		})
	}
}

// The peer's copy of the rule (bench/gpytorch_peer.py) decides like
// optim.Rule on every prefix of noisy and smooth traces.
func TestPeerRuleMatchesOptimRule(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var traces [][]float64
	for _, noise := range []float64{0, 1, 50} {
		f := make([]float64, 400)
		for i := range f {
			f[i] = -1e4*math.Exp(-float64(i)/40) - 2000 + noise*rng.NormFloat64()
		}
		traces = append(traces, f)
	}
	js, _ := json.Marshal(traces)
	script := fmt.Sprintf(`import json, sys
sys.path.insert(0, %q)
from gpytorch_peer import Rule
out = []
for w in (10, 60):
    r = Rule(1e-5, 1000.0, min_window=w)
    out += [[r.check(f[:t]) for t in range(1, len(f) + 1)] for f in json.load(open(sys.argv[1]))]
print(json.dumps(out))`, "..")
	tracesFile := filepath.Join(t.TempDir(), "traces.json")
	if err := os.WriteFile(tracesFile, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", script, tracesFile).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var got [][]bool
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	held := 0
	for wi, w := range []int{10, 60} {
		rule := optim.Rule{Tol: 1e-5, Floor: 1000, MinWindow: w}
		for k, f := range traces {
			g := got[wi*len(traces)+k]
			for n := 1; n <= len(f); n++ {
				want := rule.Check(f[:n]).Converged
				if g[n-1] != want {
					t.Fatalf("window %d, trace %d, %d points: peer's rule says %v, optim.Rule %v", w, k, n, g[n-1], want)
				}
				if want {
					held++
				}
			}
		}
	}
	if held == 0 {
		t.Fatal("the rule never held: the traces test nothing")
	}
}

func TestStepSeconds(t *testing.T) {
	tr := []point{{It: 0, Wall: 5, CPU: 3}, {It: 1, Wall: 6, CPU: 4}, {It: 2, Wall: 6.5, CPU: 5}, {It: 5, Wall: 8, CPU: 10}}
	w, c, ok := stepSeconds(tr)
	if !ok || w != 0.5 || c != 1.5 {
		t.Errorf("stepSeconds = %v, %v, %v; want 0.5, 1.5 (iterations 1 to 5, start-up excluded)", w, c, ok)
	}
	if _, _, ok := stepSeconds(tr[:2]); ok {
		t.Error("one timed iteration gives no interval, want !ok")
	}
}

func TestPeerEnv(t *testing.T) {
	base := []string{"PATH=/bin", "OPENBLAS_NUM_THREADS=1", "GLIBC_TUNABLES=x", "PYTHONPATH=/old", "OPENBLAS_CORETYPE=SkylakeX"}
	env := peerEnv(base, 2, true, "/p")
	want := []string{"PATH=/bin", "OPENBLAS_CORETYPE=SkylakeX", "OPENBLAS_NUM_THREADS=2", "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive",
		"GLIBC_TUNABLES=" + peerMallocTunables, "PYTHONPATH=/p"}
	if !slices.Equal(env, want) {
		t.Errorf("tuned env %q, want %q", env, want)
	}
	env = peerEnv(base, 2, false, "")
	want = []string{"PATH=/bin", "PYTHONPATH=/old", "OPENBLAS_CORETYPE=SkylakeX", "OPENBLAS_NUM_THREADS=2", "OMP_NUM_THREADS=2"}
	if !slices.Equal(env, want) {
		t.Errorf("untuned env %q, want %q", env, want)
	}
}

func TestParseShapes(t *testing.T) {
	s, err := parseShapes("sgpr/10000/200, svgp/50000/500", 1000)
	if err != nil || !slices.Equal(s, []shape{{"sgpr", 10000, 200, 0}, {"svgp", 50000, 500, 1000}}) {
		t.Errorf("parseShapes = %v, %v", s, err)
	}
	for _, bad := range []string{"gpr/10/2", "sgpr/10", "sgpr/10/20", "sgpr/x/2"} {
		if _, err := parseShapes(bad, 1000); err == nil {
			t.Errorf("parseShapes(%q): no error", bad)
		}
	}
}

// The convergence table states a bound when one side never met the rule,
// and the ratio of the times at which the rule first held otherwise.
func TestConvergeTable(t *testing.T) {
	s := shape{Model: "sgpr", N: 1000, M: 10}
	// Exponential approach to -500: the rule holds once the gain per
	// iteration is below 1e-5 of the scale max(|f|, N) = 1000.
	trace := func(rate, dt float64, n int) []point {
		var tr []point
		for i := range n {
			tr = append(tr, point{It: i, Wall: dt * float64(i), CPU: dt * float64(i), F: -500 - 1000*math.Exp(-rate*float64(i))})
		}
		return tr
	}
	sg := run{Shape: s, Side: "sgplab", Mode: "converge", StopTol: 1e-5, Trace: trace(0.2, 0.1, 400), Final: record{Kind: "final", Status: "converged"}}
	fast := run{Shape: s, Side: "gpytorch", Recipe: "lbfgs", Mode: "converge", StopTol: 1e-5, Trace: trace(0.2, 0.4, 400), Final: record{Kind: "final"}}
	slow := run{Shape: s, Side: "gpytorch", Recipe: "adam", Mode: "converge", StopTol: 1e-5, Trace: trace(0.001, 0.4, 50), Final: record{Kind: "final", Status: "time budget"}}
	out := renderTables([]run{sg, fast, slow}, machine{CPU: "test", Cores: 2, Date: time.Unix(0, 0)})
	cs, _ := converged(sg.Trace, 1e-5, s.N, 0)
	if !cs.Held || cs.Steps < 20 || cs.Steps > 100 {
		t.Fatalf("rule holds at %d (held %v): the synthetic trace is off", cs.Steps, cs.Held)
	}
	for _, want := range []string{"| torch L-BFGS, strong Wolfe | " + convCell(cs, &sg) + " | ", "| 0.25 (0.25) | 0.25 |",
		"| Adam 0.01 (documented) |", "† (time budget)", "| < "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestRoundedBound: a bound printed to two decimals must still hold.
func TestRoundedBound(t *testing.T) {
	for _, tc := range []struct {
		x     float64
		upper bool
		want  string
	}{
		{0.1515, true, "0.16"}, // 136.4 s against a 900 s budget
		{0.1515, false, "0.15"},
		{0.15, true, "0.15"},
		{0.15, false, "0.15"},
		{0.1793, true, "0.18"},
		{1.004, false, "1.00"},
	} {
		if got := roundedBound(tc.x, tc.upper); got != tc.want {
			t.Errorf("roundedBound(%v, upper %v) = %s, want %s", tc.x, tc.upper, got, tc.want)
		}
	}
}

// TestConvCellNamesRecipe: a converge row says when sgplab's side ran
// other than its default recipe (-sgplab-lbfgs-memory), and only then.
func TestConvCellNamesRecipe(t *testing.T) {
	c := convergence{Wall: 1, CPU: 2, Steps: 3, Held: true}
	for _, tc := range []struct {
		r    run
		want string
	}{
		{run{Side: "sgplab", Recipe: "default"}, "1.0 (2.0), 3"},
		{run{Side: "sgplab", Recipe: "lbfgs_memory 100"}, "1.0 (2.0), 3, lbfgs_memory 100"},
		{run{Side: "gpytorch", Recipe: "lbfgs"}, "1.0 (2.0), 3"},
	} {
		if got := convCell(c, &tc.r); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.r.Side, tc.r.Recipe, got, tc.want)
		}
	}
}

// TestTrailingMeans: each point's objective becomes the mean of the last w
// up to it; the first w−1 points have none.
func TestTrailingMeans(t *testing.T) {
	tr := []point{{It: 0, F: 1}, {It: 1, F: 5}, {It: 2, F: 3}, {It: 3, F: 7}, {It: 4, F: 2}}
	got := trailingMeans(tr, 3)
	want := []point{{It: 2, F: 3}, {It: 3, F: 5}, {It: 4, F: 4}}
	if !slices.Equal(got, want) {
		t.Errorf("trailingMeans(w = 3) = %v, want %v", got, want)
	}
	if got := trailingMeans(tr, 6); got != nil {
		t.Errorf("a window longer than the trace gave %v", got)
	}
}

// TestSVGPCommon: for minibatch traces the common target is the lower of
// the two sides' trailing means where their rules held, and each side's
// time is where its own trailing mean first reaches it; single noisy
// objectives above the target do not count.
func TestSVGPCommon(t *testing.T) {
	s := shape{Model: "svgp", N: 1000, M: 10}
	// A ramp from 0 by slope per step to a plateau, with ±noise alternating.
	trace := func(slope, plateau, noise, dt float64, n int) []point {
		var tr []point
		for i := range n {
			f := math.Min(slope*float64(i), plateau)
			if i%2 == 0 {
				f += noise
			} else {
				f -= noise
			}
			tr = append(tr, point{It: i, Wall: dt * float64(i), F: f})
		}
		return tr
	}
	const w = 4
	sg := run{Side: "sgplab", StopWindow: w, Trace: trace(1, 100, 50, 0.1, 300)}
	pr := run{Side: "gpytorch", StopWindow: w, Trace: trace(2, 90, 50, 1, 300)}
	cs := convergence{Index: 299, Held: true}
	cp := convergence{Index: 299, Held: true}
	a, c, ok := commonReach(s.Model, &sg, &pr, cs, cp)
	if !ok {
		t.Fatal("no common point")
	}
	// Target 90 (the peer's plateau). sgplab's mean over steps i−3 … i is
	// i − 1.5 (the noise cancels over an even window): first ≥ 90 at
	// i = 92. The peer's, 2i − 3 below its plateau, is 89.5 at i = 47
	// (88, 90, 90, 90) and 90 at i = 48.
	if a.It != 92 || c.It != 48 {
		t.Errorf("reached at steps %d and %d, want 92 and 48", a.It, c.It)
	}
	if r := a.Wall / c.Wall; math.Abs(r-9.2/48) > 1e-12 {
		t.Errorf("ratio %v, want %v", r, 9.2/48)
	}
}

// TestMeasuredTablesCurrent: the tables under "### Measured" in
// docs/performance.md are what `peerbench table` makes of the committed
// measurements (bench/peerbench/results), row for row and both ways, so
// the page cannot drift from its source. The header lines name the
// machine rendering them and are not compared.
func TestMeasuredTablesCurrent(t *testing.T) {
	rows := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "|") {
				out = append(out, l)
			}
		}
		return out
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, measured, ok := strings.Cut(string(doc), "### Measured")
	if !ok {
		t.Fatal(`docs/performance.md has no "### Measured" section`)
	}
	// Each results file's tables follow the comment that names it, up to
	// the next such comment.
	const ref = "table bench/peerbench/"
	blocks := strings.Split(measured, ref)
	seen := map[string]bool{}
	for _, b := range blocks[1:] {
		results, _, _ := strings.Cut(b, "`")
		runs, err := readResults(results)
		if err != nil {
			t.Fatal(err)
		}
		seen[results] = true
		want := rows(renderTables(runs, machine{}))
		if got := rows(b); !slices.Equal(got, want) {
			t.Errorf("docs/performance.md's measured tables differ from `peerbench table %s` (regenerate them):\ngot\n%s\nwant\n%s",
				results, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	files, err := filepath.Glob("results/*.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !seen[f] {
			t.Errorf("%s has no tables in docs/performance.md's measured section", f)
		}
	}
	if len(seen) == 0 {
		t.Error("docs/performance.md's measured section names no results file")
	}
}
