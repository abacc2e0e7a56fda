package features_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// benchData is a 2-D regression problem on [−2.5, 2.5]² (the IFF paper's
// synthetic width), y a smooth function plus noise.
func benchData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := uniform(rng, n, 2, -2.5, 2.5)
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(3*x.At(i, 0))*math.Cos(2*x.At(i, 1)) + 0.5*rng.NormFloat64()
	}
	return x, y
}

// benchIFF returns IFF features with about m features on x (2-D, masked).
func benchIFF(b *testing.B, x *mat.Dense, m int) *features.IFF {
	eps, err := features.IFFEpsilon(x, features.DefaultIFFEpsilonFactor)
	if err != nil {
		b.Fatal(err)
	}
	// 4·(π/4)·per² ≈ m.
	per := int(math.Round(math.Sqrt(float64(m) / math.Pi)))
	f, err := features.NewIFF([]int{per, per}, eps, true)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

var (
	bigStatsOnce sync.Once
	bigStats     *inference.Stats
	bigFeat      *features.IFF
)

// statsFor returns the statistics of ~1000 IFF features on n points; the
// N = 10⁶ case is computed once per process (it is the precompute benchmark).
func statsFor(b *testing.B, n int) (*inference.Stats, *features.IFF) {
	x, y := benchData(n, 1)
	if n == 1_000_000 {
		bigStatsOnce.Do(func() {
			bigFeat = benchIFF(b, x, 1000)
			s, err := inference.ComputeStats(x, y, bigFeat.M(), inference.Allocating(bigFeat.Phi))
			if err != nil {
				b.Fatal(err)
			}
			bigStats = s
		})
		return bigStats, bigFeat
	}
	f := benchIFF(b, x, 1000)
	s, err := inference.ComputeStats(x, y, f.M(), inference.Allocating(f.Phi))
	if err != nil {
		b.Fatal(err)
	}
	return s, f
}

func iffStep(b *testing.B, s *inference.Stats, f *features.IFF) {
	k, _ := kernels.New("se", 2, kernels.Options{Lengthscales: []float64{0.2}, ARD: true})
	set := param.NewSet()
	_ = k.Declare(set, "kern.")
	_ = set.AddScalar("noise", 1, param.DefaultPositive)
	for i := 0; i < b.N; i++ {
		tape := ad.NewTape()
		bd := set.Bind(tape)
		kb := k.Bind(bd, "kern.").(kernels.SpectralBound)
		prec := precisionOf(f.Bind(bd, ""), kb)
		out, _, err := inference.CollapsedFromStats(s, inference.Kuu{Precision: prec},
			ad.Scale(float64(s.N), kb.Variance()), bd.Get("noise"), inference.Options{})
		if err != nil {
			b.Fatal(err)
		}
		tape.Backward(out)
		_ = bd.Gradient()
	}
}

// BenchmarkIFFObjectiveGrad is one 𝔉̂ + gradient evaluation at M ≈ 1000: its
// time must not depend on N. N = 10⁶ needs the precompute first and is
// skipped with -short.
func BenchmarkIFFObjectiveGrad(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("N = 10⁶ precompute skipped with -short")
			}
			s, f := statsFor(b, n)
			b.ReportMetric(float64(f.M()), "M")
			b.ResetTimer()
			iffStep(b, s, f)
		})
	}
}

// BenchmarkIFFPrecompute is ComputeStats (Φ, ΦΦᵀ, Φy) at M ≈ 1000, beside
// one dgemm of the same size (Φ Φᵀ with Φ M×N) for comparison.
func BenchmarkIFFPrecompute(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		x, y := benchData(n, 1)
		f := benchIFF(b, x, 1000)
		b.Run(fmt.Sprintf("stats/N=%d", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("N = 10⁶ skipped with -short")
			}
			b.ReportMetric(float64(f.M()), "M")
			for i := 0; i < b.N; i++ {
				if _, err := inference.ComputeStats(x, y, f.M(), inference.Allocating(f.Phi)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("dgemm/N=%d", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("N = 10⁶ skipped with -short")
			}
			// Φ in chunks of 10⁴ columns, like the precompute, so memory
			// stays bounded; the flops are those of one M×N by N×M dgemm.
			phi, _ := f.Phi(mat.DenseCopyOf(x.Slice(0, 10_000, 0, 2)))
			m := f.M()
			acc := mat.NewDense(m, m, nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for lo := 0; lo < n; lo += 10_000 {
					acc.Mul(phi, phi.T())
				}
			}
		})
	}
}

// BenchmarkIFFvsSGPRStep is the time per optimiser step (objective +
// gradient) at equal M on N = 10⁵, D = 2: IFF from its statistics against
// SGPR with inducing points (O(NM²) per step).
func BenchmarkIFFvsSGPRStep(b *testing.B) {
	const n = 100_000
	x, y := benchData(n, 2)
	f := benchIFF(b, x, 400)
	m := f.M()
	b.Run(fmt.Sprintf("iff/M=%d", m), func(b *testing.B) {
		s, err := inference.ComputeStats(x, y, m, inference.Allocating(f.Phi))
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		iffStep(b, s, f)
	})
	b.Run(fmt.Sprintf("sgpr/M=%d", m), func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 5))
		z := uniform(rng, m, 2, -2.5, 2.5)
		k, _ := kernels.New("se", 2, kernels.Options{Lengthscales: []float64{0.2}, ARD: true})
		set := param.NewSet()
		_ = k.Declare(set, "kern.")
		_ = set.AddScalar("noise", 1, param.DefaultPositive)
		feat := features.NewInducingPoints(z)
		feat.Fixed = true
		_ = feat.Declare(set, "")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			tape := ad.NewTape()
			bd := set.Bind(tape)
			out, _, err := inference.SGPR(k.Bind(bd, "kern."), feat.Bind(bd, ""), tape.Const(x), y, bd.Get("noise"), inference.Options{Jitter: inference.DefaultJitter})
			if err != nil {
				b.Fatal(err)
			}
			tape.Backward(out)
			_ = bd.Gradient()
		}
	})
}
