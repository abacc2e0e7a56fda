package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
)

// TestVariationalRecipeNatGradConjugate: with the hyperparameters fixed, one
// natural-gradient step of length 1 through the training recipe (sampler,
// objective, optim.TrainNatGrad) lands q(u) on the closed-form optimum for
// a Gaussian likelihood, so the ELBO after the step equals the collapsed
// bound (SGPR, an independent code path) — for inducing points (dense
// Cholesky), VFF (structured root) and both parameterisations.
func TestVariationalRecipeNatGradConjugate(t *testing.T) {
	n := 60
	train := sineData(5, n)
	x, y := train.X, train.Y
	method, err := Lookup("svgp")
	if err != nil {
		t.Fatal(err)
	}
	params, err := method.Validate(map[string]any{"natgrad_step": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	recipe := method.Recipe(params, FitOptions{Optimizer: "adam", Iterations: 1}, n)
	for _, feat := range []string{"points", "vff"} {
		for _, whiten := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/whiten=%v", feat, whiten), func(t *testing.T) {
				k, err := kernels.New("matern32", 1, kernels.Options{Variance: 0.9, Lengthscales: []float64{0.2}})
				if err != nil {
					t.Fatal(err)
				}
				set := param.NewSet()
				if err := k.Declare(set, KernelPrefix); err != nil {
					t.Fatal(err)
				}
				lik := likelihoods.NewGaussian(0.05)
				if err := lik.Declare(set, likelihoodPfx); err != nil {
					t.Fatal(err)
				}
				var f features.Feature
				g := Block{Name: "u"}
				if feat == "points" {
					z := mat.NewDense(12, 1, nil)
					for i := 0; i < 12; i++ {
						z.Set(i, 0, (float64(i)+0.5)/12)
					}
					pts := &features.InducingPoints{Z: z, Fixed: true}
					if err := pts.Declare(set, g.FeaturePrefix()); err != nil {
						t.Fatal(err)
					}
					f = pts
				} else if f, err = features.NewVFF(k, []features.Interval{{A: -0.5, B: 1.5}}, 10, features.Kronecker, false); err != nil {
					t.Fatal(err)
				}
				if err := g.DeclareQ(set, k, f, whiten, 1e-8); err != nil {
					t.Fatal(err)
				}
				for _, name := range set.Names() {
					if !strings.Contains(name, "q_") {
						set.SetTrainable(false, name)
					}
				}
				// The structured VFF root adds no jitter, so neither may the
				// reference (VFF's Kuu is well conditioned).
				opts := inference.Options{Jitter: 1e-8}
				if feat == "vff" {
					opts.Jitter = 0
				}
				fit := variationalFit{method: "test", set: set, groups: []Block{g}, recipe: recipe,
					objective: func(tp *ad.Tape, b *param.Bound, bt Batch) (*ad.Node, error) {
						ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, likelihoodPfx, mu, v, bt.Y) }
						out, _, err := inference.SVGP(k.Bind(b, KernelPrefix), g.Bind(b, f), tp.Const(bt.X), ve, g.Variational(b, whiten), n, opts)
						return out, err
					}}
				rep, err := fit.train(context.Background(), train, FitOptions{Iterations: 1}, time.Now(), nil)
				if err != nil {
					t.Fatal(err)
				}
				tp := ad.NewTape()
				b := set.Bind(tp)
				collapsed, _, err := inference.SGPR(k.Bind(b, KernelPrefix), g.Bind(b, f), tp.Const(x), y, b.Get(noiseName), opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Trace) != 2 {
					t.Fatalf("trace has %d points, want 2", len(rep.Trace))
				}
				before, after, want := rep.Trace[0].Objective, rep.Objective, collapsed.Scalar()
				e := math.Abs(after-want) / math.Abs(want)
				t.Logf("ELBO after one step %.15g, collapsed %.15g, rel %.2g (before %.6g)", after, want, e, before)
				if e > 1e-9 {
					t.Errorf("ELBO after one natural-gradient step %.12g, collapsed bound %.12g (rel %.2g; before the step %.6g)", after, want, e, before)
				}
			})
		}
	}
}

