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
	"sgplab/gp/param"
)

func boxData(n, d int, seed uint64) gp.Data {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.Float64()
			x.Set(i, j, v)
			s += math.Sin(4*v + float64(j))
		}
		y[i] = s + 0.1*rng.NormFloat64()
	}
	return gp.Data{X: x, Y: y}
}

// The collapsed objective from the precomputed statistics equals the
// direct O(NM²) SGPR bound on the same feature, at several parameter values,
// for every interval method and structure.
func TestIntervalCollapsedEqualsSGPR(t *testing.T) {
	cases := []struct {
		method string
		d      int
		raw    map[string]any
	}{
		{"vff", 1, map[string]any{"frequencies": int64(12), "kernel": "matern12"}},
		{"vff", 2, map[string]any{"frequencies": int64(5), "kernel": "matern32"}},
		{"vff", 2, map[string]any{"frequencies": int64(6), "mask": true}},
		{"avff", 3, map[string]any{"frequencies": int64(6)}},
		{"bspline", 1, map[string]any{"bases": int64(12), "kernel": "matern32"}},
		{"bspline", 2, map[string]any{"bases": int64(6)}},
	}
	for _, c := range cases {
		train := boxData(150, c.d, 3)
		model, err := Build(c.method, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		m := sparseOf(t, model)
		if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil); err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		m.restoreInputs(train.X)
		for _, scale := range []float64{1, 0.7, 1.6} {
			v := m.set.Vector()
			for i := range v {
				v[i] += math.Log(scale) // any shift of the unconstrained vector
			}
			m.set.SetVector(v)
			tp := ad.NewTape()
			b := m.set.Bind(tp)
			got, err := m.collapsed(tp, b)
			if err != nil {
				t.Fatal(err)
			}
			kb := m.kern.Bind(b, KernelPrefix)
			want, _, err := inference.SGPR(kb, m.feat().Bind(b, ""), tp.Const(train.X), train.Y, b.Get("noise_variance"), inference.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(got.Scalar() - want.Scalar()); d > 1e-8*math.Abs(want.Scalar()) {
				t.Errorf("%s D=%d: from stats %.10g, SGPR %.10g", c.method, c.d, got.Scalar(), want.Scalar())
			}
		}
	}
}

// Gradients of the collapsed objective (with respect to the unconstrained
// parameter vector) agree with central finite differences.
func TestIntervalCollapsedGradient(t *testing.T) {
	for _, c := range []struct {
		method string
		raw    map[string]any
	}{
		{"vff", map[string]any{"kernel": "matern52", "structure": "additive", "frequencies": int64(5)}},
		{"vff", map[string]any{"kernel": "matern32", "frequencies": int64(4)}},
		{"bspline", map[string]any{"kernel": "matern52", "bases": int64(6)}},
	} {
		model, err := Build(c.method, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		m := sparseOf(t, model)
		train := boxData(80, 2, 5)
		if _, err := model.Fit(context.Background(), train, FitOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		m.restoreInputs(train.X)
		v0 := m.set.Vector()
		value := func(v []float64) float64 {
			m.set.SetVector(v)
			tp := ad.NewTape()
			out, err := m.collapsed(tp, m.set.Bind(tp))
			if err != nil {
				t.Fatal(err)
			}
			return out.Scalar()
		}
		m.set.SetVector(v0)
		_, got := valueAndGradient(t, m.set, m.collapsed)
		want := fd.Gradient(nil, value, v0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s %v: gradient[%d] = %.8g, finite differences %.8g", c.method, c.raw, i, got[i], want[i])
			}
		}
	}
}

func TestIntervalMethodsTrainAndPredict(t *testing.T) {
	train := boxData(300, 1, 11)
	test := boxData(100, 1, 12)
	for _, c := range []struct {
		method string
		raw    map[string]any
	}{
		{"vff", map[string]any{"frequencies": int64(20)}},
		{"vff", map[string]any{"frequencies": int64(20), "objective": "svgp"}},
		{"bspline", map[string]any{"bases": int64(20)}},
		{"avff", map[string]any{"frequencies": int64(20)}},
	} {
		model, err := Build(c.method, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 150}, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.raw, err)
		}
		if res.Objective <= res.Trace[0].Objective {
			t.Errorf("%s: objective did not improve: %v → %v", c.method, res.Trace[0].Objective, res.Objective)
		}
		pred, err := model.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		se := 0.0
		for i, y := range test.Y {
			se += (y - pred.Mean[i]) * (y - pred.Mean[i])
			if !(pred.VarY[i] > 0) {
				t.Fatalf("%s: predictive variance %v", c.method, pred.VarY[i])
			}
		}
		if rmse := math.Sqrt(se / float64(len(test.Y))); rmse > 0.15 {
			t.Errorf("%s %v: test RMSE %.3f (noise sd 0.1)", c.method, c.raw, rmse)
		}
	}
}

