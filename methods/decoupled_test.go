package methods

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/inference"
	"sgplab/gp/param"
)

// decoupledCases are small configurations of every decoupled method.
var decoupledCases = []struct {
	name, method string
	raw          map[string]any
}{
	{"odvgp", "odvgp", map[string]any{"num_inducing": int64(8), "num_orthogonal": int64(10)}},
	{"odvgp-whitened", "odvgp", map[string]any{"num_inducing": int64(8), "num_orthogonal": int64(10), "whiten": true}},
	{"solvegp", "solvegp", map[string]any{"num_inducing": int64(8), "num_orthogonal": int64(8)}},
	{"solvegp-whitened", "solvegp", map[string]any{"num_inducing": int64(8), "num_orthogonal": int64(8), "whiten": true}},
	{"odvff-additive", "odvff", map[string]any{"frequencies": int64(6), "num_orthogonal": int64(10), "interval_margin": 0.5}},
	{"odvff-kronecker", "odvff", map[string]any{"frequencies": int64(3), "num_orthogonal": int64(10), "structure": "kronecker", "interval_margin": 0.5}},
	{"odvff-dense", "odvff", map[string]any{"frequencies": int64(4), "num_orthogonal": int64(10), "whiten": false, "interval_margin": 0.5}},
	{"spherical-activation-points", "spherical-orthogonal", map[string]any{"num_inducing": int64(6), "num_orthogonal": int64(5), "activation_levels": int64(4)}},
	{"spherical-activation-points-whitened", "spherical-orthogonal", map[string]any{"num_inducing": int64(6), "num_orthogonal": int64(5), "activation_levels": int64(4), "whiten": true, "activation": "relu"}},
	{"spherical-points-activation", "spherical-orthogonal", map[string]any{"base": "points", "orthogonal": "activation", "num_inducing": int64(5), "num_orthogonal": int64(6), "activation_levels": int64(4)}},
	{"spherical-harmonics-points", "spherical-orthogonal", map[string]any{"base": "harmonics", "max_level": int64(2), "num_orthogonal": int64(5), "kernel": "sphere-matern52"}},
	{"spherical-points-harmonics", "spherical-orthogonal", map[string]any{"base": "points", "orthogonal": "harmonics", "max_level": int64(2), "num_inducing": int64(5), "kernel": "sphere-matern52"}},
	{"spherical-points-points", "spherical-orthogonal", map[string]any{"base": "points", "num_inducing": int64(5), "num_orthogonal": int64(5), "kernel": "chordal-matern52"}},
	{"spherical-activation-activation", "spherical-orthogonal", map[string]any{"orthogonal": "activation", "num_inducing": int64(5), "num_orthogonal": int64(4), "activation_levels": int64(4)}},
	{"spherical-activation-harmonics", "spherical-orthogonal", map[string]any{"orthogonal": "harmonics", "num_inducing": int64(5), "max_level": int64(1), "activation_levels": int64(4), "kernel": "sphere-matern52"}},
	{"spherical-harmonics-activation", "spherical-orthogonal", map[string]any{"base": "harmonics", "orthogonal": "activation", "max_level": int64(2), "num_orthogonal": int64(4), "activation_levels": int64(5), "kernel": "sphere-matern52"}},
	{"odvff-hybrid-1d", "odvff", map[string]any{"frequencies": int64(4), "num_orthogonal": int64(6), "beta": "hybrid", "periodic_inducing": int64(4), "interval_margin": 0.5}},
}

// firstColumn keeps the first input dimension (for the 1-D methods).
func firstColumn(d gp.Data) gp.Data {
	n, _ := d.X.Dims()
	return gp.Data{X: mat.DenseCopyOf(d.X.Slice(0, n, 0, 1)), Y: d.Y}
}

// buildDecoupled declares a model's parameters on data without training.
func buildDecoupled(t testing.TB, method string, raw map[string]any, train gp.Data, task Task) *sparseModel {
	t.Helper()
	return buildSparse(t, method, raw, train, task)
}

// perturbQ moves q away from its initial value so that every gradient
// block is generic.
func perturbQ(m *sparseModel) {
	var names []string
	for _, g := range m.blocks {
		names = append(names, g.QMu(), g.QSqrt())
	}
	for i, name := range names {
		if !m.set.Has(name) {
			continue
		}
		v := mat.DenseCopyOf(m.set.Value(name))
		v.Apply(func(r, c int, x float64) float64 {
			return x + 0.1*math.Sin(float64(3*r+5*c+i))
		}, v)
		if err := m.set.SetValue(name, v); err != nil {
			panic(err)
		}
	}
}

