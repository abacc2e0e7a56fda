package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/kernels"
)

func iffTestData(n int, seed uint64) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := -5 + 10*rng.Float64()
		x.Set(i, 0, v)
		y[i] = math.Sin(1.3*v) + 0.5*math.Cos(0.4*v) + 0.2*rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

// After training, IFF's predictions match the exact GP posterior at the
// learnt hyperparameters, and 𝔉̂ is within a small per-point gap of the
// exact log marginal likelihood.
func TestIFFMethodFitsAndPredictsLikeExactGP(t *testing.T) {
	train := iffTestData(300, 1)
	// ε = 0.5/width rather than the paper's 0.95: the grid then implies a
	// period twice the data width, so the ends of the data do not interact
	// and the comparison with the exact GP is tight everywhere.
	model, err := Build("iff", map[string]any{"freqs_per_dim": int64(60), "kernel": "se", "eps_factor": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace) < 2 || res.Trace[len(res.Trace)-1].Objective <= res.Trace[0].Objective {
		t.Fatalf("training did not improve the objective: %+v", res.Trace)
	}
	if res.Extra["num_features"] != 120 {
		t.Errorf("num_features = %v, want 120", res.Extra["num_features"])
	}
	m := sparseOf(t, model)
	xs := mat.NewDense(25, 1, nil)
	for i := 0; i < 25; i++ {
		xs.Set(i, 0, -4.8+0.4*float64(i))
	}
	pred, err := model.Predict(xs)
	if err != nil {
		t.Fatal(err)
	}
	// Exact GP posterior with the learnt hyperparameters.
	noise := m.set.Scalar("noise_variance")
	kxx := kernels.Matrix(m.kern, m.set, KernelPrefix, train.X, train.X)
	for i := 0; i < train.N(); i++ {
		kxx.Set(i, i, kxx.At(i, i)+noise)
	}
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(train.N(), kxx.RawMatrix().Data)) {
		t.Fatal("K + σ²I not positive definite")
	}
	ksx := kernels.Matrix(m.kern, m.set, KernelPrefix, xs, train.X)
	var alpha, v mat.Dense
	if err := chol.SolveTo(&alpha, mat.NewDense(train.N(), 1, train.Y)); err != nil {
		t.Fatal(err)
	}
	if err := chol.SolveTo(&v, ksx.T()); err != nil {
		t.Fatal(err)
	}
	kss := kernels.DiagValues(m.kern, m.set, KernelPrefix, xs)
	for i := 0; i < 25; i++ {
		mean := mat.Dot(ksx.RowView(i), alpha.ColView(0))
		variance := kss[i] - mat.Dot(ksx.RowView(i), v.ColView(i))
		if math.Abs(pred.Mean[i]-mean) > 0.02 || math.Abs(pred.VarF[i]-variance) > 0.01 {
			t.Errorf("x = %.2f: IFF mean %.4f var %.5f, exact GP %.4f %.5f", xs.At(i, 0), pred.Mean[i], pred.VarF[i], mean, variance)
		}
		if math.Abs(pred.VarY[i]-pred.VarF[i]-noise) > 1e-12 {
			t.Errorf("VarY − VarF = %v, want the noise variance %v", pred.VarY[i]-pred.VarF[i], noise)
		}
	}
	// 𝔉̂ against the exact log marginal likelihood: log N(y | 0, K + σ²I).
	lml := -0.5*mat.Dot(mat.NewVecDense(train.N(), train.Y), alpha.ColView(0)) - 0.5*chol.LogDet() - 0.5*float64(train.N())*math.Log(2*math.Pi)
	if gap := math.Abs(lml-res.Objective) / float64(train.N()); gap > 5e-3 {
		t.Errorf("|L − 𝔉̂|/N = %.4g at the learnt hyperparameters (L = %.4f, 𝔉̂ = %.4f)", gap, lml, res.Objective)
	}
}

// Iterations = 0 only evaluates the bound; two fits are identical.
func TestIFFMethodDeterministic(t *testing.T) {
	train := iffTestData(200, 2)
	var objs []float64
	for i := 0; i < 2; i++ {
		model, err := Build("iff", map[string]any{"freqs_per_dim": int64(10)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, res.Objective)
	}
	if objs[0] != objs[1] {
		t.Errorf("two identical fits gave %v and %v", objs[0], objs[1])
	}
}

func TestIFFMethodBadInput(t *testing.T) {
	train := iffTestData(50, 3)
	for _, tc := range []struct {
		name string
		raw  map[string]any
		data gp.Data
		want string
	}{
		{"unsupported kernel", map[string]any{"kernel": "periodic"}, train, "not one of: se, matern12"},
		{"eps length", map[string]any{"eps": []any{0.1, 0.2}}, train, "eps: 2 values for 1 input"},
		{"bad freqs", map[string]any{"freqs_per_dim": int64(0)}, train, `parameter "freqs_per_dim": 0 is out of range: want ≥ 1`},
		{"mask too small", map[string]any{"freqs_per_dim": int64(1)}, gp.Data{X: mat.NewDense(3, 5, []float64{
			0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 3, 4, 5, 6}), Y: []float64{1, 2, 3}}, "mask keeps no frequency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, err := Build("iff", tc.raw)
			if err == nil {
				_, err = model.Fit(context.Background(), tc.data, FitOptions{Iterations: 1}, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
