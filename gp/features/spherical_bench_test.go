package features_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
	"sgplab/methods"
)

// airlineShaped is a synthetic stand-in with the shape of the VISH
// airline inputs (labelled synthetic everywhere it is used): 8 columns
// like month, day of month, day of week, plane age, air time, distance,
// arrival and departure time, standardised, and a smooth target plus
// noise. It is not the airline data.
func airlineShaped(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 2008))
	x := mat.NewDense(n, 8, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		row[0] = float64(1 + rng.IntN(4))
		row[1] = float64(1 + rng.IntN(31))
		row[2] = float64(1 + rng.IntN(7))
		row[3] = 50 * rng.Float64() * rng.Float64()
		row[4] = 30 + 300*rng.ExpFloat64()/3
		row[5] = 8 * row[4] * (0.8 + 0.4*rng.Float64())
		row[6] = 1440 * rng.Float64()
		row[7] = math.Mod(row[6]-row[4]+1440, 1440)
	}
	// Standardise with the sample's moments (as the paper's pipeline).
	for j := 0; j < 8; j++ {
		var s, s2 float64
		for i := 0; i < n; i++ {
			v := x.At(i, j)
			s += v
			s2 += v * v
		}
		mu := s / float64(n)
		sd := math.Sqrt(s2/float64(n) - mu*mu)
		for i := 0; i < n; i++ {
			x.Set(i, j, (x.At(i, j)-mu)/sd)
		}
	}
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		y[i] = math.Sin(r[6]) + 0.3*r[3] - 0.2*r[4]*r[0] + rng.NormFloat64()
	}
	return x, y
}

// vishBench returns the Matérn-3/2 spectral kernel on 8 inputs (d = 9) and
// the harmonics of levels 0…maxLevel (M = 210 for 3, 660 for 4).
func vishBench(b testing.TB, maxLevel int) (kernels.Kernel, *param.Set, *features.SphericalHarmonics) {
	k, err := kernels.New("sphere-matern32", 8, kernels.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := param.NewSet()
	_ = k.Declare(s, "kern.")
	_ = s.AddScalar("noise", 0.5, param.DefaultPositive)
	f, err := features.NewSphericalHarmonicsFor(k.Bind(s.Bind(ad.NewTape()), "kern.").(kernels.ZonalBound), maxLevel)
	if err != nil {
		b.Fatal(err)
	}
	return k, s, f
}

// BenchmarkVISHHarmonics is the hot loop of the precompute: Kuf = ρΦ(x̂)
// for a chunk of 10 000 points (d = 9), beside the symmetric rank-k update
// ΦΦᵀ of the same chunk, the other half of the O(NM²) pass. Compare the
// two ns/op: the harmonics should cost a small fraction of the dsyrk.
func BenchmarkVISHHarmonics(b *testing.B) {
	const n = 10000
	x, _ := airlineShaped(n, 1)
	for _, L := range []int{3, 4} {
		k, s, f := vishBench(b, L)
		kb := k.Bind(s.Bind(ad.NewTape()), "kern.").(kernels.ZonalBound)
		b.Run(fmt.Sprintf("eval/M=%d", f.M()), func(b *testing.B) {
			for b.Loop() {
				if _, err := f.Phi(nil, kb, x); err != nil {
					b.Fatal(err)
				}
			}
		})
		phi, _ := f.Phi(nil, kb, x)
		m := f.M()
		p := make([]float64, m*m)
		b.Run(fmt.Sprintf("syrk/M=%d", m), func(b *testing.B) {
			for b.Loop() {
				blas64.Syrk(blas.NoTrans, 1, phi.RawMatrix(), 0, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: p})
			}
		})
	}
}

