package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
)

// toyData draws y = sin(3x₁) + 0.5 cos(2x₂) + noise on [−2, 2]², seeded.
func toyData(seed uint64, n int, noise float64) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = toyF(a, b) + noise*rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

func toyF(a, b float64) float64 { return math.Sin(3*a) + 0.5*math.Cos(2*b) }

func rmse(pred []float64, y []float64) float64 {
	s := 0.0
	for i := range y {
		s += (pred[i] - y[i]) * (pred[i] - y[i])
	}
	return math.Sqrt(s / float64(len(y)))
}

func TestInducingPointMethodsFit(t *testing.T) {
	train, test := toyData(1, 150, 0.1), toyData(2, 100, 0)
	for _, tc := range []struct {
		method string
		raw    map[string]any
		opt    FitOptions
	}{
		{"gpr", nil, FitOptions{Iterations: 40}},
		{"sgpr", map[string]any{"num_inducing": int64(20)}, FitOptions{Iterations: 40, Seed: 3}},
		{"sgpr", map[string]any{"num_inducing": int64(20), "inducing_init": "greedy", "train_inducing": false}, FitOptions{Iterations: 40, Seed: 3}},
		{"svgp", map[string]any{"num_inducing": int64(20)}, FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 3}},
		{"svgp", map[string]any{"num_inducing": int64(20), "whiten": false, "inducing_init": "random"},
			FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 3, BatchSize: 50}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			model, err := Build(tc.method, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			iters := 0
			res, err := model.Fit(context.Background(), train, tc.opt, func(p Progress) { iters++ })
			if err != nil {
				t.Fatal(err)
			}
			if iters == 0 || len(res.Trace) < 2 {
				t.Fatalf("progress reported %d times, trace %d", iters, len(res.Trace))
			}
			first := res.Trace[0].Objective
			if tc.opt.BatchSize == 0 && !(res.Objective > first+1) {
				t.Errorf("objective went from %.4g to %.4g", first, res.Objective)
			}
			pred, err := model.Predict(test.X)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: objective %.4g → %.4g, test RMSE %.3g", tc.method, first, res.Objective, rmse(pred.Mean, test.Y))
			if r := rmse(pred.Mean, test.Y); r > 0.25 {
				t.Errorf("test RMSE %.3g (the noise-free signal has std ≈ 0.8)", r)
			}
			for i, v := range pred.VarY {
				if !(v > pred.VarF[i]) || pred.VarF[i] < -1e-9 {
					t.Fatalf("point %d: VarF %v VarY %v", i, pred.VarF[i], v)
				}
			}
		})
	}
}

func TestZeroIterationsEvaluatesOnly(t *testing.T) {
	train := toyData(4, 60, 0.1)
	for _, name := range []string{"gpr", "sgpr"} {
		raw := map[string]any{}
		if name == "sgpr" {
			raw = map[string]any{"num_inducing": int64(60), "inducing_init": "random"} // Z = X: the bound is exact
		}
		model, err := Build(name, raw)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Iterations != 0 {
			t.Errorf("%s: %d iterations with a budget of 0", name, res.Iterations)
		}
		exact, err := model.(ExactLMLModel).ExactLML(train)
		if err != nil {
			t.Fatal(err)
		}
		// Hyperparameters are untouched, so the objective is the exact LML
		// at the initial values (SGPR with Z = X equals it).
		if math.Abs(res.Objective-exact) > 1e-6*math.Abs(exact) {
			t.Errorf("%s: objective %.10g, exact LML at the initial values %.10g", name, res.Objective, exact)
		}
	}
}

func TestSVGPClassification(t *testing.T) {
	data := toyData(5, 200, 0)
	for i, v := range data.Y {
		data.Y[i] = 1
		if v < 0 {
			data.Y[i] = -1
		}
	}
	train := data.Subset(seq(0, 150))
	test := data.Subset(seq(150, 200))
	model, err := Build("svgp", map[string]any{"num_inducing": int64(25)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 1, Task: Classification}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Objective > res.Trace[0].Objective) {
		t.Errorf("ELBO went from %.4g to %.4g", res.Trace[0].Objective, res.Objective)
	}
	pred, err := model.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for i, p := range pred.ProbPositive {
		if (p > 0.5) != (test.Y[i] > 0) {
			wrong++
		}
	}
	if wrong > 8 {
		t.Errorf("%d of 50 test points misclassified", wrong)
	}
}

