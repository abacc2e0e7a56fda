package features_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// iffModel is an IFF regression model with its parameters: the kernel under
// "kern." and "noise".
type iffModel struct {
	f     *features.IFF
	k     kernels.Kernel
	set   *param.Set
	x     *mat.Dense
	y     []float64
	stats *inference.Stats
}

func newIFFModel(t testing.TB, f *features.IFF, kernel string, ls []float64, variance, noise float64, x *mat.Dense, y []float64) *iffModel {
	t.Helper()
	_, d := x.Dims()
	k, err := kernels.New(kernel, d, kernels.Options{Variance: variance, Lengthscales: ls, ARD: len(ls) > 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckKernel(k); err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "kern."); err != nil {
		t.Fatal(err)
	}
	if err := s.AddScalar("noise", noise, param.DefaultPositive); err != nil {
		t.Fatal(err)
	}
	stats, err := inference.ComputeStats(x, y, f.M(), inference.Allocating(f.Phi))
	if err != nil {
		t.Fatal(err)
	}
	return &iffModel{f: f, k: k, set: s, x: x, y: y, stats: stats}
}

// fromStats is 𝔉̂ in O(M³) from the statistics.
func (m *iffModel) fromStats(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.k.Bind(b, "kern.").(kernels.SpectralBound)
	prec := precisionOf(m.f.Bind(b, ""), kb)
	kd := ad.Scale(float64(m.stats.N), kb.Variance())
	out, _, err := inference.CollapsedFromStats(m.stats, inference.Kuu{Precision: prec}, kd, b.Get("noise"), inference.Options{})
	return out, err
}

// direct is the same bound through the O(NM²) SGPR path.
func (m *iffModel) direct(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
	out, _, err := inference.SGPR(m.k.Bind(b, "kern."), m.f.Bind(b, ""), tape.Const(m.x), m.y, b.Get("noise"), inference.Options{})
	return out, err
}

func (m *iffModel) exact(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
	out, _, err := inference.ExactLML(m.k.Bind(b, "kern."), tape.Const(m.x), m.y, b.Get("noise"), inference.Options{})
	return out, err
}

func eval(t testing.TB, s *param.Set, f func(*ad.Tape, *param.Bound) (*ad.Node, error)) float64 {
	t.Helper()
	tape := ad.NewTape()
	out, err := f(tape, s.Bind(tape))
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar()
}

// sampleGP draws y ~ N(0, K + σ²I) with the kernel's current parameters.
func sampleGP(t testing.TB, rng *rand.Rand, k kernels.Kernel, s *param.Set, x *mat.Dense, noise float64) []float64 {
	t.Helper()
	n, _ := x.Dims()
	kx := kernels.Matrix(k, s, "kern.", x, x)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, kx.At(i, j))
		}
		sym.SetSym(i, i, kx.At(i, i)+noise)
	}
	var c mat.Cholesky
	if !c.Factorize(sym) {
		t.Fatal("prior covariance not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	z := mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		z.SetVec(i, rng.NormFloat64())
	}
	var y mat.VecDense
	y.MulVec(&l, z)
	return y.RawVector().Data
}

func uniform(rng *rand.Rand, n, d int, lo, hi float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, lo+(hi-lo)*rng.Float64())
		}
	}
	return x
}

// seDensity is the SE spectral density written independently of package
// kernels: S(ξ) = σ² (2π)^{D/2} Πℓ exp(−2π² Σ ℓ²ξ²).
func seDensity(xi []float64, variance float64, ls []float64) float64 {
	s := variance * math.Pow(2*math.Pi, float64(len(xi))/2)
	q := 0.0
	for d, l := range ls {
		s *= l
		q += l * l * xi[d] * xi[d]
	}
	return s * math.Exp(-2*math.Pi*math.Pi*q)
}