// BenchmarkVISHPrecompute is the once-only O(NM²) pass (ΦΦᵀ, Φy, yᵀy,
// Σρ²) on the airline-shaped synthetic set, N = 10⁶ and 5.9·10⁶, M = 210
// and 660. The data are generated outside the timer. Run with
// -benchtime=1x: one pass at N = 5.9·10⁶ is the paper's whole setting.
func BenchmarkVISHPrecompute(b *testing.B) {
	for _, n := range []int{1_000_000, 5_929_413} {
		x, y := airlineShaped(n, 7)
		for _, L := range []int{3, 4} {
			k, s, f := vishBench(b, L)
			kb := k.Bind(s.Bind(ad.NewTape()), "kern.").(kernels.ZonalBound)
			b.Run(fmt.Sprintf("N=%d/M=%d", n, f.M()), func(b *testing.B) {
				for b.Loop() {
					if _, err := inference.ComputeStats(x, y, f.M(), func(dst, xc *mat.Dense) (*mat.Dense, error) { return f.Phi(dst, kb, xc) }); err != nil {
						b.Fatal(err)
					}
					_ = kernels.DiagSum(ad.NewTape(), kb, x)
				}
			})
		}
	}
}

// BenchmarkVISHStep is one evaluation of the collapsed bound and its
// gradient from the statistics: O(M³), independent of N.
func BenchmarkVISHStep(b *testing.B) {
	x, y := airlineShaped(20000, 3)
	for _, L := range []int{3, 4} {
		k, s, f := vishBench(b, L)
		kb0 := k.Bind(s.Bind(ad.NewTape()), "kern.").(kernels.ZonalBound)
		stats, err := inference.ComputeStats(x, y, f.M(), func(dst, xc *mat.Dense) (*mat.Dense, error) { return f.Phi(dst, kb0, xc) })
		if err != nil {
			b.Fatal(err)
		}
		sumR2 := kernels.DiagSum(ad.NewTape(), kb0, x).Scalar()
		b.Run(fmt.Sprintf("M=%d", f.M()), func(b *testing.B) {
			for b.Loop() {
				t := ad.NewTape()
				bs := s.Bind(t)
				kb := k.Bind(bs, "kern.").(kernels.ZonalBound)
				kuu, err := features.StructureOf(kb, f.Bind(bs, ""), 0, features.AllForms)
				if err != nil {
					b.Fatal(err)
				}
				out, _, err := inference.CollapsedFromStats(stats, kuu, ad.Scale(sumR2, kb.ShapeAtOne()), bs.Get("noise"), inference.Options{})
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
			}
		})
	}
}

// BenchmarkVISHSVGPStep is one minibatch (B = 1000) SVGP ELBO and gradient:
// VISH (diagonal Kuu, whitened: no O(M³) term) beside inducing-point SVGP
// with the same M (Cholesky of Kuu every step).
func BenchmarkVISHSVGPStep(b *testing.B) {
	x, y := airlineShaped(1000, 5)
	ycol := mat.NewDense(1000, 1, y)
	lik := likelihoods.NewGaussian(0.5)
	for _, L := range []int{3, 4} {
		k, s, f := vishBench(b, L)
		m := f.M()
		_ = lik.Declare(s, "")
		_ = s.Add("q_mu", mat.NewDense(m, 1, nil), param.Identity{})
		sq := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			sq.Set(i, i, 1)
		}
		_ = s.Add("q_sqrt", sq, param.Identity{})
		run := func(b *testing.B, kern kernels.Kernel, feat features.Feature, set *param.Set) {
			for b.Loop() {
				t := ad.NewTape()
				bs := set.Bind(t)
				ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bs, "", mu, v, ycol) }
				q := inference.Variational{Mu: bs.Get("q_mu"), Sqrt: bs.Get("q_sqrt"), Whiten: true}
				out, _, err := inference.SVGP(kern.Bind(bs, "kern."), feat.Bind(bs, "feat."), t.Const(x), ve, q, 5_929_413, inference.Options{})
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
			}
		}
		b.Run(fmt.Sprintf("vish/M=%d", m), func(b *testing.B) { run(b, k, f, s) })
		// Inducing points: a Matérn-3/2 ARD kernel, Z from the data.
		kp, _ := kernels.New("matern32", 8, kernels.Options{ARD: true})
		sp := param.NewSet()
		_ = kp.Declare(sp, "kern.")
		_ = lik.Declare(sp, "")
		z := mat.DenseCopyOf(x.Slice(0, m, 0, 8))
		pts := &features.InducingPoints{Z: z}
		_ = pts.Declare(sp, "feat.")
		_ = sp.Add("q_mu", mat.NewDense(m, 1, nil), param.Identity{})
		_ = sp.Add("q_sqrt", mat.DenseCopyOf(sq), param.Identity{})
		b.Run(fmt.Sprintf("points/M=%d", m), func(b *testing.B) { run(b, kp, pts, sp) })
	}
}