// TestVariationalRecipeSettings: the recipe's optimiser rules.
func TestVariationalRecipeSettings(t *testing.T) {
	for _, tc := range []struct {
		opt  FitOptions
		def  string
		want string
		err  string
	}{
		{FitOptions{}, "lbfgs", "lbfgs", ""},
		{FitOptions{BatchSize: 10}, "lbfgs", "adam", ""},
		{FitOptions{BatchSize: 10, Optimizer: "lbfgs"}, "adam", "", "L-BFGS needs full-batch gradients"},
		{FitOptions{BatchSize: 500}, "lbfgs", "lbfgs", ""},
		{FitOptions{Optimizer: "sgd"}, "adam", "", "unknown optimizer"},
	} {
		d := &sparseDecl{optimizer: tc.def, objective: always(elbo)}
		st, err := variationalSettings(tc.opt, 100, d.recipe(Params{}, tc.opt, 100))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.err)
			}
			continue
		}
		if err != nil || st.Method != tc.want {
			t.Errorf("%+v: method %q (err %v), want %q", tc.opt, st.Method, err, tc.want)
		}
	}
	if _, err := Build("svgp", map[string]any{"natgrad_step": -1.0}); err == nil {
		t.Error("natgrad_step = -1 accepted")
	}
	if _, err := Build("vff", map[string]any{"natgrad_step": 1.0}); err == nil {
		t.Error("natgrad_step with the collapsed objective accepted")
	}
}