// Φᵀ Kuu⁻¹ Φ must be the regular-grid sparse-spectrum kernel
// ε_vol Σ_{z in the full symmetric grid} S(z) cos(2π zᵀ(x − x')).
func TestIFFQffIsGridSparseSpectrum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		perDim []int
		eps    []float64
		mask   bool
		ls     []float64
	}{
		{"1-D", []int{7}, []float64{0.11}, false, []float64{0.9}},
		{"2-D masked", []int{5, 4}, []float64{0.13, 0.2}, true, []float64{0.7, 1.3}},
		{"3-D", []int{2, 3, 2}, []float64{0.2, 0.15, 0.3}, false, []float64{1, 0.8, 1.2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := features.NewIFF(tc.perDim, tc.eps, tc.mask)
			if err != nil {
				t.Fatal(err)
			}
			d := len(tc.perDim)
			x := uniform(rng, 6, d, -3, 3)
			m := newIFFModel(t, f, "se", tc.ls, 1.7, 0.1, x, make([]float64, 6))
			phi, err := f.Phi(x)
			if err != nil {
				t.Fatal(err)
			}
			tape := ad.NewTape()
			prec := precisionOf(f.Bind(nil, ""), m.k.Bind(m.set.Bind(tape), "kern.")).Value()
			freqs := f.Frequencies()
			k, _ := freqs.Dims()
			if f.M() != k<<d {
				t.Fatalf("M = %d, want %d·2^%d", f.M(), k, d)
			}
			for i := 0; i < 6; i++ {
				for j := 0; j < 6; j++ {
					got := 0.0
					for r := 0; r < f.M(); r++ {
						got += phi.At(r, i) * prec.At(r, 0) * phi.At(r, j)
					}
					want := 0.0
					for q := 0; q < k; q++ {
						z := freqs.RawRowView(q)
						s := f.EpsVolume() * seDensity(z, 1.7, tc.ls)
						for signs := 0; signs < 1<<d; signs++ {
							arg := 0.0
							for dd := 0; dd < d; dd++ {
								zd := z[dd]
								if signs>>dd&1 == 1 {
									zd = -zd
								}
								arg += zd * (x.At(i, dd) - x.At(j, dd))
							}
							want += s * math.Cos(2*math.Pi*arg)
						}
					}
					if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
						t.Errorf("Qff[%d,%d] = %.15g, sparse-spectrum sum %.15g", i, j, got, want)
					}
				}
			}
		})
	}
}

// Once the grid covers the spectrum, Φᵀ Kuu⁻¹ Φ on the half-offset grid
// (j + ½)ε is, by Poisson summation, the anti-periodised kernel
// Π_d Σ_n (−1)ⁿ k_d(τ_d − n/ε_d) (SE is a product over dimensions). This is
// what puts a floor under IFF's 2-D synthetic gap (paper_configs/iff.toml,
// grids iff-2d-eps*): with ε = 0.95/W on a width of 5 lengthscales, points
// at opposite edges (τ ≈ 5) get ≈ −k(1/ε − 5) ≈ −0.97 instead of ≈ 0, and
// more frequencies do not change it; a smaller ε W does.
func TestIFFKernelWrapsAroundAtOneOverEps(t *testing.T) {
	const variance = 1.3
	for _, tc := range []struct {
		name   string
		eps    []float64
		perDim []int
		ls     []float64
		tau    []float64 // x − x'
		approx float64   // the expected value to a few digits, from the image sum
	}{
		// W = 5, ε = 0.95/W: 1/ε = 5.263, the n = 1 image at −0.263.
		{"1-D, opposite edges, ε W = 0.95", []float64{0.19}, []int{12}, []float64{1}, []float64{5}, -variance * math.Exp(-0.263158*0.263158/2)},
		// ε = 0.5/W: 1/ε = 10, τ = 1/(2ε) is where k(τ) and −k(τ − 1/ε) cancel.
		{"1-D, opposite edges, ε W = 0.5", []float64{0.1}, []int{22}, []float64{1}, []float64{5}, 0},
		// 1.5 apart: k(1.5) less the n = 1 image k(1.5 − 5.263) = e^{−7.08}.
		{"1-D, inside", []float64{0.19}, []int{12}, []float64{1}, []float64{1.5}, variance * (math.Exp(-1.125) - math.Exp(-3.763158*3.763158/2))},
		{"2-D, corner to corner, ε W = 0.95", []float64{0.19, 0.19}, []int{12, 12}, []float64{1, 1}, []float64{5, -5}, variance * math.Exp(-0.263158*0.263158)},
		{"2-D, edge to edge, ARD", []float64{0.19, 0.25}, []int{12, 10}, []float64{1, 0.8}, []float64{5, 0.3}, -variance * math.Exp(-0.263158*0.263158/2-0.3*0.3/(2*0.64))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := len(tc.eps)
			f, err := features.NewIFF(tc.perDim, tc.eps, false)
			if err != nil {
				t.Fatal(err)
			}
			x := mat.NewDense(2, d, nil)
			for j, v := range tc.tau {
				x.Set(0, j, 0.5*v)
				x.Set(1, j, -0.5*v)
			}
			m := newIFFModel(t, f, "se", tc.ls, variance, 0.1, x, make([]float64, 2))
			phi, err := f.Phi(x)
			if err != nil {
				t.Fatal(err)
			}
			prec := precisionOf(f.Bind(nil, ""), m.k.Bind(m.set.Bind(ad.NewTape()), "kern.")).Value()
			got := 0.0
			for r := 0; r < f.M(); r++ {
				got += phi.At(r, 0) * prec.At(r, 0) * phi.At(r, 1)
			}
			want := variance
			for j, tau := range tc.tau {
				sum := 0.0
				for n := -4; n <= 4; n++ {
					u := (tau - float64(n)/tc.eps[j]) / tc.ls[j]
					sum += math.Pow(-1, float64(n)) * math.Exp(-u*u/2)
				}
				want *= sum
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("Qff(τ = %v) = %.12g, image sum Σ(−1)ⁿ k(τ − n/ε) = %.12g", tc.tau, got, want)
			}
			if math.Abs(want-tc.approx) > 1e-3*math.Max(math.Abs(tc.approx), 1e-3) {
				t.Errorf("image sum %.6g, expected about %.6g", want, tc.approx)
			}
		})
	}
}

