package methods

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
)

// naiveAdditiveM32 is k(x, z) = Σ_d v_d (1 + √3 r_d) exp(−√3 r_d),
// r_d = |x_d − z_d| / ℓ_d, written out here independently of gp/kernels.
func naiveAdditiveM32(x, z []float64, v, ls []float64) float64 {
	var k float64
	for d := range x {
		r := math.Sqrt(3) * math.Abs(x[d]-z[d]) / ls[d]
		k += v[d] * (1 + r) * math.Exp(-r)
	}
	return k
}

// naiveAdditiveGP returns log N(y | 0, K + σ²I) and the exact posterior
// mean and latent variance at xs, by a dense Cholesky of the explicitly
// summed kernel.
func naiveAdditiveGP(x *mat.Dense, y []float64, xs *mat.Dense, v, ls []float64, noise float64) (lml float64, mean, varf []float64) {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			kij := naiveAdditiveM32(x.RawRowView(i), x.RawRowView(j), v, ls)
			if i == j {
				kij += noise
			}
			k.SetSym(i, j, kij)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		panic("K + σ²I not positive definite")
	}
	yv := mat.NewVecDense(n, y)
	alpha := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(alpha, yv); err != nil {
		panic(err)
	}
	lml = -0.5*mat.Dot(yv, alpha) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	ns, _ := xs.Dims()
	for s := 0; s < ns; s++ {
		ks := mat.NewVecDense(n, nil)
		for i := 0; i < n; i++ {
			ks.SetVec(i, naiveAdditiveM32(x.RawRowView(i), xs.RawRowView(s), v, ls))
		}
		w := mat.NewVecDense(n, nil)
		if err := ch.SolveVecTo(w, ks); err != nil {
			panic(err)
		}
		mean = append(mean, mat.Dot(ks, alpha))
		varf = append(varf, naiveAdditiveM32(xs.RawRowView(s), xs.RawRowView(s), v, ls)-mat.Dot(ks, w))
	}
	return lml, mean, varf
}

// additiveData draws y = Σ_d sin(a_d x_d) + noise on n points in dim
// dimensions; dup > 0 repeats the first dup rows (an ill-conditioned K).
func additiveData(n, dim, dup int, seed uint64) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, dim, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		src := i
		if i >= n-dup {
			src = i - (n - dup) // a copy of an earlier row
		}
		for d := 0; d < dim; d++ {
			if src != i {
				x.Set(i, d, x.At(src, d))
			} else {
				x.Set(i, d, -2+4*rng.Float64())
			}
			y[i] += math.Sin(float64(d+1) * x.At(i, d))
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

func fitAGPR(t *testing.T, params map[string]any, train gp.Data, iters int) *gprModel {
	t.Helper()
	if _, set := params["kernel"]; !set {
		// The naive references (naiveAdditiveGP, gpr's matern32) are
		// Matérn-3/2, agpr's default before it shared the SE default.
		params = maps.Clone(params)
		params["kernel"] = "matern32"
	}
	return fitExactGPR(t, "agpr", params, train, iters)
}

// fitExactGPR builds the exact GP method name (gpr, agpr) and fits it.
func fitExactGPR(t *testing.T, name string, params map[string]any, train gp.Data, iters int) *gprModel {
	t.Helper()
	m, err := Build(name, params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fit(context.Background(), train, FitOptions{Iterations: iters}, nil); err != nil {
		t.Fatal(err)
	}
	return m.(*gprModel)
}

// checkExactGPRGradient compares the gradient of m's objective with
// respect to every unconstrained parameter (wantParams of them) with
// central finite differences, to relative tolerance tol.
func checkExactGPRGradient(t *testing.T, m *gprModel, train gp.Data, wantParams int, tol float64) {
	t.Helper()
	obj := m.objective(train.Y)
	eval := func(x []float64) (float64, []float64) {
		m.set.SetVector(x)
		tp := ad.NewTape()
		b := m.set.Bind(tp)
		f, err := obj(tp, b)
		if err != nil {
			t.Fatal(err)
		}
		tp.Backward(f)
		return f.Scalar(), b.Gradient()
	}
	x0 := m.set.Vector()
	if len(x0) != wantParams {
		t.Fatalf("%d parameters, want %d: %v", len(x0), wantParams, m.set.Names())
	}
	_, got := eval(x0)
	want := make([]float64, len(x0))
	fd.Gradient(want, func(x []float64) float64 { f, _ := eval(x); return f }, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Errorf("gradient[%d] = %.10g, finite difference %.10g", i, got[i], want[i])
		}
	}
}

// At fixed hyperparameters (iterations = 0) the objective, the predictive
// mean and the latent variance equal the naive dense computation with the
// explicitly summed kernel, including an ill-conditioned case (repeated
// inputs, noise 1e-5; the noise transform's floor is 1e-6).
func TestAGPRMatchesNaiveSummedKernel(t *testing.T) {
	for _, c := range []struct {
		name  string
		dup   int
		noise float64
		tol   float64
	}{
		{"well-conditioned", 0, 0.05, 1e-11},
		{"repeated inputs, noise 1e-5", 10, 1e-5, 1e-9},
	} {
		t.Run(c.name, func(t *testing.T) {
			const dim = 3
			train := additiveData(50, dim, c.dup, 1)
			test := additiveData(7, dim, 0, 2)
			ls := []float64{0.5, 1.3, 2.0}
			m := fitAGPR(t, map[string]any{"variance": 1.5, "lengthscales": []any{0.5, 1.3, 2.0}, "noise_variance": c.noise}, train, 0)
			v := []float64{0.5, 0.5, 0.5} // 1.5 split evenly over 3 components
			lml, mean, varf := naiveAdditiveGP(train.X, train.Y, test.X, v, ls, c.noise)
			got, err := m.ExactLML(train)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-lml) > c.tol*math.Max(1, math.Abs(lml)) {
				t.Errorf("log marginal likelihood %.12g, naive %.12g", got, lml)
			}
			pred, err := m.Predict(test.X)
			if err != nil {
				t.Fatal(err)
			}
			for i := range mean {
				if math.Abs(pred.Mean[i]-mean[i]) > c.tol*math.Max(1, math.Abs(mean[i])) {
					t.Errorf("mean[%d] = %.12g, naive %.12g", i, pred.Mean[i], mean[i])
				}
				if math.Abs(pred.VarF[i]-varf[i]) > c.tol*math.Max(1, varf[i]) {
					t.Errorf("var_f[%d] = %.12g, naive %.12g", i, pred.VarF[i], varf[i])
				}
				if d := pred.VarY[i] - pred.VarF[i] - c.noise; math.Abs(d) > 1e-12 {
					t.Errorf("var_y[%d] − var_f[%d] − σ² = %g", i, i, d)
				}
			}
		})
	}
}

