package methods

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// SKI trains, and on a fine grid its predictive mean and variance agree
// with the exact GP posterior at the fitted hyperparameters (the SKI kernel
// differs from the RBF kernel by the O(h³) interpolation error only). Two
// fits with one seed are bitwise identical.
func TestSKIFitsAndMatchesExactGP(t *testing.T) {
	train, test := toyData(1, 300, 0.1), toyData(2, 60, 0.1)
	build := func() Model {
		m, err := Build("ski", map[string]any{"grid_size": int64(30), "variance_rank": int64(300), "predict_cg_tolerance": 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := build()
	opt := FitOptions{Iterations: 30, Seed: 7}
	res, err := m.Fit(context.Background(), train, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trace[len(res.Trace)-1].Objective <= res.Trace[0].Objective {
		t.Errorf("objective did not improve: %v → %v", res.Trace[0].Objective, res.Trace[len(res.Trace)-1].Objective)
	}
	if res.Extra["num_features"] != 900 || res.Extra["grid_size"] != 30 {
		t.Errorf("grid extras %v", res.Extra)
	}
	pred, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if !pred.PositiveVarOnly {
		t.Error("SKI predictions must be scored over positive variances")
	}
	// Exact GP posterior at the fitted hyperparameters.
	sf2, ls, noise, mu := hyper(res, skiVariance)[0], hyper(res, skiLengths), hyper(res, noiseName)[0], hyper(res, skiMean)[0]
	k := func(a, b *mat.Dense, i, j int) float64 {
		var r2 float64
		for d := 0; d < 2; d++ {
			u := (a.At(i, d) - b.At(j, d)) / ls[d]
			r2 += u * u
		}
		return sf2 * math.Exp(-0.5*r2)
	}
	n := train.N()
	kk := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := k(train.X, train.X, i, j)
			if i == j {
				v += noise
			}
			kk.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kk) {
		t.Fatal("exact K not PD")
	}
	r := mat.NewVecDense(n, nil)
	for i, v := range train.Y {
		r.SetVec(i, v-mu)
	}
	var alpha mat.VecDense
	_ = ch.SolveVecTo(&alpha, r)
	var worstM, worstV float64
	for i := 0; i < test.N(); i++ {
		ks := mat.NewVecDense(n, nil)
		for j := 0; j < n; j++ {
			ks.SetVec(j, k(test.X, train.X, i, j))
		}
		var sol mat.VecDense
		_ = ch.SolveVecTo(&sol, ks)
		worstM = math.Max(worstM, math.Abs(pred.Mean[i]-(mu+mat.Dot(ks, &alpha))))
		worstV = math.Max(worstV, math.Abs(pred.VarF[i]-(sf2-mat.Dot(ks, &sol))))
	}
	t.Logf("fitted σ_f² %.3g ℓ %.3g σ² %.3g μ %.3g; max |SKI − exact GP|: mean %.2e, variance %.2e", sf2, ls, noise, mu, worstM, worstV)
	if worstM > 1e-2 || worstV > 1e-2 {
		t.Errorf("SKI differs from the exact GP: mean %.3g, variance %.3g", worstM, worstV)
	}
	res2, err := build().Fit(context.Background(), train, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Objective != res.Objective {
		t.Errorf("same seed, objectives %v and %v", res.Objective, res2.Objective)
	}
}

func TestSKIBadInput(t *testing.T) {
	train := toyData(3, 30, 0.1)
	for _, c := range []struct {
		params map[string]any
		opt    FitOptions
		want   string
	}{
		{map[string]any{"grid_size": int64(3)}, FitOptions{Iterations: 1}, "grid_size"},
		{map[string]any{"probes": int64(0)}, FitOptions{Iterations: 1}, "probes"},
		{map[string]any{"noise_variance": 1e-5}, FitOptions{Iterations: 1}, "want > 0.0001"},
		{map[string]any{"kernel": "matern52"}, FitOptions{Iterations: 1}, "no parameter"},
		{map[string]any{}, FitOptions{Iterations: 1, Optimizer: "lbfgs"}, "adam"},
		{map[string]any{"grid_size": int64(3000)}, FitOptions{Iterations: 1}, "max_grid_points"},
		{map[string]any{"lengthscales": []any{1.0, 1.0, 1.0}}, FitOptions{Iterations: 1}, "3 lengthscales"},
	} {
		m, err := Build("ski", c.params)
		if err == nil {
			_, err = m.Fit(context.Background(), train, c.opt, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %+v: error %v, want one mentioning %q", c.params, c.opt, err, c.want)
		}
	}
	m, err := Build("ski", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predict(train.X); err == nil || !strings.Contains(err.Error(), "before Fit") {
		t.Errorf("Predict before Fit: %v", err)
	}
	if _, err := m.Fit(context.Background(), train, FitOptions{Iterations: 2, Seed: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predict(mat.NewDense(1, 2, []float64{math.Inf(1), 0})); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("infinite test input: %v", err)
	}
}

// lossGrad chains natural-unit derivatives to the unconstrained loss
// gradient: check it by central differences of −f(θ(x))/n for a smooth f
// with a known gradient, with one lengthscale per dimension and one shared.
func TestSKILossGradFiniteDifferences(t *testing.T) {
	const n, dim = 37.0, 2
	// f(σ_f², ℓ, σ², μ) = log σ_f² + Σ_d (d+1) ℓ_d² + 1/σ² + μ³.
	f := func(h []float64, ls []float64, mu float64) (float64, []float64) {
		v := math.Log(h[0]) + 1/h[1] + mu*mu*mu
		g := []float64{1 / h[0]}
		for d, l := range ls {
			v += float64(d+1) * l * l
			g = append(g, 2*float64(d+1)*l)
		}
		return v, append(g, -1/(h[1]*h[1]), 3*mu*mu)
	}
	for _, ard := range []bool{true, false} {
		m := &skiModel{dim: dim}
		var err error
		m.p, err = mustMethod(t, "ski").Validate(map[string]any{"ard": ard, "lengthscales": []any{0.3}, "variance": 1.7, "noise_variance": 0.05, "mean": 0.4})
		if err != nil {
			t.Fatal(err)
		}
		if m.set, err = m.newSet(dim); err != nil {
			t.Fatal(err)
		}
		loss := func(x []float64) (float64, []float64) {
			m.set.SetVector(x)
			h, mu := m.hyper()
			v, g := f([]float64{h.Variance, h.Noise}, h.Lengthscales, mu)
			return -v / n, g
		}
		x := m.set.Vector()
		_, nat := loss(x)
		grad := make([]float64, len(x))
		lossGrad(grad, x, nat, dim, n)
		for j := range x {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			xp[j] += 1e-6
			xm[j] -= 1e-6
			fp, _ := loss(xp)
			fm, _ := loss(xm)
			if fd := (fp - fm) / 2e-6; math.Abs(fd-grad[j]) > 1e-7*math.Max(1, math.Abs(fd)) {
				t.Errorf("ard=%v parameter %d: gradient %v, finite difference %v", ard, j, grad[j], fd)
			}
		}
	}
}

func mustMethod(t *testing.T, name string) Method {
	t.Helper()
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
