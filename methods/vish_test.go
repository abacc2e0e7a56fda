package methods

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

func optimSettingsLBFGS(iters int) optim.Settings {
	return optim.Settings{Method: optim.LBFGS, MaxIter: iters, GradTol: 1e-10}
}

// The collapsed VISH fit reaches a good test error, and its final
// objective and predictions equal the generic SGPR bound and posterior
// evaluated afresh with the same kernel and harmonics (so the O(M³)
// statistics path and the O(NM²) path agree after training).
func TestVISHCollapsedFit(t *testing.T) {
	train, test := toyData(1, 200, 0.1), toyData(2, 100, 0)
	// Fixed weights (the statistics path) and a Matérn kernel, whose
	// coefficients stay usable up to level 16.
	model, err := Build("vish", map[string]any{"max_level": int64(16), "weight_variances": []any{0.5}, "kernel": "sphere-matern32", "train_weights": false})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Extra["num_features"] != 289 || res.Extra["sphere_dim"] != 3 {
		t.Errorf("M = %v, d = %v; want 289 (levels 0…16 on S²), 3", res.Extra["num_features"], res.Extra["sphere_dim"])
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if r := rmse(pred.Mean, test.Y); r > 0.12 {
		t.Errorf("test RMSE %.3f", r)
	}
	m := sparseOf(t, model)
	tp := ad.NewTape()
	b := m.set.Bind(tp)
	kb, fb := m.bind(b, 0)
	want, _, err := inference.SGPR(kb, fb, tp.Const(train.X), train.Y, b.Get(noiseName), inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Objective-want.Scalar()) > 1e-9*math.Abs(want.Scalar()) {
		t.Errorf("final objective %.12g, SGPR at the final parameters %.12g", res.Objective, want.Scalar())
	}
	post, _, err := inference.SGPRPosterior(kb, fb, tp.Const(train.X), train.Y, b.Get(noiseName), inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mean, varf, _ := post.Predict(test.X, m.binder())
	for i := range mean {
		if math.Abs(mean[i]-pred.Mean[i]) > 1e-8 || math.Abs(varf[i]-pred.VarF[i]) > 1e-8 {
			t.Fatalf("point %d: prediction (%v, %v), SGPR posterior (%v, %v)", i, pred.Mean[i], pred.VarF[i], mean[i], varf[i])
		}
	}
}

// With trained weights the objective is the O(NM²) bound; at the initial
// point it equals the precomputed one, and training moves the weights.
func TestVISHTrainedWeights(t *testing.T) {
	train := toyData(3, 80, 0.1)
	vals := map[bool]float64{}
	for _, tw := range []bool{false, true} {
		model, err := Build("vish", map[string]any{"max_level": int64(4), "kernel": "chordal-matern32", "train_weights": tw})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		vals[tw] = res.Objective
	}
	if math.Abs(vals[true]-vals[false]) > 1e-10*math.Abs(vals[false]) {
		t.Errorf("initial bound %.12g with trained weights, %.12g from the statistics", vals[true], vals[false])
	}
	model, _ := Build("vish", map[string]any{"max_level": int64(4), "kernel": "chordal-matern32", "train_weights": true})
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 15}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Objective > vals[true]) {
		t.Errorf("training did not improve the bound: %v → %v", vals[true], res.Objective)
	}
	if w := hyper(res, KernelPrefix+"weight_variances"); len(w) != 2 || w[0] == 1 || w[1] == 1 {
		t.Errorf("weight variances %v did not move", w)
	}
	if _, err := model.Predict(train.X); err != nil {
		t.Fatal(err)
	}
}

// The uncollapsed ELBO at its optimum over q equals the collapsed bound;
// full-batch L-BFGS on q alone (weights and hyperparameters fixed) gets
// there.
func TestVISHSVGPReachesCollapsed(t *testing.T) {
	train := toyData(4, 60, 0.1)
	raw := map[string]any{"max_level": int64(3), "noise_variance": 0.05, "kernel": "sphere-matern32", "train_weights": false}
	col, _ := Build("vish", raw)
	rc, err := col.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, whiten := range []bool{true, false} {
		raw2 := map[string]any{"max_level": int64(3), "noise_variance": 0.05, "objective": "svgp", "whiten": whiten, "kernel": "sphere-matern32", "train_weights": false}
		sv, _ := Build("vish", raw2)
		m := sv.(*sparseModel)
		// Fit q only: the hyperparameters stay at the collapsed run's.
		_, err := sv.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.set.Names() {
			m.set.SetTrainable(n == QMuName || n == QSqrtName, n)
		}
		rep, err := Train(context.Background(), m.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			kb := m.kern.Bind(b, KernelPrefix)
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, columnOf(train.Y)) }
			out, _, err := inference.SVGP(kb, m.feat().Bind(b, ""), tp.Const(train.X), ve, m.q(b, 0), train.N(), inference.Options{})
			return out, err
		}, optimSettingsLBFGS(500), "lbfgs", time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rep.Objective-rc.Objective) > 1e-6*math.Abs(rc.Objective) || rep.Objective > rc.Objective+1e-8 {
			t.Errorf("whiten=%v: SVGP optimum %.10g, collapsed bound %.10g", whiten, rep.Objective, rc.Objective)
		}
	}
}