// The gradient of the objective with respect to every unconstrained
// parameter (D variances, D lengthscales, the noise) matches central
// finite differences.
func TestAGPRGradientFiniteDifferences(t *testing.T) {
	train := additiveData(30, 3, 0, 3)
	m := fitAGPR(t, map[string]any{"variance": 2.0, "lengthscales": []any{0.7, 1.1, 1.9}, "noise_variance": 0.1}, train, 0)
	// 3 variances + 3 lengthscales + noise
	checkExactGPRGradient(t, m, train, 7, 1e-7)
}

// In one dimension the additive kernel is the kernel itself: trained agpr
// and gpr reach the same log marginal likelihood; in three dimensions on
// additive data, training raises agpr's objective above its initial value
// and it is a valid exact LML at the trained hyperparameters.
func TestAGPRTraining(t *testing.T) {
	train := additiveData(40, 1, 0, 4)
	a := fitAGPR(t, map[string]any{"lengthscales": []any{1.0}}, train, 200)
	g, err := Build("gpr", map[string]any{"kernel": "matern32", "lengthscales": []any{1.0}})
	if err != nil {
		t.Fatal(err)
	}
	gres, err := g.Fit(context.Background(), train, FitOptions{Iterations: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	la, _ := a.ExactLML(train)
	if math.Abs(la-gres.Objective) > 1e-6*math.Abs(gres.Objective) {
		t.Errorf("1-D: agpr log ML %.10g, gpr %.10g", la, gres.Objective)
	}

	train3 := additiveData(60, 3, 0, 5)
	before := fitAGPR(t, map[string]any{}, train3, 0)
	l0, _ := before.ExactLML(train3)
	after := fitAGPR(t, map[string]any{}, train3, 300)
	l1, _ := after.ExactLML(train3)
	if !(l1 > l0+1) {
		t.Errorf("training did not raise the log ML: %.6g → %.6g", l0, l1)
	}
}

func TestAGPRBadInput(t *testing.T) {
	train := additiveData(10, 3, 0, 6)
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"lengthscales": []any{1.0, 2.0}}, "lengthscales has 2 values for 3 input dimensions"},
		{map[string]any{"kernel": "periodic"}, "matern32"},
		{map[string]any{"variance": -1.0}, `parameter "variance": -1 is out of range: want > 0`},
		{map[string]any{"ard": true}, "no parameter \"ard\""},
	} {
		m, err := Build("agpr", c.params)
		if err == nil {
			_, err = m.Fit(context.Background(), train, FitOptions{}, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.params, err, c.want)
		}
	}
}
