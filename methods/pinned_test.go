package methods

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"sgplab/gp"
	"sgplab/gp/ad"
)

// updatePinned rewrites testdata/pinned/*.json from the code as it is:
// go test ./methods/ -run TestPinnedBits -update.
var updatePinned = flag.Bool("update", false, "rewrite the pinned bits in testdata/pinned")

// pinnedCase is one fit whose every recorded float64 is pinned bit for bit:
// a method with the reproCases parameters (name = method), or a variant
// that reaches a code path the default parameters do not (another
// objective, minibatches, classification, natural gradients, a warm start,
// another feature pair), named method@variant.
type pinnedCase struct {
	name, method string
	c            reproCase
	opt          FitOptions
	class        bool // ±1 labels (sign of the regression target)
}

// pinnedVariants are the extra cases beside every registered method's
// default one. They are small: the point is the bits, not the fit.
var pinnedVariants = []pinnedCase{
	{name: "svgp@minibatch", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(20)}, dim: 2, n: 400, iter: 4},
		opt: FitOptions{Optimizer: "adam", BatchSize: 100}},
	// The default recipe with minibatches and a Gaussian likelihood:
	// natural gradients on q(u) (γ = 0.1) beside Adam, without and with
	// the default warm start (100 L-BFGS iterations on the 400 rows).
	{name: "svgp@minibatch-default", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(20), "warm_start_iterations": int64(0)}, dim: 2, n: 400, iter: 4},
		opt: FitOptions{BatchSize: 100}},
	{name: "svgp@minibatch-warm", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(20)}, dim: 2, n: 400, iter: 4},
		opt: FitOptions{BatchSize: 100}},
	{name: "svgp@natgrad", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(20), "natgrad_step": 0.5}, dim: 2, n: 400, iter: 3},
		opt: FitOptions{Optimizer: "adam"}},
	{name: "svgp@classification", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(15), "whiten": false, "init_iterations": int64(2)}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam"}, class: true},
	{name: "svgp@warm", method: "svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(15), "warm_start_iterations": int64(2), "warm_start_points": int64(150)}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam"}},
	{name: "sgpr@greedy", method: "sgpr", c: reproCase{raw: map[string]any{"num_inducing": int64(15), "inducing_init": "greedy", "train_inducing": false, "reselect_rounds": int64(2)}, dim: 2, n: 300, iter: 3}},
	{name: "vff@svgp", method: "vff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "objective": "svgp", "frequencies": int64(4)}, dim: 2, n: 300, iter: 3}},
	{name: "vff@svgp-minibatch", method: "vff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "objective": "svgp", "frequencies": int64(4), "whiten": false}, dim: 1, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam", BatchSize: 64}},
	{name: "vff@additive", method: "vff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "structure": "additive", "frequencies": int64(5), "mask": false}, dim: 3, n: 300, iter: 3}},
	{name: "vff@mask", method: "vff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "frequencies": int64(5), "mask": true}, dim: 2, n: 300, iter: 3}},
	{name: "bspline@svgp-additive", method: "bspline", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "objective": "svgp", "structure": "additive", "bases": int64(8)}, dim: 2, n: 300, iter: 3}},
	{name: "avff@svgp-natgrad", method: "avff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "kernel": "matern32", "objective": "svgp", "frequencies": int64(4), "natgrad_step": 1.0}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam"}},
	{name: "vish@svgp", method: "vish", c: reproCase{raw: map[string]any{"kernel": "sphere-matern32", "train_weights": false, "objective": "svgp", "max_level": int64(2)}, dim: 2, n: 300, iter: 3}},
	{name: "vish@svgp-minibatch", method: "vish", c: reproCase{raw: map[string]any{"kernel": "sphere-matern32", "objective": "svgp", "max_level": int64(2), "whiten": false, "train_weights": true}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam", BatchSize: 64}},
	{name: "vish@classification", method: "vish", c: reproCase{raw: map[string]any{"kernel": "sphere-matern32", "train_weights": false, "objective": "svgp", "max_level": int64(2), "warm_start_iterations": int64(2), "warm_start_points": int64(100)}, dim: 2, n: 300, iter: 3},
		class: true},
	{name: "vish@trained-weights", method: "vish", c: reproCase{raw: map[string]any{"kernel": "sphere-matern32", "max_level": int64(2), "train_weights": true}, dim: 2, n: 300, iter: 3}},
	{name: "activated-svgp@minibatch", method: "activated-svgp", c: reproCase{raw: map[string]any{"num_inducing": int64(16), "init_iterations": int64(2), "whiten": true}, dim: 2, n: 300, iter: 4},
		opt: FitOptions{Optimizer: "adam", BatchSize: 64}},
	{name: "activated-svgp@classification", method: "activated-svgp", c: reproCase{raw: map[string]any{"whiten": false, "num_inducing": int64(16), "init_iterations": int64(2), "directions_init": "random", "train_directions": false}, dim: 2, n: 300, iter: 3},
		class: true},
	{name: "odvgp@classification", method: "odvgp", c: reproCase{raw: map[string]any{"whiten": false, "num_inducing": int64(10), "num_orthogonal": int64(10)}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam"}, class: true},
	{name: "odvgp@minibatch", method: "odvgp", c: reproCase{raw: map[string]any{"whiten": false, "num_inducing": int64(10), "num_orthogonal": int64(10), "natgrad_step": 0.3}, dim: 2, n: 300, iter: 3},
		opt: FitOptions{BatchSize: 64}},
	{name: "odvff@hybrid", method: "odvff", c: reproCase{raw: map[string]any{"lengthscales": []any{0.2}, "interval_margin": 0.1, "kernel": "matern32", "beta": "hybrid", "frequencies": int64(5), "periodic_inducing": int64(6), "num_orthogonal": int64(8)}, dim: 1, n: 300, iter: 3},
		opt: FitOptions{Optimizer: "adam"}},
	{name: "solvegp@whiten", method: "solvegp", c: reproCase{raw: map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(10), "whiten": true, "init_iterations": int64(2), "inducing_init": "random"}, dim: 2, n: 300, iter: 3}},
	{name: "spherical-orthogonal@harmonics", method: "spherical-orthogonal", c: reproCase{raw: map[string]any{"whiten": false, "base": "harmonics", "orthogonal": "activation", "max_level": int64(2), "num_orthogonal": int64(10), "init_iterations": int64(2)}, dim: 2, n: 300, iter: 3}},
	{name: "spherical-orthogonal@points", method: "spherical-orthogonal", c: reproCase{raw: map[string]any{"base": "points", "orthogonal": "harmonics", "max_level": int64(2), "num_inducing": int64(10), "init_iterations": int64(2), "whiten": true}, dim: 2, n: 300, iter: 3},
		class: true},
	{name: "zonal-spectrum@activation", method: "zonal-spectrum", c: reproCase{raw: map[string]any{"quantity": "activation", "activation": "softplus", "level": int64(4)}, dim: 2, n: 50}},
	{name: "vof-hermite@optimal", method: "vof-hermite", c: reproCase{raw: map[string]any{"q_update": "optimal", "covariance": "diagonal", "num_features": int64(9), "eval_samples": int64(3)}, dim: 1, n: 200, iter: 3}},
	{name: "vof-trig@quadrature", method: "vof-trig", c: reproCase{raw: map[string]any{"kernel": "matern32", "estimator": "quadrature", "num_features": int64(9), "eval_samples": int64(3)}, dim: 1, n: 200, iter: 3}},
}

// pinnedCases are the default case of every registered method (the
// reproducibility test's reproCases) and the variants.
func pinnedCases() []pinnedCase {
	var out []pinnedCase
	for _, m := range All() {
		c, ok := reproCases[m.Name]
		if !ok {
			c = reproDefault
		}
		out = append(out, pinnedCase{name: m.Name, method: m.Name, c: c})
	}
	return append(out, pinnedVariants...)
}

// pinnedRecord is what a fit records, each float64 as the hex of its bits
// (math.Float64bits), so that a golden file compares bit for bit and a
// diff names the quantity that moved.
type pinnedRecord struct {
	Objective  string              `json:"objective"`
	Iterations int                 `json:"iterations"`
	Trace      []string            `json:"trace"`
	Hyper      map[string][]string `json:"hyper"`
	Extra      map[string]string   `json:"extra"`
	Mean       []string            `json:"mean"`
	VarF       []string            `json:"var_f"`
	VarY       []string            `json:"var_y,omitempty"`
	Prob       []string            `json:"prob_positive,omitempty"`
}

func bitsOf(v float64) string { return fmt.Sprintf("%016x", math.Float64bits(v)) }

func bitsOfAll(vs []float64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = bitsOf(v)
	}
	return out
}

// pinnedFit runs one case and returns its record.
func pinnedFit(c pinnedCase) (pinnedRecord, error) {
	train, test := reproData(1, c.c.n, c.c.dim), reproData(2, 50, c.c.dim)
	opt := c.opt
	opt.Iterations, opt.Seed, opt.Task = c.c.iter, 5, Regression
	if c.class {
		for _, d := range []gp.Data{train, test} {
			for i, y := range d.Y {
				d.Y[i] = math.Copysign(1, y)
			}
		}
		opt.Task = Classification
	}
	model, err := Build(c.method, c.c.raw)
	if err != nil {
		return pinnedRecord{}, err
	}
	res, err := model.Fit(context.Background(), train, opt, nil)
	if err != nil {
		return pinnedRecord{}, fmt.Errorf("fit: %w", err)
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		return pinnedRecord{}, fmt.Errorf("predict: %w", err)
	}
	r := pinnedRecord{Objective: bitsOf(res.Objective), Iterations: res.Iterations, Hyper: map[string][]string{}, Extra: map[string]string{},
		Mean: bitsOfAll(pred.Mean), VarF: bitsOfAll(pred.VarF), VarY: bitsOfAll(pred.VarY), Prob: bitsOfAll(pred.ProbPositive)}
	for _, p := range res.Trace {
		r.Trace = append(r.Trace, bitsOf(p.Objective))
	}
	for _, h := range res.Hyper {
		r.Hyper[h.Name] = bitsOfAll(h.Value)
	}
	for k, v := range res.Extra {
		if !strings.HasSuffix(k, "_seconds") { // timings differ by nature
			r.Extra[k] = bitsOf(v)
		}
	}
	return r, nil
}

// TestPinnedBits fits every registered method and the variants once and
// compares every recorded float64 with testdata/pinned bit for bit: the
// oracle that a refactoring of the methods changes no number. The bits
// are those of gonum's pure-Go BLAS on amd64; other backends and
// architectures round differently and are skipped (their determinism is
// TestSameBitsOnAnyCoreCount's).
func TestPinnedBits(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every method")
	}
	if b := ad.BLASBackend(); b != "gonum" || runtime.GOARCH != "amd64" {
		t.Skipf("bits pinned for pure-Go gonum BLAS on amd64; this build uses %s on %s", b, runtime.GOARCH)
	}
	dir := filepath.Join("testdata", "pinned")
	if *updatePinned {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, c := range pinnedCases() {
		seen[c.name+".json"] = true
		t.Run(c.name, func(t *testing.T) {
			got, err := pinnedFit(c)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.name+".json")
			if *updatePinned {
				b, err := json.MarshalIndent(got, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (a new method or case: go test ./methods/ -run TestPinnedBits -update)", err)
			}
			var want pinnedRecord
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			for _, d := range pinnedDiff(want, got) {
				t.Error(d)
			}
		})
	}
	if *updatePinned {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s pins a case that no longer exists; remove it", f)
		}
	}
}