// TestDecoupledMethodGradients checks the gradient of every method's ELBO
// with respect to every parameter block (kernel, noise, both feature sets,
// q(u), q(v')) against central differences.
func TestDecoupledMethodGradients(t *testing.T) {
	train := toyData(21, 30, 0.1)
	for _, tc := range decoupledCases {
		for _, task := range []Task{Regression, Classification} {
			t.Run(tc.name+"/"+string(task), func(t *testing.T) {
				data := train
				if strings.HasSuffix(tc.name, "-1d") {
					data = firstColumn(train)
				}
				if task == Classification {
					data = gp.Data{X: data.X, Y: make([]float64, len(train.Y))}
					for i, y := range train.Y {
						data.Y[i] = math.Copysign(1, y)
					}
				}
				m := buildDecoupled(t, tc.method, tc.raw, data, task)
				perturbQ(m)
				obj := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
					ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, columnOf(data.Y)) }
					out, _, err := inference.BlockELBO(m.kern.Bind(b, KernelPrefix), m.inferenceBlocks(b), tape.Const(data.X), ve, 0, m.opts())
					return out, err
				}
				checkSetGradient(t, m.set, obj, 2e-6)
			})
		}
	}
}

// checkSetGradient compares the tape gradient with central differences
// over every trainable parameter of s, naming the worst block.
func checkSetGradient(t *testing.T, s *param.Set, f func(*ad.Tape, *param.Bound) (*ad.Node, error), tol float64) {
	t.Helper()
	x0 := s.Vector()
	defer s.SetVector(x0)
	eval := func(x []float64) float64 {
		s.SetVector(x)
		v, _ := valueAndGradient(t, s, f)
		return v
	}
	_, got := valueAndGradient(t, s, f)
	want := fd.Gradient(nil, eval, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	scale := math.Max(1, floats.Norm(want, math.Inf(1)))
	bad := 0
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*scale || math.IsNaN(got[i]) {
			if bad < 5 {
				t.Errorf("gradient[%d] (%s) = %.10g, finite differences %.10g", i, entryName(s, i), got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d entries differ", bad, len(got))
	}
}

// entryName names the parameter owning entry i of s.Vector().
func entryName(s *param.Set, i int) string {
	for _, n := range s.Names() {
		if !s.Trainable(n) {
			continue
		}
		r, c := s.Value(n).Dims()
		if i < r*c {
			return n
		}
		i -= r * c
	}
	return "?"
}

func TestDecoupledMethodsFit(t *testing.T) {
	train, test := toyData(1, 150, 0.1), toyData(2, 100, 0)
	for _, tc := range []struct {
		method string
		raw    map[string]any
		opt    FitOptions
	}{
		{"odvgp", map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(20)}, FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 3}},
		{"odvgp", map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(20)}, FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 3, BatchSize: 50}},
		{"solvegp", map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(10)}, FitOptions{Iterations: 60, Seed: 3}},
		// The ODVFF recipe: natural gradients on q(β) (and q(v') for
		// SOLVE-GP), Adam on the rest, minibatches.
		{"odvgp", map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(20), "natgrad_step": 0.5}, FitOptions{Iterations: 200, LearningRate: 0.05, Seed: 3, BatchSize: 50}},
		{"solvegp", map[string]any{"num_inducing": int64(10), "num_orthogonal": int64(10), "natgrad_step": 0.5}, FitOptions{Iterations: 200, LearningRate: 0.05, Seed: 3, Optimizer: "adam"}},
		{"odvff", map[string]any{"frequencies": int64(8), "num_orthogonal": int64(20), "interval_margin": 1.0, "lengthscales": []any{0.5}, "natgrad_step": 0.5},
			FitOptions{Iterations: 200, LearningRate: 0.05, Seed: 3, BatchSize: 50}},
		{"odvff", map[string]any{"frequencies": int64(8), "num_orthogonal": int64(20), "interval_margin": 1.0, "lengthscales": []any{0.5}},
			FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 3}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			model, err := Build(tc.method, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Fit(context.Background(), train, tc.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			first := res.Trace[0].Objective
			if tc.opt.BatchSize == 0 && !(res.Objective > first+1) {
				t.Errorf("objective went from %.4g to %.4g", first, res.Objective)
			}
			pred, err := model.Predict(test.X)
			if err != nil {
				t.Fatal(err)
			}
			r := rmse(pred.Mean, test.Y)
			t.Logf("%s: objective %.4g → %.4g (%d iterations), test RMSE %.3g", tc.method, first, res.Objective, res.Iterations, r)
			if r > 0.25 {
				t.Errorf("test RMSE %.3g (the noise-free signal has std ≈ 0.8)", r)
			}
			terms, err := sparseOf(t, model).PredictTerms(test.X)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range pred.VarF {
				if !(v > -1e-9) || !(pred.VarY[i] > v) {
					t.Fatalf("point %d: VarF %v VarY %v", i, v, pred.VarY[i])
				}
				// eq. (12): [k − Q_ff] + Q C_u Q + S S⁻¹ C_v S⁻¹ S − S S⁻¹ S.
				sum := terms.Kff[i] - terms.Prior[0][i] + terms.Cov[0][i]
				if terms.Prior[1] != nil {
					sum += terms.Cov[1][i] - terms.Prior[1][i]
				}
				if math.Abs(sum-v) > 1e-12 {
					t.Fatalf("point %d: terms sum to %v, variance %v", i, sum, v)
				}
			}
		})
	}
}