func TestIntervalMethodsBadInput(t *testing.T) {
	train := boxData(50, 1, 1)
	model, _ := Build("vff", map[string]any{"interval_lower": 0.2})
	if _, err := model.Fit(context.Background(), train, FitOptions{}, nil); err == nil || !strings.Contains(err.Error(), "widen the interval") {
		t.Errorf("training inputs outside the interval: %v", err)
	}
	model, _ = Build("vff", map[string]any{})
	if _, err := model.Fit(context.Background(), train, FitOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Predict(mat.NewDense(1, 1, []float64{3})); err == nil || !strings.Contains(err.Error(), "widen the interval") {
		t.Errorf("test input outside the interval: %v", err)
	}
	if _, err := Build("vff", map[string]any{"kernel": "se"}); err == nil || !strings.Contains(err.Error(), "matern12") {
		t.Errorf("SE kernel: %v", err)
	}
	if _, err := Build("avff", map[string]any{"structure": "kronecker"}); err == nil {
		t.Error("avff with Kronecker structure accepted")
	}
	if _, err := Build("bspline", map[string]any{"bases": int64(3)}); err == nil {
		t.Error("3 cubic B-splines accepted")
	}
	model, _ = Build("vff", map[string]any{"lengthscales": []any{0.2, 0.3, 0.4}})
	if _, err := model.Fit(context.Background(), boxData(20, 2, 1), FitOptions{}, nil); err == nil || !strings.Contains(err.Error(), "give 1 or 2") {
		t.Errorf("3 lengthscales for 2 dimensions: %v", err)
	}
	model, _ = Build("avff", map[string]any{"lengthscales": []any{0.2, 0.3}})
	res, err := model.Fit(context.Background(), boxData(20, 2, 1), FitOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for d, want := range []float64{0.2, 0.3} {
		if v := hyper(res, features.ComponentPrefix(KernelPrefix, d)+"lengthscales"); len(v) != 1 || math.Abs(v[0]-want) > 1e-12 {
			t.Errorf("dimension %d: lengthscales %v, want [%v]", d, v, want)
		}
	}
	model, _ = Build("vff", map[string]any{"frequencies": int64(1), "mask": true})
	if _, err := model.Fit(context.Background(), boxData(20, 2, 1), FitOptions{}, nil); err == nil || !strings.Contains(err.Error(), "more frequencies") {
		t.Errorf("mask too small: %v", err)
	}
}

// vffExactGap builds a VFF model from raw, evaluates it on train without
// training, and returns the exact log marginal likelihood minus the
// collapsed bound at those (initial) parameters.
func vffExactGap(t *testing.T, train gp.Data, raw map[string]any) float64 {
	t.Helper()
	model, err := Build("vff", raw)
	if err != nil {
		t.Fatal(err)
	}
	m := sparseOf(t, model)
	if _, err := model.Fit(context.Background(), train, FitOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	m.restoreInputs(train.X)
	tp := ad.NewTape()
	b := m.set.Bind(tp)
	bound, err := m.collapsed(tp, b)
	if err != nil {
		t.Fatal(err)
	}
	exact, _, err := inference.ExactLML(m.kern.Bind(b, KernelPrefix), tp.Const(train.X), train.Y, b.Get("noise_variance"), inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return exact.Scalar() - bound.Scalar()
}

// With an interval padded by ≥ 10 lengthscales and many frequencies the VFF bound approaches the
// exact log marginal likelihood from below (Qff → Kff inside the interval).
func TestVFFBoundApproachesExactLML(t *testing.T) {
	train := boxData(100, 1, 21)
	var prevGap float64 = math.Inf(1)
	for _, freqs := range []int64{20, 60, 200} {
		gap := vffExactGap(t, train, map[string]any{"kernel": "matern32", "frequencies": freqs,
			"interval_lower": -3.0, "interval_upper": 4.0, "lengthscales": []any{0.3}, "noise_variance": 0.05})
		if gap < -1e-8 || gap > prevGap {
			t.Errorf("%d frequencies: LML − bound = %g (previous %g)", freqs, gap, prevGap)
		}
		t.Logf("%d frequencies: LML − bound = %g", freqs, gap)
		prevGap = gap
	}
	if prevGap > 0.01 { // 0.0038 here; 4.5e-4 with 400 frequencies
		t.Errorf("gap %g with 200 frequencies", prevGap)
	}
}

// collapsedDense is the collapsed bound with the dense M×M Kuu (one dense
// Cholesky), the reference for the structured whitening used in Fit.
func (m *sparseModel) collapsedDense(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.kern.Bind(b, KernelPrefix)
	kd := kernels.DiagSum(t, kb, m.stats.trainX)
	out, _, err := inference.CollapsedFromStats(m.stats.stats, inference.Kuu{Dense: m.interval().Kuu(kb)}, kd, b.Get("noise_variance"), inference.Options{})
	return out, err
}

// The structured Kuu (diagonal-plus-low-rank square roots per cos/sin
// block, per dimension) gives the same bound and gradient as the dense
// Kuu, including many frequencies where Kuu's diagonal spans many orders
// of magnitude.
func TestIntervalStructuredKuuMatchesDense(t *testing.T) {
	for _, c := range []struct {
		method string
		d      int
		raw    map[string]any
	}{
		{"vff", 1, map[string]any{"frequencies": int64(100), "kernel": "matern52"}},
		{"vff", 1, map[string]any{"frequencies": int64(60), "kernel": "matern12"}},
		{"vff", 2, map[string]any{"frequencies": int64(8), "kernel": "matern32"}},
		{"avff", 3, map[string]any{"frequencies": int64(10), "kernel": "matern52"}},
		{"bspline", 2, map[string]any{"bases": int64(8)}},
	} {
		model, err := Build(c.method, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		m := sparseOf(t, model)
		train := boxData(200, c.d, 8)
		if _, err := model.Fit(context.Background(), train, FitOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		m.restoreInputs(train.X)
		eval := func(f func(*ad.Tape, *param.Bound) (*ad.Node, error)) (float64, []float64) {
			return valueAndGradient(t, m.set, f)
		}
		vs, gs := eval(m.collapsed)
		vd, gd := eval(m.collapsedDense)
		t.Logf("%s %v (M = %d): bound %.12g, structured − dense %.2g", c.method, c.raw, m.interval().M(), vd, vs-vd)
		if math.Abs(vs-vd) > 1e-9*math.Max(1, math.Abs(vd)) {
			t.Errorf("%s %v: structured bound %.12g, dense %.12g", c.method, c.raw, vs, vd)
		}
		for i := range gd {
			if math.Abs(gs[i]-gd[i]) > 1e-7*math.Max(1, math.Abs(gd[i])) {
				t.Errorf("%s %v: gradient[%d] structured %.10g, dense %.10g", c.method, c.raw, i, gs[i], gd[i])
			}
		}
	}
}

// VFF's harmonics are periodic on [a, b], so the Matérn prior is missed
// near the ends of the box whatever the number of frequencies: with a
// margin of 0.1 lengthscales the gap L − F stalls, with 3 lengthscales
// it keeps falling (the reason the IFF configs widen VFF's box).
func TestVFFBoxMarginFloor(t *testing.T) {
	train := boxData(200, 1, 31)
	gap := func(margin float64, freqs int64) float64 {
		return vffExactGap(t, train, map[string]any{"kernel": "matern52", "frequencies": freqs, "interval_margin": margin,
			"lengthscales": []any{0.1}, "noise_variance": 0.05})
	}
	// The same top frequency ≈ 2π·F/width in both boxes.
	tight, tighter, wide := gap(0.01, 150), gap(0.01, 300), gap(0.3, 235)
	t.Logf("L − F: margin 0.1ℓ %.3g (twice the frequencies: %.3g), margin 3ℓ %.3g", tight, tighter, wide)
	if !(tighter > 10*wide) || !(tighter > tight/2) || wide < -1e-8 {
		t.Errorf("L − F: margin 0.1ℓ %.3g, with twice the frequencies %.3g, margin 3ℓ %.3g; want the tight box ≥ 10× worse and stalled",
			tight, tighter, wide)
	}
}

// The whitened SVGP objective of the interval methods uses the feature's
// structured square root of Kuu (not triangular), so q(v) refers to that
// root. At the closed-form optimal q(v) for that root — N(ΣAy/σ², Σ) with
// A = L⁻¹Φ and Σ = (I + AAᵀ/σ²)⁻¹ — the ELBO equals the dense collapsed
// SGPR bound, its gradient equals SGPR's (envelope theorem: the q
// gradients vanish and the hyperparameter gradients match), and the
// predictions from Fit's posterior equal SGPR's. A q(v) built for another
// root would miss all three.
func TestIntervalSVGPStructuredAtOptimum(t *testing.T) {
	for _, c := range []struct {
		method string
		d      int
		raw    map[string]any
	}{
		{"vff", 1, map[string]any{"frequencies": int64(8), "kernel": "matern12"}},
		{"avff", 3, map[string]any{"frequencies": int64(4)}},
		{"vff", 2, map[string]any{"frequencies": int64(4), "kernel": "matern32"}},
		{"vff", 2, map[string]any{"frequencies": int64(5), "mask": true}},
		{"bspline", 2, map[string]any{"bases": int64(6)}},
	} {
		model, m := buildIntervalSVGP(t, c.method, c.raw)
		train := boxData(120, c.d, 21)
		if _, err := model.Fit(context.Background(), train, FitOptions{Iterations: 0}, nil); err != nil {
			t.Fatalf("%s %v: %v", c.method, c.raw, err)
		}
		mm := m.interval().M()
		tp := ad.NewTape()
		kb := m.kern.Bind(m.set.Bind(tp), KernelPrefix)
		w, err := m.interval().Whitener(kb, inference.DefaultMaxTries)
		if err != nil {
			t.Fatal(err)
		}
		phi, err := m.interval().Phi(train.X)
		if err != nil {
			t.Fatal(err)
		}
		a := w(tp.Const(phi)).Value()
		s2 := m.set.Scalar("noise_variance")
		var prec, cov mat.Dense
		prec.Mul(a, a.T())
		prec.Scale(1/s2, &prec)
		for i := 0; i < mm; i++ {
			prec.Set(i, i, prec.At(i, i)+1)
		}
		if err := cov.Inverse(&prec); err != nil {
			t.Fatal(err)
		}
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(mm, symmetrised(&cov))) {
			t.Fatal("Σ not positive definite")
		}
		var l mat.TriDense
		chol.LTo(&l)
		ay := mat.NewDense(mm, 1, nil)
		ay.Mul(a, mat.NewDense(len(train.Y), 1, append([]float64(nil), train.Y...)))
		mu := mat.NewDense(mm, 1, nil)
		mu.Mul(&cov, ay)
		mu.Scale(1/s2, mu)
		if err := m.set.SetValue("q_mu", mu); err != nil {
			t.Fatal(err)
		}
		if err := m.set.SetValue("q_sqrt", mat.DenseCopyOf(&l)); err != nil {
			t.Fatal(err)
		}

		eval := func(f func(*ad.Tape, *param.Bound) (*ad.Node, error)) (float64, []float64) {
			return valueAndGradient(t, m.set, f)
		}
		ve, ge := eval(func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			return m.svgpELBO(tp, b, train.X, train.Y, nil, train.N(), true)
		})
		vs, gs := eval(func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			out, _, err := inference.SGPR(m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, ""), tp.Const(train.X), train.Y, b.Get("noise_variance"), inference.Options{})
			return out, err
		})
		if math.Abs(ve-vs) > 1e-9*math.Max(1, math.Abs(vs)) {
			t.Errorf("%s %v: structured SVGP at the optimal q %.12g, SGPR %.12g", c.method, c.raw, ve, vs)
		}
		worst := 0.0
		for i := range gs {
			d := math.Abs(ge[i]-gs[i]) / math.Max(1, math.Abs(gs[i]))
			worst = math.Max(worst, d)
			if d > 1e-9 {
				t.Errorf("%s %v: gradient[%d] structured SVGP %.10g, SGPR %.10g", c.method, c.raw, i, ge[i], gs[i])
			}
		}

		if err := m.condition(train, FitOptions{}, &FitResult{}); err != nil {
			t.Fatal(err)
		}
		xs := boxData(40, c.d, 22).X
		got, err := model.Predict(xs)
		if err != nil {
			t.Fatal(err)
		}
		tp = ad.NewTape()
		b := m.set.Bind(tp)
		ref, _, err := inference.SGPRPosterior(m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, ""), tp.Const(train.X), train.Y, b.Get("noise_variance"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wm, wv, err := ref.Predict(xs, func(t *ad.Tape) (kernels.Bound, features.Bound) {
			b := m.set.Bind(t)
			return m.kern.Bind(b, KernelPrefix), m.feat().Bind(b, "")
		})
		if err != nil {
			t.Fatal(err)
		}
		pworst := 0.0
		for i := range wm {
			pworst = math.Max(pworst, math.Max(math.Abs(got.Mean[i]-wm[i]), math.Abs(got.VarF[i]-math.Max(wv[i], 0))))
		}
		if pworst > 1e-9 {
			t.Errorf("%s %v: predictions of the structured SVGP posterior and SGPR differ by up to %.3g", c.method, c.raw, pworst)
		}
		t.Logf("%s %v (M = %d): ELBO − SGPR %.2g, gradient max rel %.2g, predictions max abs %.2g", c.method, c.raw, mm, ve-vs, worst, pworst)
	}
}

func symmetrised(a *mat.Dense) []float64 {
	n, _ := a.Dims()
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i*n+j] = 0.5 * (a.At(i, j) + a.At(j, i))
		}
	}
	return out
}

