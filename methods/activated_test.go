package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/param"
)

// smoothData has a smooth target: the truncated units (levels 0, 1, 2, 4
// for L = 6) are smooth functions.
func smoothData(seed uint64, n int, noise float64) gp.Data {
	d := toyData(seed, n, 0)
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := range d.Y {
		a, b := d.X.At(i, 0), d.X.At(i, 1)
		d.Y[i] = 0.5*a - 0.3*b*b + 0.2*a*b + noise*rng.NormFloat64()
	}
	return d
}

// L-BFGS with the initialisation phase: the ELBO improves, the first phase
// leaves the kernel alone, and the final objective is the SVGP ELBO
// evaluated afresh at the final parameters.
func TestActivatedSVGPFit(t *testing.T) {
	train, test := smoothData(1, 150, 0.1), smoothData(2, 100, 0)
	// Whitened: the paper's q(u) = N(0, I) over u starts with a KL of order
	// M/jitter (Kuu is rank-deficient) and needs ~1000 L-BFGS steps here.
	model, err := Build("activated-svgp", map[string]any{"num_inducing": int64(30), "init_iterations": int64(20), "whiten": true})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 150, Seed: 1}, func(p Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 || phases[0] != "init" || phases[1] != "all" {
		t.Errorf("phases %v, want [init all]", phases)
	}
	if res.Iterations <= 20 || res.Trace[len(res.Trace)-1].Iteration != res.Iterations {
		t.Errorf("%d iterations, last trace point %d: the phases' counts must add up", res.Iterations, res.Trace[len(res.Trace)-1].Iteration)
	}
	if !(res.Objective > res.Trace[0].Objective) {
		t.Errorf("ELBO %v → %v", res.Trace[0].Objective, res.Objective)
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if r := rmse(pred.Mean, test.Y); r > 0.1 {
		t.Errorf("test RMSE %.3f", r)
	}
	m := sparseOf(t, model)
	tp := ad.NewTape()
	b := m.set.Bind(tp)
	ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, columnOf(train.Y)) }
	want, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, inducingPfx), tp.Const(train.X), ve, m.q(b, 0), train.N(), m.opts())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(want.Scalar()-res.Objective) > 1e-9*math.Abs(want.Scalar()) {
		t.Errorf("reported ELBO %.12g, recomputed %.12g", res.Objective, want.Scalar())
	}
	if res.Extra["relu_rkhs_divergent"] != 0 {
		t.Error("softplus flagged as divergent")
	}
}

// Adam on minibatches, classification with probit, reproducible by seed,
// and the ReLU divergence flag.
func TestActivatedSVGPAdamClassification(t *testing.T) {
	data := smoothData(5, 200, 0)
	for i, v := range data.Y {
		data.Y[i] = 1
		if v < 0 {
			data.Y[i] = -1
		}
	}
	train, test := data.Subset(seq(0, 150)), data.Subset(seq(150, 200))
	raw := map[string]any{"num_inducing": int64(20), "activation": "relu", "init_iterations": int64(0), "kernel": "chordal-matern52", "whiten": true}
	opt := FitOptions{Iterations: 300, LearningRate: 0.03, BatchSize: 50, Seed: 4, Task: Classification}
	var objs []float64
	for range 2 {
		model, err := Build("activated-svgp", raw)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Extra["relu_rkhs_divergent"] != 1 {
			t.Error("relu features not flagged")
		}
		objs = append(objs, res.Objective)
		pred, err := model.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		if wrong := misclassified(pred, test.Y); wrong > 10 {
			t.Errorf("%d of 50 misclassified", wrong)
		}
	}
	if objs[0] != objs[1] {
		t.Errorf("same seed, objectives %v and %v", objs[0], objs[1])
	}
}

func TestActivatedSVGPBadInput(t *testing.T) {
	train := toyData(6, 30, 0.1)
	for _, c := range []struct {
		raw  map[string]any
		opt  FitOptions
		want string
	}{
		{map[string]any{"num_inducing": int64(0)}, FitOptions{}, "num_inducing"},
		{map[string]any{"activation_levels": int64(0)}, FitOptions{}, "activation_levels"},
		{map[string]any{"activation": "tanh"}, FitOptions{}, "activation"},
		{map[string]any{"num_inducing": int64(40)}, FitOptions{}, "directions_init"},
		{map[string]any{}, FitOptions{Optimizer: "lbfgs", BatchSize: 10}, "full-batch"},
		{map[string]any{"kernel": "chordal-se", "activation_levels": int64(40), "num_inducing": int64(10)}, FitOptions{}, "level"},
	} {
		model, err := Build("activated-svgp", c.raw)
		if err == nil {
			_, err = model.Fit(context.Background(), train, c.opt, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.raw, err, c.want)
		}
	}
}

// Units span the harmonics of the level set {ℓ < L : ζ_ℓλ_ℓ ≠ 0} (18
// functions on S² for L = 6), so with M = 30 > 18 units the SVGP ELBO
// optimised over q alone approaches the collapsed VISH bound on those
// levels at the same hyperparameters, from below (the gap is Kuu's
// jitter on the rank-deficient Gram matrix).
func TestActivatedSVGPReachesHarmonicBound(t *testing.T) {
	train := toyData(1, 150, 0.1)
	col, _ := Build("vish", map[string]any{"max_level": int64(5), "kernel": "arccos1"})
	rc, err := col.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	model, _ := Build("activated-svgp", map[string]any{"num_inducing": int64(30), "activation_levels": int64(6), "whiten": true})
	if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0, Seed: 1}, nil); err != nil {
		t.Fatal(err)
	}
	m := sparseOf(t, model)
	for _, n := range m.set.Names() {
		m.set.SetTrainable(n == QMuName || n == QSqrtName, n)
	}
	rep, err := Train(context.Background(), m.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
		ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, columnOf(train.Y)) }
		out, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, inducingPfx), tp.Const(train.X), ve, m.q(b, 0), train.N(), m.opts())
		return out, err
	}, optimSettingsLBFGS(2000), "lbfgs", time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objective > rc.Objective+1e-8 || rep.Objective < rc.Objective-1 {
		t.Errorf("activated SVGP optimum over q %.8g, harmonic collapsed bound %.8g", rep.Objective, rc.Objective)
	}
}

// svgp with the Tiao et al. recipe: an init phase on q(u) and Z (kernel and
// likelihood fixed), then L-BFGS on everything; a negative count is refused.
func TestSVGPInitPhase(t *testing.T) {
	train := smoothData(1, 120, 0.1)
	model, err := Build("svgp", map[string]any{"num_inducing": int64(15), "init_iterations": int64(10), "whiten": false})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 40, Seed: 1, Optimizer: "lbfgs"}, func(p Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 || phases[0] != "init" || phases[1] != "all" {
		t.Errorf("phases %v, want [init all] (the variational recipe's two phases)", phases)
	}
	if !(res.Objective > res.Trace[0].Objective) {
		t.Errorf("ELBO %v → %v", res.Trace[0].Objective, res.Objective)
	}
	if _, err := Build("svgp", map[string]any{"init_iterations": int64(-1)}); err == nil || !strings.Contains(err.Error(), "init_iterations") {
		t.Errorf("init_iterations = -1: error %v, want one naming init_iterations", err)
	}
}
