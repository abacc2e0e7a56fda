package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
)

func vofTestData(n int, seed uint64) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		v := 1.2 * rng.NormFloat64()
		x.Set(i, 0, v)
		y[i] = math.Sin(2*v) + 0.1*rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

func fitVOF(t *testing.T, name string, raw map[string]any, train gp.Data, opt FitOptions) (Model, FitResult) {
	t.Helper()
	m, err := Build(name, raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Fit(context.Background(), train, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

// TestVOFHermiteReachesOptimalBounds: joint L-BFGS over q(u) and the
// hyperparameters ends at the closed-form optimum over q for the final
// hyperparameters (dense: Titsias' bound; diagonal: the mean-field bound),
// below the exact log marginal likelihood, and predicts like the exact GP.
func TestVOFHermiteReachesOptimalBounds(t *testing.T) {
	train := vofTestData(100, 1)
	test := vofTestData(50, 2)
	var dense float64
	for _, cov := range []string{"dense", "diagonal"} {
		m, res := fitVOF(t, "vof-hermite", map[string]any{"num_features": int64(15), "covariance": cov, "eval_samples": int64(20)}, train,
			FitOptions{Iterations: 3000, GradTol: 1e-7})
		opt := res.Extra["elbo_optimal_"+cov]
		if math.Abs(res.Objective-opt) > 1e-3*math.Max(1, math.Abs(opt)) {
			t.Errorf("%s: final ELBO %.6f, closed-form optimum over q %.6f", cov, res.Objective, opt)
		}
		if res.Extra["elbo_optimal_diagonal"] > res.Extra["elbo_optimal_dense"]+1e-9 {
			t.Errorf("%s: mean-field optimum above the dense one", cov)
		}
		lml, err := m.(ExactLMLModel).ExactLML(train)
		if err != nil {
			t.Fatal(err)
		}
		if res.Objective > lml+1e-6 {
			t.Errorf("%s: ELBO %.6f above the exact log marginal likelihood %.6f", cov, res.Objective, lml)
		}
		if cov == "dense" {
			dense = res.Objective
		} else if res.Objective > dense+1e-3 {
			t.Errorf("diagonal ELBO %.6f above dense %.6f", res.Objective, dense)
		}
		// Monte-Carlo ELBO at the fitted parameters agrees with the closed
		// form (Hermite integrands are spectrally resolved by T = 50).
		if d := math.Abs(res.Extra["elbo_mc"] - res.Extra["elbo_deterministic"]); d > 1e-6*math.Abs(res.Objective) {
			t.Errorf("%s: MC ELBO %.8f, closed form %.8f", cov, res.Extra["elbo_mc"], res.Extra["elbo_deterministic"])
		}
		pred, err := m.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		ex := m.(*vofModel)
		tp := ad.NewTape()
		b := ex.set.Bind(tp)
		post, err := inference.ExactPosterior(ex.kern.Bind(b, KernelPrefix), tp.Const(train.X), train.Y, b.Get("noise_variance"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exMean, exVar, err := post.Predict(test.X, func(t *ad.Tape) (kernels.Bound, features.Bound) {
			b := ex.set.Bind(t)
			return ex.kern.Bind(b, KernelPrefix), features.BoundPoints{Z: t.Const(train.X)}
		})
		if err != nil {
			t.Fatal(err)
		}
		var dm, dv float64
		for i, mu := range pred.Mean {
			dm = math.Max(dm, math.Abs(mu-exMean[i]))
			dv = math.Max(dv, math.Abs(pred.VarF[i]-exVar[i]))
			if pred.VarF[i] < 0 || pred.VarY[i] <= pred.VarF[i] {
				t.Fatalf("%s: bad variances %v %v", cov, pred.VarF[i], pred.VarY[i])
			}
		}
		t.Logf("%s: ELBO %.4f (optimum %.4f), exact LML %.4f; max |Δmean| %.2g, max |Δvar| %.2g vs exact GP",
			cov, res.Objective, opt, lml, dm, dv)
		if dm > 0.02 || dv > 0.01 {
			t.Errorf("%s: predictions differ from the exact GP by %.3g (mean), %.3g (variance)", cov, dm, dv)
		}
	}
}

// TestVOFTrigTrainsAndIsDeterministic trains the Monte-Carlo objective with
// Adam: the same seed gives the same result, training improves the ELBO, and
// the averaged Monte-Carlo ELBO matches the quadrature one.
func TestVOFTrigTrainsAndIsDeterministic(t *testing.T) {
	train := vofTestData(80, 4)
	raw := map[string]any{"num_features": int64(15), "kernel": "matern52", "eval_samples": int64(100)}
	opt := FitOptions{Iterations: 300, LearningRate: 0.02, Seed: 7}
	_, r0 := fitVOF(t, "vof-trig", raw, train, FitOptions{Iterations: 0, Seed: 7})
	m1, r1 := fitVOF(t, "vof-trig", raw, train, opt)
	_, r2 := fitVOF(t, "vof-trig", raw, train, opt)
	if r1.Objective != r2.Objective || r1.Extra["elbo_deterministic"] != r2.Extra["elbo_deterministic"] {
		t.Errorf("same seed: %v vs %v", r1.Objective, r2.Objective)
	}
	if !(r1.Extra["elbo_deterministic"] > r0.Extra["elbo_deterministic"]+10) {
		t.Errorf("training did not improve the ELBO: %v → %v", r0.Extra["elbo_deterministic"], r1.Extra["elbo_deterministic"])
	}
	if d := math.Abs(r1.Extra["elbo_mc"] - r1.Extra["elbo_deterministic"]); d > 4*r1.Extra["elbo_mc_stderr"]+1e-6 {
		t.Errorf("MC ELBO %.5f ± %.3g, quadrature ELBO %.5f", r1.Extra["elbo_mc"], r1.Extra["elbo_mc_stderr"], r1.Extra["elbo_deterministic"])
	}
	if r1.Extra["elbo_deterministic"] > r1.Extra["elbo_optimal_dense"]+1e-6 {
		t.Errorf("ELBO %.5f above its optimum over q %.5f", r1.Extra["elbo_deterministic"], r1.Extra["elbo_optimal_dense"])
	}
	pred, err := m1.Predict(mat.NewDense(3, 1, []float64{-1, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range pred.VarF {
		if v < 0 || math.IsNaN(pred.Mean[i]) {
			t.Errorf("prediction %d: mean %v variance %v", i, pred.Mean[i], v)
		}
	}
}

// TestVOFTrigEvalSamplesAliasing: with T below the integrand's frequency
// (2J > T here) the shifted grid aliases and one evaluation's spread is far
// larger than with eval_mc_samples above it, while both averages stay
// unbiased estimates of the quadrature ELBO.
func TestVOFTrigEvalSamplesAliasing(t *testing.T) {
	train := vofTestData(120, 5)
	base := map[string]any{"num_features": int64(41), "kernel": "se", "train_hyper": false, "fix_a": true,
		"q_update": "optimal", "estimator": "quadrature", "mc_samples": int64(12), "eval_samples": int64(400)}
	sd := map[int64]float64{}
	for _, tEval := range []int64{0, 80} {
		raw := map[string]any{"eval_mc_samples": tEval}
		for k, v := range base {
			raw[k] = v
		}
		_, r := fitVOF(t, "vof-trig", raw, train, FitOptions{Seed: 3})
		sd[tEval] = r.Extra["elbo_mc_sd"]
		if d := math.Abs(r.Extra["elbo_mc"] - r.Extra["elbo_deterministic"]); d > 5*r.Extra["elbo_mc_stderr"]+1e-6 {
			t.Errorf("T = %d: MC ELBO %.4f ± %.3g, quadrature %.4f", tEval, r.Extra["elbo_mc"], r.Extra["elbo_mc_stderr"], r.Extra["elbo_deterministic"])
		}
	}
	t.Logf("sd of one evaluation: T = 12 %.4g, T = 80 %.4g", sd[0], sd[80])
	if !(sd[80] < sd[0]/10) {
		t.Errorf("eval_mc_samples = 80 did not cut the spread: sd %.4g (T = 12) vs %.4g", sd[0], sd[80])
	}
}

func TestVOFMethodBadInput(t *testing.T) {
	train := vofTestData(20, 1)
	x2 := mat.NewDense(20, 2, nil)
	cases := []struct {
		name   string
		method string
		raw    map[string]any
		data   gp.Data
		opt    FitOptions
		want   string
	}{
		{"even M", "vof-trig", map[string]any{"num_features": int64(10)}, train, FitOptions{}, "odd"},
		{"lbfgs with mc", "vof-trig", nil, train, FitOptions{Optimizer: "lbfgs", Iterations: 1}, "stochastic"},
		{"2-D", "vof-hermite", nil, gp.Data{X: x2, Y: train.Y}, FitOptions{}, "1-D"},
		{"negative σx", "vof-hermite", map[string]any{"sigma_x": -1.0}, train, FitOptions{}, "sigma_x"},
		{"kernel", "vof-trig", map[string]any{"kernel": "periodic"}, train, FitOptions{}, "not one of"},
		{"classification", "vof-hermite", nil, train, FitOptions{Task: Classification}, "regression only"},
		{"q_update", "vof-trig", map[string]any{"q_update": "natural"}, train, FitOptions{}, "q_update"},
		{"negative eval T", "vof-trig", map[string]any{"eval_mc_samples": int64(-1)}, train, FitOptions{}, "eval_mc_samples"},
		{"removed alias", "vof-trig", map[string]any{"lengthscale": 0.5}, train, FitOptions{}, "lengthscale"},
	}
	for _, c := range cases {
		m, err := Build(c.method, c.raw)
		if err == nil {
			_, err = m.Fit(context.Background(), c.data, c.opt, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
	m, _ := Build("vof-hermite", nil)
	if _, err := m.Predict(train.X); err == nil {
		t.Error("Predict before Fit succeeded")
	}
}

// TestVOFOptimalQ: with q_update = optimal and nothing else trainable, Fit
// runs no optimiser and q(u) is the closed-form optimum (its ELBO equals the
// optimal bound of inference.OrthoOptimal); an optimiser trained on the same
// deterministic ELBO from the prior q(u) reaches the same value.
func TestVOFOptimalQ(t *testing.T) {
	train := vofTestData(60, 5)
	cases := []struct {
		method string
		raw    map[string]any
	}{
		{"vof-trig", map[string]any{"kernel": "matern52", "a": 6.0, "fix_a": true}},
		{"vof-hermite", map[string]any{"fix_sigma_x": true}},
	}
	for _, c := range cases {
		for _, cov := range []string{"dense", "diagonal"} {
			raw := map[string]any{"num_features": int64(11), "covariance": cov, "train_hyper": false, "q_update": "optimal",
				"eval_samples": int64(50), "lengthscales": []any{0.8}, "noise_variance": 0.05}
			for k, v := range c.raw {
				raw[k] = v
			}
			name := c.method + "/" + cov
			_, res := fitVOF(t, c.method, raw, train, FitOptions{Iterations: 100, Optimizer: "adam", Seed: 3})
			want := res.Extra["elbo_optimal_"+cov]
			if res.Iterations != 0 || res.Trace != nil {
				t.Errorf("%s: %d iterations with nothing to train", name, res.Iterations)
			}
			if got := res.Extra["elbo_deterministic"]; math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("%s: ELBO at q(u) %.10g, closed-form optimum %.10g", name, got, want)
			}
			// The reported objective is the training estimator's: the MC
			// average for TrigVOF, the closed form for Hermite VOF.
			wantObj := res.Extra["elbo_mc"]
			if c.method == "vof-hermite" {
				wantObj = res.Extra["elbo_deterministic"]
			}
			if res.Objective != wantObj {
				t.Errorf("%s: objective %v, want %v", name, res.Objective, wantObj)
			}
			if se, sd := res.Extra["elbo_mc_stderr"], res.Extra["elbo_mc_sd"]; math.Abs(se-sd/math.Sqrt(50)) > 1e-12*(1+sd) {
				t.Errorf("%s: standard error %v, sd %v over 50 evaluations", name, se, sd)
			}
			// Independent route: L-BFGS on q(u) from the prior.
			raw["q_update"], raw["estimator"] = "optimizer", "quadrature"
			if c.method == "vof-hermite" {
				raw["estimator"] = "exact"
			}
			_, ref := fitVOF(t, c.method, raw, train, FitOptions{Iterations: 3000, Optimizer: "lbfgs", GradTol: 1e-8})
			if got := ref.Extra["elbo_deterministic"]; math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: L-BFGS over q(u) reaches %.8g, closed-form optimum %.8g", name, got, want)
			}
		}
	}
}

// TestVOFOptimalQGradient: with q(u) held at its optimum, the gradient of the
// ELBO with respect to a (and the lengthscale) equals the finite-difference
// derivative of the optimal bound itself (envelope theorem), for dense and
// diagonal S.
func TestVOFOptimalQGradient(t *testing.T) {
	train := vofTestData(40, 6)
	for _, cov := range []string{"dense", "diagonal"} {
		md, err := Build("vof-trig", map[string]any{"kernel": "matern32", "num_features": int64(9), "covariance": cov,
			"q_update": "optimal", "estimator": "quadrature", "a": 4.0, "lengthscales": []any{0.9}, "noise_variance": 0.1})
		if err != nil {
			t.Fatal(err)
		}
		m := md.(*vofModel)
		if err := m.build(train); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{vofFeaturePrefix + "a", KernelPrefix + "lengthscales"} {
			x0 := m.set.Scalar(name)
			bound := func(x float64) float64 {
				if err := m.set.SetValue(name, mat.NewDense(1, 1, []float64{x})); err != nil {
					t.Fatal(err)
				}
				opt, err := m.setOptimalQ(train)
				if err != nil {
					t.Fatal(err)
				}
				if cov == "dense" {
					return opt.Full
				}
				return opt.MeanField
			}
			want := fd.Derivative(bound, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			bound(x0)
			tp := ad.NewTape()
			b := m.set.Bind(tp)
			q := m.constQ(tp)
			out, err := m.elbo(tp, b, train, nil, 0, nil, &q)
			if err != nil {
				t.Fatal(err)
			}
			tp.Backward(out)
			got := b.Get(name).Grad().At(0, 0)
			if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: d bound / d %s = %.8g by the tape, %.8g by finite differences", cov, name, got, want)
			}
		}
	}
}

// TestVOFOptimalQTrainsA: Adam on a with q(u) at its optimum ends with q(u)
// optimal for the final a and a better bound than at the initial a.
func TestVOFOptimalQTrainsA(t *testing.T) {
	train := vofTestData(60, 9)
	raw := map[string]any{"kernel": "matern52", "num_features": int64(11), "a": 1.5, "q_update": "optimal",
		"train_hyper": false, "lengthscales": []any{0.5}, "noise_variance": 0.01, "eval_samples": int64(10)}
	_, r0 := fitVOF(t, "vof-trig", raw, train, FitOptions{Iterations: 0, Optimizer: "adam", Seed: 2})
	_, r1 := fitVOF(t, "vof-trig", raw, train, FitOptions{Iterations: 200, Optimizer: "adam", LearningRate: 0.02, Seed: 2})
	if r1.Extra["a"] == 1.5 {
		t.Fatal("a did not move")
	}
	if !(r1.Extra["elbo_optimal_dense"] > r0.Extra["elbo_optimal_dense"]+1) {
		t.Errorf("optimal bound %v at a = %v, %v at the initial a", r1.Extra["elbo_optimal_dense"], r1.Extra["a"], r0.Extra["elbo_optimal_dense"])
	}
	if d := math.Abs(r1.Extra["elbo_deterministic"] - r1.Extra["elbo_optimal_dense"]); d > 1e-8*math.Abs(r1.Extra["elbo_optimal_dense"]) {
		t.Errorf("q(u) is not optimal for the final a: ELBO %v, optimum %v", r1.Extra["elbo_deterministic"], r1.Extra["elbo_optimal_dense"])
	}
}
