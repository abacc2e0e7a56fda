package datasets

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"sgplab/gp"
)

// TestGeneratorSpecConstants checks each paper generator's defaults against
// the constants of its spec (../shared/papers/*-spec.md).
func TestGeneratorSpecConstants(t *testing.T) {
	wGap := 6 * math.Sqrt(1000.0/2) // iff-spec §3.1: W = 6 λ⁻¹ √(N/2), λ = 1
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   config
	}{
		// vof-spec §3.2: N = 80, U[-3,3], Matérn-5/2, ℓ = 0.2, v = 1, noise sd 0.03.
		{"vof-regression", nil, config{kernel: "matern52", inputs: "uniform", dim: 1, n: 80, ls: 0.2, variance: 1, noise: 0.03 * 0.03, low: -3, high: 3, inputStd: 1}},
		// vof-spec §3.3: N = 1000, SE v = 0.5 ℓ = 0.5, noise sd 0.01; N(0, 3²) | U[±√108] | mixture.
		{"vof-inputs", nil, config{kernel: "se", inputs: "gaussian", dim: 1, n: 1000, ls: 0.5, variance: 0.5, noise: 1e-4, inputStd: 3, low: -math.Sqrt(108), high: math.Sqrt(108)}},
		// iff-spec §3.2, §6.5, §6.9, §6.10: N = 10⁴, unit ℓ and σ_f², σ² = 1/0.774, width 6√(N/2) (1-D) or 30 (2-D, §6.9 corrected).
		{"iff-synthetic", nil, config{kernel: "se", inputs: "uniform", dim: 1, n: 10000, ls: 1, variance: 1, noise: 1 / 0.774, width: 6 * math.Sqrt(5000), low: -3 * math.Sqrt(5000), high: 3 * math.Sqrt(5000), inputStd: 1}},
		{"iff-synthetic", map[string]any{"dim": 2, "kernel": "matern52"}, config{kernel: "matern52", inputs: "uniform", dim: 2, n: 10000, ls: 1, variance: 1, noise: 1 / 0.774, width: 30, low: -15, high: 15, inputStd: 1}},
		// iff-spec §3.1, §6.5-7: N = 1000, N(0, (W/6)²), σ_f = 0.5422, SNR 1.255.
		{"iff-gap", nil, config{kernel: "se", inputs: "gaussian", dim: 1, n: 1000, ls: 1, variance: 0.5422 * 0.5422, noise: 0.5422 * 0.5422 / 1.255, inputStd: wGap / 6, width: wGap, low: -wGap / 2, high: wGap / 2}},
		// Fig. 9: λ = 0.5 doubles W; Fig. 8: 4× SNR.
		{"iff-gap", map[string]any{"lengthscale": 0.5, "snr": 4 * 1.255}, config{kernel: "se", inputs: "gaussian", dim: 1, n: 1000, ls: 0.5, variance: 0.29398, noise: 0.29398 / (4 * 1.255), inputStd: 2 * wGap / 6, width: 2 * wGap, low: -wGap, high: wGap}},
		// Fig. 12: uniform on [-W/2, W/2], SNR 2.067.
		{"iff-gap", map[string]any{"inputs": "uniform", "snr": 2.067}, config{kernel: "se", inputs: "uniform", dim: 1, n: 1000, ls: 1, variance: 0.29398, noise: 0.29398 / 2.067, inputStd: wGap / 6, width: wGap, low: -wGap / 2, high: wGap / 2}},
	} {
		e, _ := lookup(tc.name)
		c, err := e.gen.resolve(tc.params)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w := tc.want
		for _, f := range []struct {
			what      string
			got, want float64
		}{
			{"dim", float64(c.dim), float64(w.dim)}, {"n", float64(c.n), float64(w.n)}, {"lengthscale", c.ls, w.ls},
			{"variance", c.variance, w.variance}, {"noise_variance", c.noise, w.noise}, {"width", c.width, w.width},
			{"low", c.low, w.low}, {"high", c.high, w.high}, {"input_std", c.inputStd, w.inputStd},
		} {
			if math.Abs(f.got-f.want) > 1e-4*(1+math.Abs(f.want)) {
				t.Errorf("%s %v: %s = %v, spec %v", tc.name, tc.params, f.what, f.got, f.want)
			}
		}
		if c.kernel != w.kernel || c.inputs != w.inputs {
			t.Errorf("%s %v: kernel/inputs %s/%s, spec %s/%s", tc.name, tc.params, c.kernel, c.inputs, w.kernel, w.inputs)
		}
	}
	// The VOF mixture (spec §3.3, D10) has mean 0 and sd 3.
	m := 0.7*mixMu1 + 0.3*mixMu2
	v := 0.7*(1+mixMu1*mixMu1) + 0.3*(0.5+mixMu2*mixMu2) - m*m
	if math.Abs(m) > 1e-6 || math.Abs(v-9) > 1e-5 {
		t.Errorf("mixture mean %v variance %v, want 0 and 9", m, v)
	}
	e, _ := lookup("iff-gap")
	if _, err := e.gen.resolve(map[string]any{"snr": 2.0, "noise_variance": 0.1}); err == nil {
		t.Error("snr together with noise_variance accepted")
	}
}

