package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// benchModel declares an SE-ARD kernel, noise and inducing points on D = 8
// inputs.
func benchModel(b *testing.B, n, m int) (*param.Set, kernels.Kernel, *features.InducingPoints, *mat.Dense, []float64) {
	const d = 8
	rng := rand.New(rand.NewPCG(1, uint64(n+m)))
	x := testhelp.RandMat(rng, n, d, 1)
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	s, k, f := declareSE(b, d, 2, 0.1, testhelp.RandMat(rng, m, d, 1))
	return s, k, f, x, y
}

// declareSE declares an SE-ARD kernel (variance 1, lengthscale ls) on d
// inputs, the noise variance and inducing points z.
func declareSE(b *testing.B, d int, ls, noise float64, z *mat.Dense) (*param.Set, kernels.Kernel, *features.InducingPoints) {
	k, err := kernels.New("se", d, kernels.Options{ARD: true, Lengthscales: []float64{ls}, Variance: 1})
	if err != nil {
		b.Fatal(err)
	}
	s := param.NewSet()
	must(k.Declare(s, "k."))
	must(s.AddScalar("noise_variance", noise, param.DefaultPositive))
	f := features.NewInducingPoints(z)
	must(f.Declare(s, "f."))
	return s, k, f
}

// heapMB reports the live heap in MiB after a collection.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// samplePeak samples the heap every few milliseconds (without stopping the
// world) until the returned function is called, which reports the largest
// value seen in MiB. Garbage not yet collected counts, as it does for the
// process's footprint.
func samplePeak() func() float64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() float64 {
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64()) / (1 << 20)
	}
	done := make(chan struct{})
	result := make(chan float64)
	go func() {
		peak := read()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				result <- max(peak, read())
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-result
	}
}

// cpuSeconds is the user+system CPU time of the process so far: with
// other processes on the machine it measures the work of a benchmark
// better than wall time does (which it exceeds when several cores work).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkSGPR times one evaluation of the collapsed bound and its gradient
// with respect to all hyperparameters and Z, on the default path (Kuf in
// checkpointed chunks when N·M is large). GFLOP/s counts only the O(NM²)
// part: N·M² for Kuf Kfu (syrk) and 2·N·M² for its adjoint, over the whole
// evaluation's time. cpu-s is the CPU time per evaluation over all threads.
// live-MiB is the heap held by the tape after the backward pass, peak-MiB
// the largest heap seen during the first evaluation, garbage not yet
// collected included (both above the data's own footprint). -short skips
// N = 10⁵ with M = 1000. Select one size with an anchored pattern, e.g.
// -bench 'SGPR/N=10000$/M=500$' (N=10000 alone also matches N=100000).
func BenchmarkSGPR(b *testing.B) { benchSGPR(b, sgprChunkedAbove) }

// BenchmarkSGPRWhole is BenchmarkSGPR with Kuf always recorded whole (the
// path of every feature but inducing points): faster by one kernel
// evaluation, with several N×M matrices on the tape.
func BenchmarkSGPRWhole(b *testing.B) { benchSGPR(b, math.MaxInt) }

func benchSGPR(b *testing.B, chunkedAbove int) {
	defer func(v int) { sgprChunkedAbove = v }(sgprChunkedAbove)
	sgprChunkedAbove = chunkedAbove
	for _, n := range []int{10_000, 100_000} {
		for _, m := range []int{100, 500, 1000} {
			b.Run(fmt.Sprintf("N=%d/M=%d", n, m), func(b *testing.B) {
				if testing.Short() && n == 100_000 && m == 1000 {
					b.Skip("largest case skipped with -short")
				}
				s, k, f, x, y := benchModel(b, n, m)
				base := heapMB()
				live, peak := 0.0, 0.0
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					var stop func() float64
					if i == 0 {
						stop = samplePeak()
					}
					t := ad.NewTape()
					bd := s.Bind(t)
					out, _, err := SGPR(k.Bind(bd, "k."), f.Bind(bd, "f."), t.Const(x), y, bd.Get("noise_variance"), Options{Jitter: DefaultJitter})
					if err != nil {
						b.Fatal(err)
					}
					t.Backward(out)
					_ = bd.Gradient()
					if i == 0 {
						runtime.KeepAlive(t)
						b.StopTimer()
						peak = stop() - base
						live = heapMB() - base // the tape is still live here
						b.StartTimer()
						runtime.KeepAlive(t)
					}
				}
				cpu := (cpuSeconds() - cpu0) / float64(b.N)
				flops := 3 * float64(n) * float64(m) * float64(m)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(cpu, "cpu-s")
				b.ReportMetric(live, "live-MiB")
				b.ReportMetric(peak, "peak-MiB")
			})
		}
	}
}

// BenchmarkSGPRGram times the O(NM²) part alone, as the bound records it:
// Kuf Kfu and Kuf y forward and their adjoint backward (3·N·M² flops), on
// a fixed Kuf. Its GFLOP/s is the rate to hold against linalg's
// BenchmarkDgemm for the same shapes.
func BenchmarkSGPRGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{10_000, 100_000} {
		for _, m := range []int{100, 500, 1000} {
			b.Run(fmt.Sprintf("N=%d/M=%d", n, m), func(b *testing.B) {
				if testing.Short() && n == 100_000 {
					b.Skip("N = 10⁵ skipped with -short")
				}
				kuf := testhelp.RandMat(rng, m, n, 1)
				y := testhelp.RandMat(rng, n, 1, 1).RawMatrix().Data
				w := testhelp.RandMat(rng, m, m+1, 1)
				b.ResetTimer()
				cpu0 := cpuSeconds()
				for b.Loop() {
					t := ad.NewTape()
					a := t.Var(kuf)
					g, av := gramVec(a, y, nil)
					t.Backward(ad.Dot(ad.HCat(g, av), t.Const(w)))
				}
				b.ReportMetric(3*float64(n)*float64(m)*float64(m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s")
			})
		}
	}
}

// BenchmarkSVGP times one minibatch ELBO and its gradient (B = 1000,
// whitened, Gaussian likelihood, N = 10⁵ for the scaling).
func BenchmarkSVGP(b *testing.B) {
	for _, m := range []int{100, 500} {
		b.Run(fmt.Sprintf("B=1000/M=%d", m), func(b *testing.B) {
			s, k, f, x, y := benchModel(b, 1000, m)
			declareQ(s, mat.NewDense(m, 1, nil), 1)
			lik := likelihoods.NewGaussian(1)
			yc := column(y)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := ad.NewTape()
				bd := s.Bind(t)
				ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bd, "", mu, v, yc) }
				q := Variational{Mu: bd.Get("q_mu"), Sqrt: bd.Get("q_sqrt"), Whiten: true}
				out, _, err := SVGP(k.Bind(bd, "k."), f.Bind(bd, "f."), t.Const(x), ve, q, 100_000, Options{Jitter: DefaultJitter})
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
				_ = bd.Gradient()
			}
		})
	}
}

// BenchmarkExact times the exact log marginal likelihood and its gradient at
// N = 2000.
func BenchmarkExact(b *testing.B) {
	s, k, _, x, y := benchModel(b, 2000, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := ad.NewTape()
		bd := s.Bind(t)
		out, _, err := ExactLML(k.Bind(bd, "k."), t.Const(x), y, bd.Get("noise_variance"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t.Backward(out)
		_ = bd.Gradient()
	}
}