func TestDecoupledMethodsBadInput(t *testing.T) {
	train := toyData(4, 30, 0.1)
	for _, c := range []struct {
		method string
		raw    map[string]any
		want   string
	}{
		{"odvgp", map[string]any{"num_inducing": int64(20), "num_orthogonal": int64(20)}, "exceed the 30 training inputs"},
		{"odvgp", map[string]any{"num_orthogonal": int64(0)}, `parameter "num_orthogonal": 0 is out of range: want ≥ 1`},
		{"odvff", map[string]any{"interval_lower": []any{-1.0}, "interval_upper": []any{1.0}}, "training inputs"},
		{"solvegp", map[string]any{"likelihood": "poisson"}, "likelihood"},
	} {
		model, err := Build(c.method, c.raw)
		if err == nil {
			_, err = model.Fit(context.Background(), train, FitOptions{Iterations: 1}, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want it to mention %q", c.method, c.raw, err, c.want)
		}
	}
}

func TestDecoupledClassification(t *testing.T) {
	data := toyData(5, 200, 0)
	for i, v := range data.Y {
		data.Y[i] = math.Copysign(1, v)
	}
	train, test := data.Subset(seq(0, 150)), data.Subset(seq(150, 200))
	for _, method := range []string{"odvgp", "solvegp"} {
		model, err := Build(method, map[string]any{"num_inducing": int64(12), "num_orthogonal": int64(12)})
		if err != nil {
			t.Fatal(err)
		}
		opt := FitOptions{Iterations: 300, LearningRate: 0.05, Seed: 1, Task: Classification, Optimizer: "adam"}
		res, err := model.Fit(context.Background(), train, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !(res.Objective > res.Trace[0].Objective) {
			t.Errorf("%s: ELBO went from %.4g to %.4g", method, res.Trace[0].Objective, res.Objective)
		}
		pred, err := model.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		wrong := misclassified(pred, test.Y)
		t.Logf("%s: ELBO %.4g → %.4g, %d of 50 misclassified", method, res.Trace[0].Objective, res.Objective, wrong)
		if wrong > 8 {
			t.Errorf("%s: %d of 50 test points misclassified", method, wrong)
		}
	}
}

// TestSphericalHarmonicsPair: A.2.2 (harmonics against the same
// harmonics) has S_vv = 0 and collapses to SVGP; it is refused with that
// reason.
func TestSphericalHarmonicsPair(t *testing.T) {
	_, err := Build("spherical-orthogonal", map[string]any{"base": "harmonics", "orthogonal": "harmonics"})
	if err == nil || !strings.Contains(err.Error(), "collapses") {
		t.Errorf("harmonics × harmonics: err = %v", err)
	}
}

// TestSphericalOrthogonalBeatsActivated: the paper's claim (Tiao et al.
// 2023, §3) that orthogonal inducing points compensate the truncated
// activation basis: with the same M = 16 units (L = 6) and recipe,
// adding K = 8 orthogonal points raises the ELBO and lowers the test RMSE
// of activated SVGP.
func TestSphericalOrthogonalBeatsActivated(t *testing.T) {
	train, test := toyData(1, 150, 0.1), toyData(2, 100, 0)
	fit := func(method string, raw map[string]any) (float64, float64) {
		model, err := Build(method, raw)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 300, Seed: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := model.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		return res.Objective, rmse(pred.Mean, test.Y)
	}
	units := map[string]any{"num_inducing": int64(16), "activation_levels": int64(6)}
	ea, ra := fit("activated-svgp", units)
	units["num_orthogonal"] = int64(8)
	eo, ro := fit("spherical-orthogonal", units)
	t.Logf("activated-svgp ELBO %.4g RMSE %.3g; spherical-orthogonal ELBO %.4g RMSE %.3g", ea, ra, eo, ro)
	if !(eo > ea) || !(ro < ra) {
		t.Errorf("orthogonal points did not help: ELBO %.4g → %.4g, RMSE %.3g → %.3g", ea, eo, ra, ro)
	}
}