// whitenedChi2 returns Σz²/N and Σz/N for z = L⁻¹y, K + σ²I = LLᵀ, with
// the generating covariance cov (from gp/kernels) — χ²_N/N and N(0, 1/N)
// when y is a draw of the model.
func whitenedChi2(t *testing.T, cov *mat.Dense, noise float64, y []float64) (float64, float64) {
	t.Helper()
	n := len(y)
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			k.SetSym(i, j, cov.At(i, j))
		}
		k.SetSym(i, i, k.At(i, i)+noise+1e-8)
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("K + σ²I not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := mat.NewVecDense(n, nil)
	if err := z.SolveVec(&l, mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	var s2, s1 float64
	for _, v := range z.RawVector().Data {
		s2 += v * v
		s1 += v
	}
	return s2 / float64(n), s1 / float64(n)
}

// modelCov is the generating covariance of f at the rows of x.
func modelCov(t *testing.T, c config, x *mat.Dense) *mat.Dense {
	if c.structure != "additive" || c.dim == 1 {
		return kernelMatrix(t, c, x, x)
	}
	n, _ := x.Dims()
	sum := mat.NewDense(n, n, nil)
	for d := 0; d < c.dim; d++ {
		col := mat.NewDense(n, 1, mat.Col(nil, d, x))
		sum.Add(sum, kernelMatrix(t, c, col, col))
	}
	return sum
}

// TestGeneratorStatistics draws every generator (all input variants) and
// checks its inputs, its sizes, and — through the whitened residuals of
// y under the generating kernel (gp/kernels) and noise — that y is a draw
// of the stated GP: Σz²/N ≈ 1 within 5 sd of χ²_N/N. A model with a
// tripled lengthscale must fail the same check, so it has power.
func TestGeneratorStatistics(t *testing.T) {
	type check func(t *testing.T, c config, x []float64, d gp.Data)
	within := func(lo, hi float64) check {
		return func(t *testing.T, c config, x []float64, d gp.Data) {
			for _, v := range x {
				if v < lo || v > hi {
					t.Fatalf("input %v outside [%v, %v]", v, lo, hi)
				}
			}
		}
	}
	moments := func(mean, sd, tol float64) check {
		return func(t *testing.T, c config, x []float64, d gp.Data) {
			m, s := stat.MeanStdDev(x, nil)
			if math.Abs(m-mean) > tol*sd || math.Abs(s-sd) > tol*sd {
				t.Errorf("inputs mean %.3f sd %.3f, want %v, %v", m, s, mean, sd)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		reps   int
		checks []check
	}{
		{"gp-sample", map[string]any{"n": 300, "n_test": 100, "kernel": "matern32", "lengthscale": 0.1}, 4, []check{within(0, 1)}},
		{"gp-sample", map[string]any{"n": 300, "n_test": 0, "dim": 3, "kernel": "matern52", "lengthscale": 0.5, "method": "cholesky"}, 4, []check{within(0, 1)}},
		{"vof-regression", nil, 20, []check{within(-3, 3), moments(0, math.Sqrt(3), 0.3)}},
		{"vof-inputs", nil, 1, []check{moments(0, 3, 0.1)}},
		{"vof-inputs", map[string]any{"inputs": "uniform"}, 1, []check{within(-math.Sqrt(108), math.Sqrt(108)), moments(0, 6, 0.1)}},
		{"vof-inputs", map[string]any{"inputs": "mixture"}, 1, []check{moments(0, 3, 0.1), func(t *testing.T, c config, x []float64, d gp.Data) {
			var right int
			for _, v := range x {
				if v > 1.246 { // where the two weighted component densities cross
					right++
				}
			}
			if f := float64(right) / float64(len(x)); math.Abs(f-0.3) > 0.06 {
				t.Errorf("fraction in the right component %.3f, want about 0.3", f)
			}
		}}},
		{"iff-synthetic", map[string]any{"n": 800}, 3, []check{within(-60, 60), moments(0, 120/math.Sqrt(12), 0.1)}},
		{"iff-synthetic", map[string]any{"n": 800, "kernel": "matern52", "dim": 2}, 3, []check{within(-15, 15), moments(0, 30/math.Sqrt(12), 0.1)}},
		{"iff-gap", nil, 1, []check{moments(0, math.Sqrt(500), 0.1)}},
		{"iff-gap", map[string]any{"kernel": "matern32", "inputs": "uniform", "snr": 2.067}, 1, []check{within(-3*math.Sqrt(500), 3*math.Sqrt(500))}},
		{"odvff-gap", map[string]any{"n": 600, "n_test": 200, "method": "statespace"}, 2, []check{within(0, 1), func(t *testing.T, c config, x []float64, d gp.Data) {
			for _, v := range x[:c.n] {
				if v > 0.45 && v < 0.55 {
					t.Fatalf("training input %v in the gap", v)
				}
			}
			var in int
			for _, v := range x[c.n:] {
				if v > 0.45 && v < 0.55 {
					in++
				}
			}
			if in < 8 {
				t.Errorf("only %d of %d test inputs in the gap", in, c.nTest)
			}
		}}},
		{"odvff-synthetic", map[string]any{"dim": 3, "n": 500, "n_test": 100, "method": "statespace"}, 2, []check{within(0, 1)}},
	} {
		t.Run(fmt.Sprintf("%s%v", tc.name, tc.params), func(t *testing.T) {
			t.Parallel()
			e, _ := lookup(tc.name)
			c, err := e.gen.resolve(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			var sum2, sum1, bad2 float64
			var total int
			for r := 0; r < tc.reps; r++ {
				p, err := Prepare(Request{Name: tc.name, Params: tc.params, Seed: uint64(11 + r)})
				if err != nil {
					t.Fatal(err)
				}
				if p.Train.N() != c.n || p.Test.N() != c.nTest || p.Train.D() != c.dim {
					t.Fatalf("shape train %d×%d test %d, want %d×%d, %d", p.Train.N(), p.Train.D(), p.Test.N(), c.n, c.dim, c.nTest)
				}
				all := p.Train
				y := append([]float64{}, p.Train.Y...)
				x := mat.DenseCopyOf(p.Train.X)
				if c.nTest > 0 {
					x = mat.NewDense(c.n+c.nTest, c.dim, nil)
					x.Stack(p.Train.X, p.Test.X)
					y = append(y, p.Test.Y...)
				}
				all = gp.Data{X: x, Y: y}
				for _, ck := range tc.checks {
					ck(t, c, mat.Col(nil, 0, all.X), all)
				}
				s2, s1 := whitenedChi2(t, modelCov(t, c, all.X), c.noise, all.Y)
				sum2 += s2 * float64(all.N())
				sum1 += s1 * float64(all.N())
				wrong := c
				wrong.ls *= 3
				b2, _ := whitenedChi2(t, modelCov(t, wrong, all.X), c.noise, all.Y)
				bad2 += b2 * float64(all.N())
				total += all.N()
			}
			nn := float64(total)
			tol := 5 * math.Sqrt(2/nn)
			if math.Abs(sum2/nn-1) > tol || math.Abs(sum1/nn) > 5/math.Sqrt(nn) {
				t.Errorf("whitened y: mean square %.4f (want 1 ± %.3f), mean %.4f", sum2/nn, tol, sum1/nn)
			}
			if math.Abs(bad2/nn-1) <= tol {
				t.Errorf("the check has no power: lengthscale ×3 also gives mean square %.4f", bad2/nn)
			}
		})
	}
}

// TestGeneratorDefaultSizes draws the large paper generators at their
// default sizes (the O(N) state-space path) and checks shapes and var(y).
func TestGeneratorDefaultSizes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		params      map[string]any
		train, test int
		varY        float64
	}{
		{"odvff-gap", nil, 2000, 1000, 1 + 0.15},
		{"odvff-synthetic", nil, 50000, 1000, 1 + 0.2},
		{"odvff-periodic", nil, 1000, 3000, 1 + 1 + 0.01},
		{"iff-synthetic", map[string]any{"kernel": "matern52"}, 10000, 0, 1 + 1/0.774},
	} {
		p, err := Prepare(Request{Name: tc.name, Params: tc.params, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if p.Train.N() != tc.train || p.Test.N() != tc.test {
			t.Errorf("%s: sizes %d/%d, want %d/%d", tc.name, p.Train.N(), p.Test.N(), tc.train, tc.test)
		}
		// One realisation: var(y) is within a factor ~2 of its expectation.
		if v := stat.Variance(p.Train.Y, nil); v < tc.varY/2 || v > 2*tc.varY {
			t.Errorf("%s: var(y) = %v, expectation %v", tc.name, v, tc.varY)
		}
	}
}

// TestGeneratorPeriodicComponent checks the added periodic draw: without the
// Matérn part (variance ≈ 0) and noise, f has the period exactly, so two
// draws on inputs one period apart agree; bad settings name the field.
func TestGeneratorPeriodicComponent(t *testing.T) {
	params := map[string]any{"variance": 1e-4, "noise_variance": 0.0, "n": 300, "n_test": 300}
	p, err := Prepare(Request{Name: "odvff-periodic", Params: params, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Pairs of inputs within 2e-4 of one period apart have nearly equal y.
	all := append(append([]float64{}, mat.Col(nil, 0, p.Train.X)...), mat.Col(nil, 0, p.Test.X)...)
	y := append(append([]float64{}, p.Train.Y...), p.Test.Y...)
	if len(all) != 600 {
		t.Fatalf("%d inputs, want 600", len(all))
	}
	var pairs int
	for i := range all {
		for j := range all {
			if d := math.Abs(math.Abs(all[i]-all[j]) - 0.5); d < 2e-4 && i != j {
				pairs++
				// |f(x) − f(x')| ≤ sup|f'|·2e-4, and |f'| stays far below
				// 250 for l = 0.2, period 0.5, unit variance.
				if math.Abs(y[i]-y[j]) > 0.08 { // plus the Matérn part, sd 0.01
					t.Errorf("y(%v) = %v but y(%v) = %v, one period apart", all[i], y[i], all[j], y[j])
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no input pairs one period apart: the check compared nothing")
	}
	for _, bad := range []map[string]any{{"dim": 2}, {"period": -1.0}, {"periodic_variance": -1.0}} {
		if _, err := Prepare(Request{Name: "odvff-periodic", Params: bad, Seed: 1}); err == nil || !strings.Contains(err.Error(), "periodic") {
			t.Errorf("%v: error %v, want one naming the periodic settings", bad, err)
		}
	}
}