func seq(lo, hi int) []int {
	out := make([]int, hi-lo)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

func TestSVGPDeterministicAndCancellable(t *testing.T) {
	train := toyData(6, 100, 0.1)
	fit := func(ctx context.Context) (FitResult, error) {
		model, err := Build("svgp", map[string]any{"num_inducing": int64(10)})
		if err != nil {
			t.Fatal(err)
		}
		return model.Fit(ctx, train, FitOptions{Iterations: 30, BatchSize: 20, Seed: 9}, nil)
	}
	a, err := fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fit(context.Background())
	if a.Objective != b.Objective {
		t.Errorf("same seed, different objectives %.17g and %.17g", a.Objective, b.Objective)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fit(ctx); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestBadParameters(t *testing.T) {
	train := toyData(7, 30, 0.1)
	for _, tc := range []struct {
		method string
		raw    map[string]any
		opt    FitOptions
	}{
		{"sgpr", map[string]any{"noise_variance": -1.0}, FitOptions{}},
		{"sgpr", map[string]any{"inducing_init": "file"}, FitOptions{}},
		{"svgp", map[string]any{}, FitOptions{Optimizer: "lbfgs", BatchSize: 10}},
		{"gpr", map[string]any{}, FitOptions{Optimizer: "sgd"}},
		{"gpr", map[string]any{}, FitOptions{Task: Classification}},
		{"svgp", map[string]any{"likelihood": "bernoulli"}, FitOptions{}},
	} {
		model, err := Build(tc.method, tc.raw)
		if err == nil {
			_, err = model.Fit(context.Background(), train, tc.opt, nil)
		}
		if err == nil {
			t.Errorf("%s %v %+v: no error", tc.method, tc.raw, tc.opt)
		}
	}
}

// After a minibatch fit the reported objective is the ELBO on all the
// training data at the final parameters: it equals inference.SVGP evaluated
// on the full batch (an independent path: per-batch Kuu factor and
// variational expectations on the tape), whitened or not, for both
// likelihoods.
func TestSVGPMinibatchReportsFullELBO(t *testing.T) {
	reg := toyData(7, 120, 0.1)
	cls := toyData(8, 120, 0)
	for i, v := range cls.Y {
		cls.Y[i] = 1
		if v < 0 {
			cls.Y[i] = -1
		}
	}
	for _, tc := range []struct {
		name string
		data gp.Data
		task Task
		raw  map[string]any
	}{
		{"regression-whitened", reg, Regression, map[string]any{"num_inducing": int64(10)}},
		{"regression-plain", reg, Regression, map[string]any{"num_inducing": int64(10), "whiten": false}},
		{"classification", cls, Classification, map[string]any{"num_inducing": int64(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, err := Build("svgp", tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), tc.data, FitOptions{Iterations: 15, LearningRate: 0.05, Seed: 2, BatchSize: 32, Task: tc.task}, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := sparseOf(t, model)
			tp := ad.NewTape()
			b := m.set.Bind(tp)
			y := columnOf(tc.data.Y)
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, y) }
			want, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, inducingPfx), tp.Const(tc.data.X), ve, m.q(b, 0), 0, m.opts())
			if err != nil {
				t.Fatal(err)
			}
			if got, w := res.Objective, want.Scalar(); math.Abs(got-w) > 1e-9*math.Abs(w) {
				t.Errorf("reported ELBO %.12g, full-batch SVGP %.12g", got, w)
			}
			if last := res.Extra["last_minibatch_objective"]; last == res.Objective || math.IsNaN(last) {
				t.Errorf("last minibatch objective %g, full ELBO %g: want the noisy batch value kept apart", last, res.Objective)
			}
		})
	}
}

// Non-finite test inputs are a clear error from every method's Predict,
// never a panic (IFF's Φ panicked) nor silent NaN predictions.
func TestPredictRejectsNonFiniteInputs(t *testing.T) {
	train2 := toyData(3, 40, 0.1)
	train1 := gp.Data{X: mat.DenseCopyOf(train2.X.Slice(0, 40, 0, 1)), Y: train2.Y}
	for _, tc := range []struct {
		method string
		raw    map[string]any
		train  gp.Data
	}{
		{"gpr", nil, train2},
		{"sgpr", map[string]any{"num_inducing": int64(5)}, train2},
		{"svgp", map[string]any{"num_inducing": int64(5)}, train2},
		{"iff", map[string]any{"freqs_per_dim": int64(4)}, train2},
		{"avff", map[string]any{"frequencies": int64(4)}, train2},
		{"vof-hermite", nil, train1},
		{"kernel-approx", nil, train1},
	} {
		for _, bad := range []float64{math.NaN(), math.Inf(1)} {
			t.Run(fmt.Sprintf("%s/%v", tc.method, bad), func(t *testing.T) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				model, err := Build(tc.method, tc.raw)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := model.Fit(context.Background(), tc.train, FitOptions{Iterations: 1, Seed: 1}, nil); err != nil {
					t.Fatal(err)
				}
				_, d := tc.train.X.Dims()
				x := mat.NewDense(2, d, nil)
				x.Set(1, d-1, bad)
				if p, err := model.Predict(x); err == nil || !strings.Contains(err.Error(), "[1,") {
					t.Errorf("err = %v (mean %v); want an error naming input [1,%d]", err, p.Mean, d-1)
				}
			})
		}
	}
}