// pinnedDiff lists every quantity whose bits differ, by name.
func pinnedDiff(want, got pinnedRecord) []string {
	var out []string
	one := func(what, w, g string) {
		if w != g {
			out = append(out, fmt.Sprintf("%s: bits %s, pinned %s (%.17g, pinned %.17g)", what, g, w, fromBits(g), fromBits(w)))
		}
	}
	list := func(what string, w, g []string) {
		if len(w) != len(g) {
			out = append(out, fmt.Sprintf("%s: %d values, pinned %d", what, len(g), len(w)))
			return
		}
		for i := range w {
			one(fmt.Sprintf("%s[%d]", what, i), w[i], g[i])
		}
	}
	one("objective", want.Objective, got.Objective)
	if want.Iterations != got.Iterations {
		out = append(out, fmt.Sprintf("iterations: %d, pinned %d", got.Iterations, want.Iterations))
	}
	list("trace", want.Trace, got.Trace)
	for _, k := range unionKeys(want.Hyper, got.Hyper) {
		list("hyper "+k, want.Hyper[k], got.Hyper[k])
	}
	for _, k := range unionKeys(want.Extra, got.Extra) {
		w, wok := want.Extra[k]
		g, gok := got.Extra[k]
		switch {
		case !wok:
			out = append(out, fmt.Sprintf("extra %s: recorded, not pinned", k))
		case !gok:
			out = append(out, fmt.Sprintf("extra %s: pinned, not recorded", k))
		default:
			one("extra "+k, w, g)
		}
	}
	list("mean", want.Mean, got.Mean)
	list("var_f", want.VarF, got.VarF)
	list("var_y", want.VarY, got.VarY)
	list("prob_positive", want.Prob, got.Prob)
	return out
}

func fromBits(s string) float64 {
	var u uint64
	fmt.Sscanf(s, "%x", &u)
	return math.Float64frombits(u)
}

func unionKeys[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
