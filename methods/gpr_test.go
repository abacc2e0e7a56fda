package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// naiveMaternPeriodic is v(1 + √3 r/ℓ) exp(−√3 r/ℓ) + v exp(−½ sin²(π r/p)/ℓ²),
// r = |x − z|, written out independently of gp/kernels (GPflow's periodic
// form, the ODVFF paper's App. C prior).
func naiveMaternPeriodic(x, z, v, l, p float64) float64 {
	r := math.Abs(x - z)
	s := math.Sqrt(3) * r / l
	q := math.Sin(math.Pi*r/p) / l
	return v*(1+s)*math.Exp(-s) + v*math.Exp(-0.5*q*q)
}

func maternPeriodicGPR(t *testing.T, params map[string]any, train gp.Data, iters int) *gprModel {
	t.Helper()
	return fitExactGPR(t, "gpr", params, train, iters)
}

// At fixed hyperparameters the exact log marginal likelihood of gpr with
// kernel sum(matern32,periodic) and an initial period equals the dense
// computation with the kernel written out, including repeated inputs with
// a small noise (ill-conditioned K + σ²I).
func TestGPRMaternPeriodicMatchesNaive(t *testing.T) {
	for _, c := range []struct {
		name  string
		dup   int
		noise float64
		tol   float64
	}{
		{"well-conditioned", 0, 0.05, 1e-10},
		{"repeated inputs, noise 1e-4", 8, 1e-4, 1e-7},
	} {
		t.Run(c.name, func(t *testing.T) {
			train := additiveData(40, 1, c.dup, 11)
			const v, l, p = 1.3, 0.3, 0.7
			m := maternPeriodicGPR(t, map[string]any{"kernel": "sum(matern32,periodic)", "variance": v, "lengthscales": []any{l},
				"period": p, "noise_variance": c.noise}, train, 0)
			if got := m.set.Scalar(KernelPrefix + "k1.period"); math.Abs(got-p) > 1e-12 {
				t.Fatalf("initial period %v, want %v", got, p)
			}
			n := train.N()
			k := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					kij := naiveMaternPeriodic(train.X.At(i, 0), train.X.At(j, 0), v, l, p)
					if i == j {
						kij += c.noise
					}
					k.SetSym(i, j, kij)
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(k) {
				t.Fatal("naive K + σ²I is not positive definite")
			}
			alpha := mat.NewVecDense(n, nil)
			if err := ch.SolveVecTo(alpha, mat.NewVecDense(n, train.Y)); err != nil {
				t.Fatal(err)
			}
			want := -0.5*mat.Dot(mat.NewVecDense(n, train.Y), alpha) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
			got, err := m.ExactLML(train)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > c.tol*math.Max(1, math.Abs(want)) {
				t.Errorf("log marginal likelihood %.12g, naive %.12g", got, want)
			}
		})
	}
}

// The gradient of gpr's objective with kernel sum(matern32,periodic) with
// respect to every unconstrained parameter (both variances and lengthscales,
// the period, the noise) matches central finite differences.
func TestGPRMaternPeriodicGradientFiniteDifferences(t *testing.T) {
	train := additiveData(30, 1, 2, 12)
	m := maternPeriodicGPR(t, map[string]any{"kernel": "sum(matern32,periodic)", "variance": 0.8, "lengthscales": []any{0.4},
		"period": 0.9, "noise_variance": 0.05}, train, 0)
	// 2 variances + 2 lengthscales + period + noise
	checkExactGPRGradient(t, m, train, 6, 1e-6)
}

// Training the period of a periodic kernel recovers the generating period
// when it starts near it, and a bad period or kernel name is a clear error.
func TestGPRPeriodParameter(t *testing.T) {
	train := additiveData(60, 1, 0, 13)
	rng := rand.New(rand.NewPCG(13, 8))
	for i := range train.Y {
		train.Y[i] = math.Sin(2*math.Pi*train.X.At(i, 0)/0.5) + 0.1*rng.NormFloat64()
	}
	m := maternPeriodicGPR(t, map[string]any{"kernel": "periodic", "variance": 1.0, "lengthscales": []any{0.5},
		"period": 0.53, "noise_variance": 0.05}, train, 200)
	if got := m.set.Scalar(KernelPrefix + "period"); math.Abs(got-0.5) > 0.005 {
		t.Errorf("trained period %v, want 0.5 ± 0.005", got)
	}
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"kernel": "sum(matern32,periodic)", "period": -0.5}, `parameter "period": -0.5 is out of range: want > 0`},
		{map[string]any{"kernel": "sum(matern32,cosine)"}, "sum(matern32,periodic)"},
	} {
		mm, err := Build("gpr", c.params)
		if err == nil {
			_, err = mm.Fit(context.Background(), train, FitOptions{Iterations: 1}, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.params, err, c.want)
		}
	}
}