// BenchmarkActivatedSVGP is one full-batch SVGP ELBO and gradient with
// activation features: N = 10⁴, D = 8, M = 128 softplus units, L = 6,
// the arc-cosine kernel, directions and weights trained.
func BenchmarkActivatedSVGP(b *testing.B) {
	x, y := airlineShaped(10000, 9)
	ycol := mat.NewDense(len(y), 1, y)
	k, _ := kernels.New("arccos1", 8, kernels.Options{})
	s := param.NewSet()
	_ = k.Declare(s, "kern.")
	lik := likelihoods.NewGaussian(0.5)
	_ = lik.Declare(s, "")
	const m = 128
	z := mat.NewDense(m, 9, nil)
	for i := 0; i < m; i++ {
		copy(z.RawRowView(i), x.RawRowView(i))
		z.Set(i, 8, 1)
	}
	f, err := features.NewActivation("softplus", z, 6)
	if err != nil {
		b.Fatal(err)
	}
	_ = f.Declare(s, "feat.")
	_ = s.Add("q_mu", mat.NewDense(m, 1, nil), param.Identity{})
	sq := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		sq.Set(i, i, 1)
	}
	_ = s.Add("q_sqrt", sq, param.Identity{})
	for b.Loop() {
		t := ad.NewTape()
		bs := s.Bind(t)
		ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bs, "", mu, v, ycol) }
		q := inference.Variational{Mu: bs.Get("q_mu"), Sqrt: bs.Get("q_sqrt")}
		out, _, err := inference.SVGP(k.Bind(bs, "kern."), f.Bind(bs, "feat."), t.Const(x), ve, q, len(y), inference.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t.Backward(out)
	}
}

// BenchmarkVISHEndToEnd is the VISH airline protocol on the airline-shaped
// synthetic set (N = 5.9·10⁶, 2/3 train, 1/3 test, d = 9): method vish,
// collapsed, M = 210 or 660, weights fixed, 100 L-BFGS iterations, then
// predictions at the test inputs; data generation is outside the timer.
// The paper's GPU time for the whole is 41.3 s (M = 210), 160.8 s (660).
func BenchmarkVISHEndToEnd(b *testing.B) {
	const n = 5_929_413
	x, y := airlineShaped(n, 11)
	ntr := 2 * n / 3
	train := gp.Data{X: x.Slice(0, ntr, 0, 8).(*mat.Dense), Y: y[:ntr]}
	test := x.Slice(ntr, n, 0, 8).(*mat.Dense)
	for _, L := range []int64{3, 4} {
		b.Run(fmt.Sprintf("max_level=%d", L), func(b *testing.B) {
			for b.Loop() {
				m, err := methods.Build("vish", map[string]any{"max_level": L, "noise_variance": 0.5})
				if err != nil {
					b.Fatal(err)
				}
				res, err := m.Fit(context.Background(), train, methods.FitOptions{Iterations: 100}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Predict(test); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(res.Extra["precompute_seconds"], "precompute-s")
				b.ReportMetric(float64(res.Iterations), "iterations")
			}
		})
	}
}