// The midpoint sum ε_vol Σ_grid S(z) converges to ∫S = k(0) (spec §6.1).
func TestIFFMidpointSumApproachesVariance(t *testing.T) {
	for _, kern := range []string{"se", "matern52", "matern32"} {
		for _, d := range []int{1, 2} {
			prevErr := math.Inf(1)
			for _, cover := range []float64{2, 4, 8} {
				// Mε = cover/ℓ bandwidth, ε = 0.05.
				per := int(cover / 0.05)
				perDim := make([]int, d)
				eps := make([]float64, d)
				for i := range perDim {
					perDim[i], eps[i] = per, 0.05
				}
				f, err := features.NewIFF(perDim, eps, false)
				if err != nil {
					t.Fatal(err)
				}
				k, _ := kernels.New(kern, d, kernels.Options{Variance: 2})
				s := param.NewSet()
				_ = k.Declare(s, "")
				tape := ad.NewTape()
				prec := precisionOf(f.Bind(nil, ""), k.Bind(s.Bind(tape), ""))
				sum := 0.0
				for _, v := range prec.Value().RawMatrix().Data {
					sum += v
				}
				e := math.Abs(sum - 2)
				if e >= prevErr && prevErr > 1e-12 { // SE converges to rounding already at Mε = 2
					t.Errorf("%s D=%d Mε=%v: |Σ − k(0)| = %.3g did not shrink (previous %.3g)", kern, d, cover, e, prevErr)
				}
				prevErr = e
			}
			tol := map[string]float64{"se": 1e-6, "matern52": 5e-3, "matern32": 3e-2}[kern]
			if prevErr > tol*2 {
				t.Errorf("%s D=%d: midpoint sum misses k(0) = 2 by %.3g at Mε = 8", kern, d, prevErr)
			}
		}
	}
}