// Probit classification with the SVGP objective.
func TestVISHClassification(t *testing.T) {
	data := toyData(5, 200, 0)
	for i, v := range data.Y {
		data.Y[i] = 1
		if v < 0 {
			data.Y[i] = -1
		}
	}
	train, test := data.Subset(seq(0, 150)), data.Subset(seq(150, 200))
	model, err := Build("vish", map[string]any{"objective": "svgp", "max_level": int64(6), "weight_variances": []any{2.0}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 300, Optimizer: "adam", LearningRate: 0.05, BatchSize: 50, Seed: 3, Task: Classification}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Extra["last_minibatch_objective"]; !ok {
		t.Error("minibatch fit did not report the full-data ELBO")
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if wrong := misclassified(pred, test.Y); wrong > 8 {
		t.Errorf("%d of 50 test points misclassified", wrong)
	}
	// Same seed, same fit: bitwise.
	again, _ := Build("vish", map[string]any{"objective": "svgp", "max_level": int64(6), "weight_variances": []any{2.0}})
	res2, err := again.Fit(context.Background(), train, FitOptions{Iterations: 300, Optimizer: "adam", LearningRate: 0.05, BatchSize: 50, Seed: 3, Task: Classification}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Objective != res.Objective {
		t.Errorf("two fits with one seed: %v and %v", res.Objective, res2.Objective)
	}
}

func TestVISHBadInput(t *testing.T) {
	train := toyData(6, 30, 0.1)
	for _, c := range []struct {
		raw  map[string]any
		opt  FitOptions
		want string
	}{
		{map[string]any{"max_level": int64(-1)}, FitOptions{}, "max_level"},
		{map[string]any{"weight_variances": []any{1.0, 2.0, 3.0}}, FitOptions{}, "weight_variances"},
		{map[string]any{"bias_columns": int64(3)}, FitOptions{}, "bias_columns"},
		{map[string]any{}, FitOptions{Task: Classification}, "svgp"},
		{map[string]any{"kernel": "chordal-se", "max_level": int64(30)}, FitOptions{}, "level"},
		{map[string]any{"kernel": "sphere-matern32", "max_level": int64(10), "truncation": int64(8)}, FitOptions{}, "truncation"},
		{map[string]any{"objective": "svgp", "likelihood": "bernoulli"}, FitOptions{}, "±1"},
		{map[string]any{"kernel": "se"}, FitOptions{}, "kernel"},
	} {
		model, err := Build("vish", c.raw)
		if err == nil {
			_, err = model.Fit(context.Background(), train, c.opt, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.raw, err, c.want)
		}
	}
	model, _ := Build("vish", map[string]any{})
	if _, err := model.Predict(train.X); err == nil {
		t.Error("Predict before Fit accepted")
	}
}

// misclassified counts test labels (±1) on the wrong side of p = ½.
func misclassified(pred Prediction, y []float64) int {
	wrong := 0
	for i, p := range pred.ProbPositive {
		if (p > 0.5) != (y[i] > 0) {
			wrong++
		}
	}
	return wrong
}

// train_lengthscale = false keeps κ of the spherical Matérn at its initial
// value, as the VISH authors' kernel (no lengthscale parameter) does, and
// leaves the other hyperparameters trained; unset, κ moves.
func TestVISHFixedLengthscale(t *testing.T) {
	train := toyData(8, 120, 0.1)
	for _, tc := range []struct {
		name  string
		raw   map[string]any
		fixed bool
	}{
		{"trained (unset)", nil, false},
		{"trained", map[string]any{"train_lengthscale": true}, false},
		{"fixed", map[string]any{"train_lengthscale": false}, true},
		{"fixed, weights fixed (statistics path)", map[string]any{"train_lengthscale": false, "train_weights": false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := map[string]any{"max_level": int64(3), "kernel": "sphere-matern32", "truncation": int64(4), "lengthscales": []any{1.0}}
			for k, v := range tc.raw {
				raw[k] = v
			}
			model, err := Build("vish", raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 40}, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := sparseOf(t, model)
			kappa := m.set.Scalar(KernelPrefix + "lengthscales")
			variance := m.set.Scalar(KernelPrefix + "variance")
			if tc.fixed && math.Abs(kappa-1) > 1e-12 { // the positive transform round-trips to 1 − 1 ulp
				t.Errorf("κ = %v after the fit, want it fixed at 1", kappa)
			}
			if !tc.fixed && math.Abs(kappa-1) < 1e-6 {
				t.Errorf("κ = %v did not move", kappa)
			}
			if math.Abs(variance-1) < 1e-6 {
				t.Errorf("the kernel variance %v did not move: only κ should be fixed", variance)
			}
			if !(res.Objective > res.Trace[0].Objective) {
				t.Errorf("objective %v → %v", res.Trace[0].Objective, res.Objective)
			}
		})
	}
}

// A model fitted by the collapsed bound from statistics (a fixed Kuf:
// VISH with fixed weight variances, VFF, IFF) predicts from the
// statistics' posterior alone: once its caller drops the training set,
// nothing of the fitted model keeps the rows alive, so that the runner can
// free millions of them before predicting.
func TestStatsFitReleasesTrainingSet(t *testing.T) {
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"vish", map[string]any{"max_level": int64(4), "kernel": "sphere-matern32", "train_weights": false}},
		{"avff", map[string]any{"frequencies": int64(8)}},
		{"iff", map[string]any{}},
	} {
		model, err := Build(tc.method, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		train, test := toyData(1, 300, 0.1), toyData(2, 20, 0)
		if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 10}, nil); err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		if sparseOf(t, model).stats == nil {
			t.Fatalf("%s: not fitted from statistics", tc.method)
		}
		x, y := weak.Make(&train.X.RawMatrix().Data[0]), weak.Make(&train.Y[0])
		train = gp.Data{}
		runtime.GC()
		if x.Value() != nil || y.Value() != nil {
			t.Errorf("%s: the fitted model keeps the training set reachable (inputs %v, targets %v)", tc.method, x.Value() != nil, y.Value() != nil)
		}
		if _, err := model.Predict(test.X); err != nil {
			t.Errorf("%s: predicting without the training set: %v", tc.method, err)
		}
	}
}