// After minibatch SVGP training, the reported objective is the full-data
// ELBO at the fitted parameters (from the posterior's marginals, as svgp
// reports it), not the last minibatch's estimate.
func TestIntervalSVGPMinibatchReportsFullELBO(t *testing.T) {
	for _, c := range []struct {
		method string
		d      int
		raw    map[string]any
	}{
		{"vff", 1, map[string]any{"frequencies": int64(8)}},
		{"avff", 2, map[string]any{"frequencies": int64(4)}},
	} {
		model, m := buildIntervalSVGP(t, c.method, c.raw)
		train := boxData(300, c.d, 5)
		res, err := model.Fit(context.Background(), train, FitOptions{Iterations: 20, BatchSize: 50, Optimizer: "adam", LearningRate: 0.05, Seed: 3}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		tp := ad.NewTape()
		want, err := m.svgpELBO(tp, m.set.Bind(tp), train.X, train.Y, nil, train.N(), true)
		if err != nil {
			t.Fatal(err)
		}
		if e := math.Abs(res.Objective-want.Scalar()) / math.Abs(want.Scalar()); e > 1e-9 {
			t.Errorf("%s: reported objective %.10g, full-batch ELBO %.10g (rel %.2g)", c.method, res.Objective, want.Scalar(), e)
		}
		if mb, ok := res.Extra["last_minibatch_objective"]; !ok || mb == res.Objective {
			t.Errorf("%s: minibatch objective %v (present %v) should be kept beside the full ELBO %v", c.method, mb, ok, res.Objective)
		}
	}
}

// buildIntervalSVGP builds an interval-feature method with objective
// "svgp" and the extra parameters raw.
func buildIntervalSVGP(t *testing.T, method string, raw map[string]any) (Model, *sparseModel) {
	t.Helper()
	p := map[string]any{"objective": "svgp"}
	for k, v := range raw {
		p[k] = v
	}
	model, err := Build(method, p)
	if err != nil {
		t.Fatal(err)
	}
	return model, sparseOf(t, model)
}

// valueAndGradient evaluates an objective of the parameters in set and its
// gradient with respect to set's vector.
func valueAndGradient(t *testing.T, set *param.Set, f func(*ad.Tape, *param.Bound) (*ad.Node, error)) (float64, []float64) {
	t.Helper()
	tp := ad.NewTape()
	b := set.Bind(tp)
	out, err := f(tp, b)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(out)
	return out.Scalar(), b.Gradient()
}