// The spec's §7 setting: 𝔉̂ is within ~1e-3·N of the exact log marginal
// likelihood at the true hyperparameters when Mε covers the bandwidth, far
// below it when the bandwidth is not covered, and the gap shrinks as M grows.
func TestIFFBoundAgainstExactLML(t *testing.T) {
	rng := rand.New(rand.NewPCG(250, 1))
	const n = 250
	x := uniform(rng, n, 1, -12.5, 12.5)
	eps, err := features.IFFEpsilon(x, features.DefaultIFFEpsilonFactor)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := kernels.New("se", 1, kernels.Options{})
	s := param.NewSet()
	_ = k.Declare(s, "kern.")
	y := sampleGP(t, rng, k, s, x, 0.5)

	gap := func(perDim int, ls float64) float64 {
		f, err := features.NewIFF([]int{perDim}, eps, false)
		if err != nil {
			t.Fatal(err)
		}
		m := newIFFModel(t, f, "se", []float64{ls}, 1, 0.5, x, y)
		return eval(t, m.set, m.exact) - eval(t, m.set, m.fromStats)
	}
	// M = 40 real features (20 positive frequencies, Mε ≈ 0.76 ≥ the SE
	// bandwidth at ℓ = 1): |L − 𝔉̂|/N ≈ 1e-3 in the spec.
	g1, g05 := gap(20, 1), gap(20, 0.5)
	t.Logf("(L − 𝔉̂)/N: ℓ = 1: %.4g; ℓ = 0.5: %.4g (gap %.3g)", g1/n, g05/n, g05)
	if g := g1; math.Abs(g)/n > 3e-3 {
		t.Errorf("ℓ = 1, M = 40: (L − 𝔉̂)/N = %.4g, want |·| ≤ 3e-3", g/n)
	}
	if g := g05; g < 1 {
		t.Errorf("ℓ = 0.5, M = 40 (bandwidth not covered): L − 𝔉̂ = %.4g, want > 1", g)
	}
	prev := math.Inf(1)
	for _, per := range []int{4, 8, 12, 16} {
		g := math.Abs(gap(per, 1))
		if g >= prev {
			t.Errorf("M = %d: |L − 𝔉̂| = %.4g did not shrink (previous %.4g)", 2*per, g, prev)
		}
		prev = g
	}
}

// 𝔉̂ is a true lower bound exactly when the grid's kernel does not wrap
// around on the data. By Poisson summation Φᵀ Kuu⁻¹ Φ on the half-offset grid
// is Σ_n (−1)ⁿ k(τ − n/ε) minus the PSD spectral mass R beyond the grid. If
// the data range is many lengthscales below 1/ε only n = 0 survives, 𝔉̂ is
// Titsias' bound for Q = K − R, and 𝔉̂ ≤ L for every y. With the range within
// about a lengthscale of 1/ε (the spec's §7 check: width 25, ε = 0.95/range)
// the images n = ±1 add spurious anti-correlation between the ends, and
// L − 𝔉̂ becomes a small log-likelihood ratio of either sign.
func TestIFFHatIsABoundOnlyWithoutWrapAround(t *testing.T) {
	const n, draws = 250, 10
	k, _ := kernels.New("se", 1, kernels.Options{})
	s := param.NewSet()
	_ = k.Declare(s, "kern.")
	for _, tc := range []struct {
		name         string
		factor       float64 // ε = factor / range
		perDim       int     // same bandwidth Mε ≈ 0.76 in both cases
		wantNegative bool    // some draw has 𝔉̂ > L
	}{
		{"wrap-around (spec §7)", 0.95, 20, true},
		{"no wrap-around", 0.5, 38, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			minGap := math.Inf(1)
			for range draws {
				x := uniform(rng, n, 1, -12.5, 12.5)
				y := sampleGP(t, rng, k, s, x, 0.5)
				eps, err := features.IFFEpsilon(x, tc.factor)
				if err != nil {
					t.Fatal(err)
				}
				f, err := features.NewIFF([]int{tc.perDim}, eps, false)
				if err != nil {
					t.Fatal(err)
				}
				m := newIFFModel(t, f, "se", []float64{1}, 1, 0.5, x, y)
				minGap = math.Min(minGap, (eval(t, m.set, m.exact)-eval(t, m.set, m.fromStats))/n)
			}
			t.Logf("smallest (L − 𝔉̂)/N over %d draws: %.3g", draws, minGap)
			switch {
			case tc.wantNegative && minGap > -1e-5:
				t.Errorf("smallest (L − 𝔉̂)/N = %.3g; want some draw with 𝔉̂ > L (below −1e-5)", minGap)
			case !tc.wantNegative && minGap < -1e-10:
				t.Errorf("smallest (L − 𝔉̂)/N = %.3g; without wrap-around 𝔉̂ must not exceed L", minGap)
			}
		})
	}
}