// TestSVGPNatGradFit: svgp with natgrad_step trains end to end through Fit
// (natural gradients on q, Adam on the rest) and improves the ELBO.
func TestSVGPNatGradFit(t *testing.T) {
	model, err := Build("svgp", map[string]any{"natgrad_step": 0.5, "num_inducing": int64(10), "lengthscales": []any{0.3}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), sineData(2, 80), FitOptions{Iterations: 30, LearningRate: 0.01, BatchSize: 40, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first := res.Trace[0].Objective; !(res.Objective > first) {
		t.Errorf("full-data ELBO %v after 30 steps, first minibatch estimate %v", res.Objective, first)
	}
	if _, ok := res.Extra["last_minibatch_objective"]; !ok {
		t.Error("no last_minibatch_objective after minibatch training")
	}
}

// sineData is n noisy samples of sin(6x) on [0, 1].
func sineData(seed uint64, n int) gp.Data {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.Float64())
		y[i] = math.Sin(6*x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

// TestIntervalKroneckerComponentVarianceStaysFixed: the Kronecker product
// kernel's later component variances are declared fixed (only the product
// is identifiable) and the shared training keeps them fixed, for the
// collapsed and the svgp objectives (before the shared recipe, vff's own
// training call made every parameter trainable).
func TestIntervalKroneckerComponentVarianceStaysFixed(t *testing.T) {
	for _, objective := range []string{"collapsed", "svgp"} {
		model, err := Build("vff", map[string]any{"frequencies": int64(4), "objective": objective})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), boxData(150, 2, 4), FitOptions{Iterations: 15}, nil)
		if err != nil {
			t.Fatal(err)
		}
		name := features.ComponentPrefix(KernelPrefix, 1) + "variance"
		found := false
		for _, h := range res.Hyper {
			if h.Name == name {
				found = true
				if math.Abs(h.Value[0]-1) > 1e-12 { // 1 up to the softplus round trip
					t.Errorf("%s: %s = %v after training, want the fixed 1", objective, name, h.Value[0])
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s in %v", objective, name, res.Hyper)
		}
	}
}

// TestVariationalWarmStart: the warm start (warm_start_iterations L-BFGS
// steps on a seeded subset of warm_start_points rows) is exactly an
// L-BFGS fit of the subset's own ELBO — the same subset (stream 4 of the
// fit seed), the same data scaling N = |subset| — followed by the
// configured fit on all rows: a warm start followed by one Adam step of
// negligible length lands on the hyperparameters of a plain L-BFGS fit
// on the subset, and differs from an L-BFGS fit on all rows.
func TestVariationalWarmStart(t *testing.T) {
	const n, sub, warm, seed = 90, 40, 25, 7
	train := sineData(3, n)
	zfile := t.TempDir() + "/z.csv"
	var zs strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&zs, "%g\n", (float64(i)+0.5)/8)
	}
	if err := os.WriteFile(zfile, []byte(zs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"inducing_init": "file", "z_file": zfile, "num_inducing": int64(8), "lengthscales": []any{0.3}, "noise_variance": 0.1}
	fit := func(data gp.Data, extra map[string]any, opt FitOptions) FitResult {
		t.Helper()
		p := map[string]any{}
		for k, v := range params {
			p[k] = v
		}
		for k, v := range extra {
			p[k] = v
		}
		model, err := Build("svgp", p)
		if err != nil {
			t.Fatal(err)
		}
		opt.Seed = seed
		res, err := model.Fit(context.Background(), data, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	warmed := fit(train, map[string]any{"warm_start_iterations": int64(warm), "warm_start_points": int64(sub)},
		FitOptions{Iterations: 1, Optimizer: "adam", LearningRate: 1e-300})
	subset := train.Subset(rand.New(rand.NewPCG(seed, 4)).Perm(n)[:sub])
	onSubset := fit(subset, nil, FitOptions{Iterations: warm, Optimizer: "lbfgs"})
	onAll := fit(train, nil, FitOptions{Iterations: warm, Optimizer: "lbfgs"})
	if warmed.Iterations != onSubset.Iterations+1 {
		t.Errorf("warm start + 1 Adam step ran %d iterations, want %d + 1", warmed.Iterations, onSubset.Iterations)
	}
	differsFromAll := false
	for i, h := range warmed.Hyper {
		want := onSubset.Hyper[i]
		if h.Name != want.Name || len(h.Value) != len(want.Value) {
			t.Fatalf("hyperparameter %d: %s against %s", i, h.Name, want.Name)
		}
		for j := range h.Value {
			if d := math.Abs(h.Value[j] - want.Value[j]); d > 1e-12*math.Max(1, math.Abs(want.Value[j])) {
				t.Errorf("%s[%d] after the warm start %v, L-BFGS on the subset %v", h.Name, j, h.Value[j], want.Value[j])
			}
			if math.Abs(h.Value[j]-onAll.Hyper[i].Value[j]) > 1e-6 {
				differsFromAll = true
			}
		}
	}
	if !differsFromAll {
		t.Error("the warm start on a subset matches an L-BFGS fit on all rows: the subset is not used")
	}
	for _, bad := range []map[string]any{{"warm_start_iterations": int64(-1)}, {"warm_start_points": int64(0)}} {
		if _, err := Build("svgp", bad); err == nil || !strings.Contains(err.Error(), "warm_start") {
			t.Errorf("svgp %v: error %v, want one naming the parameter", bad, err)
		}
	}
}

// TestWarmStartThenNatGrad: the default minibatch recipe (natural
// gradients on q(u)) continues from whatever square root of S the L-BFGS
// warm start leaves, negative diagonal entries included.
func TestWarmStartThenNatGrad(t *testing.T) {
	train := sineData(5, 400)
	model, err := Build("svgp", map[string]any{"num_inducing": int64(20), "lengthscales": []any{0.3}, "noise_variance": 0.1,
		"warm_start_iterations": int64(60), "warm_start_points": int64(100)})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	res, err := model.Fit(context.Background(), train, FitOptions{Task: Regression, BatchSize: 50, Iterations: 20, Seed: 3},
		func(p Progress) { phases[p.Phase]++ })
	if err != nil {
		t.Fatalf("warm start, then natural gradients: %v", err)
	}
	if phases["natgrad+adam"] != 21 || phases["warm"] == 0 || res.Iterations != phases["warm"]-1+20 {
		t.Errorf("progress by phase %v, %d iterations; want the warm start, then 20 natural-gradient steps", phases, res.Iterations)
	}
}