// The O(M³) bound from statistics equals the O(NM²) SGPR formula on the same
// features, and its gradient matches finite differences.
func TestIFFStatsEqualsDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		kernel string
		d      int
		ls     []float64
		perDim []int
		mask   bool
	}{
		{"se", 1, []float64{0.7}, []int{12}, false},
		{"matern12", 1, []float64{0.5}, []int{10}, false},
		{"matern32", 2, []float64{0.6, 0.9}, []int{6, 5}, true},
		{"matern52", 2, []float64{0.8}, []int{5, 5}, false},
		{"se", 2, []float64{0.5, 1.1}, []int{6, 6}, true},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			x := uniform(rng, 60, tc.d, -2, 2)
			y := make([]float64, 60)
			for i := range y {
				y[i] = math.Sin(2*x.At(i, 0)) + 0.3*rng.NormFloat64()
			}
			eps, err := features.IFFEpsilon(x, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			f, err := features.NewIFF(tc.perDim, eps, tc.mask)
			if err != nil {
				t.Fatal(err)
			}
			m := newIFFModel(t, f, tc.kernel, tc.ls, 1.3, 0.2, x, y)
			got, want := eval(t, m.set, m.fromStats), eval(t, m.set, m.direct)
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("from stats %.12g, direct %.12g", got, want)
			}
			// Gradient against central differences in the unconstrained
			// parameters.
			x0 := m.set.Vector()
			tape := ad.NewTape()
			b := m.set.Bind(tape)
			out, err := m.fromStats(tape, b)
			if err != nil {
				t.Fatal(err)
			}
			tape.Backward(out)
			g := b.Gradient()
			wantG := fd.Gradient(nil, func(v []float64) float64 {
				m.set.SetVector(v)
				return eval(t, m.set, m.fromStats)
			}, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			m.set.SetVector(x0)
			for i := range g {
				if math.Abs(g[i]-wantG[i]) > 1e-6*math.Max(1, math.Abs(wantG[i])) {
					t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, g[i], wantG[i])
				}
			}
		})
	}
}

func TestIFFBadInput(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 1, 1, 1, 2, 1})
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"zero width", func() error { _, err := features.IFFEpsilon(x, 0.95); return err }, "zero width in dimension 1"},
		{"bad factor", func() error { _, err := features.IFFEpsilon(x, -1); return err }, "ε factor"},
		{"mismatch", func() error { _, err := features.NewIFF([]int{3, 3}, []float64{0.1}, false); return err }, "2 frequency counts and 1 spacings"},
		{"zero freqs", func() error { _, err := features.NewIFF([]int{0}, []float64{0.1}, false); return err }, "0 positive frequencies"},
		{"bad eps", func() error { _, err := features.NewIFF([]int{2}, []float64{math.Inf(1)}, false); return err }, "spacing"},
		{"mask too small", func() error {
			_, err := features.NewIFF([]int{1, 1, 1, 1, 1}, []float64{1, 1, 1, 1, 1}, true)
			return err
		}, "mask keeps no frequency"},
		{"non-spectral kernel", func() error {
			f, _ := features.NewIFF([]int{2}, []float64{0.1}, false)
			k, _ := kernels.New("periodic", 1, kernels.Options{})
			return f.CheckKernel(k)
		}, "se, matern12, matern32, matern52"},
		{"wrong columns", func() error {
			f, _ := features.NewIFF([]int{2}, []float64{0.1}, false)
			_, err := f.Phi(x)
			return err
		}, "2 columns"},
		{"non-finite input", func() error {
			f, _ := features.NewIFF([]int{2}, []float64{0.1}, false)
			_, err := f.Phi(mat.NewDense(1, 1, []float64{math.NaN()}))
			return err
		}, "not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// The mask keeps about π/4 of a 2-D grid and every point of a 1-D one.
func TestIFFMaskCount(t *testing.T) {
	f, err := features.NewIFF([]int{40, 40}, []float64{0.1, 0.1}, true)
	if err != nil {
		t.Fatal(err)
	}
	frac := float64(f.M()) / float64(4*40*40)
	if math.Abs(frac-math.Pi/4) > 0.02 {
		t.Errorf("mask keeps %.4f of the grid, want ≈ π/4", frac)
	}
	g, _ := features.NewIFF([]int{17}, []float64{0.1}, true)
	if g.M() != 34 {
		t.Errorf("1-D masked M = %d, want 34", g.M())
	}
}

// precisionOf is the precision diagonal of the IFF feature's Kuu structure.
func precisionOf(fb features.Bound, kb kernels.Bound) *ad.Node {
	s, err := features.StructureOf(kb, fb, 0, features.AllForms)
	if err != nil {
		panic(err)
	}
	if s.Precision == nil {
		panic("IFF Kuu structure is not a precision diagonal")
	}
	return s.Precision
}
