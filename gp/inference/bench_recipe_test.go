package inference

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/trace"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/linalg"
	"sgplab/gp/param"
)

// The reference recipe, for comparing with other libraries: X ~ N(0, I₈)
// (PCG seed 1, 2), y = Σ_d sin(x_d) + 0.1·ε, Z = the first M rows of X,
// SE-ARD kernel with lengthscale 1.5 and variance 1, noise variance 0.01.
// Each benchmark times one objective and its gradient with respect to
// every hyperparameter, Z and (SVGP) q(u), and reports GFLOP/s counting the
// dense flops its algorithm executes (see each benchmark), cpu-s (CPU time
// per step over all threads) and, with -benchmem, allocations per step in
// the steady state of an optimiser reusing one tape (see benchSteps).
//
//	go test -run '^$' -bench Recipe -benchmem ./gp/inference/

// opTimes logs each recipe benchmark's wall time by operation.
var opTimes = flag.Bool("optimes", false, "log the recipe benchmarks' wall time by tape operation (ad.OpTimes; with -v, which keeps a benchmark's log whole)")

// recipeModel declares the recipe's kernel, noise and Z for n points and M
// inducing inputs.
func recipeModel(b *testing.B, n, m int) (*param.Set, kernels.Kernel, *features.InducingPoints, *mat.Dense, []float64) {
	const d = 8
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			y[i] += math.Sin(v)
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	s, k, f := declareSE(b, d, 1.5, 0.01, mat.DenseCopyOf(x.Slice(0, m, 0, d)))
	return s, k, f, x, y
}

// reportRate reports GFLOP/s for flops per step and the CPU time per step.
func reportRate(b *testing.B, flops, cpu0 float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s")
}

// benchSteps times step (one objective and gradient) as an optimiser runs
// it: on one tape, Reset before each step, after one untimed step, so that
// -benchmem reports the steady state's allocations per step (the first
// step allocates the tape's matrices, every later one reuses them). Each
// timed step is a "step" region of an execution trace (-test.trace), so
// a trace's steps can be told from the setup around them. With -optimes
// the timed steps' tape times its operations (ad.OpTimes) and the table
// is logged.
func benchSteps(b *testing.B, flops float64, step func(t *ad.Tape) error) {
	b.Helper()
	t := ad.NewTape()
	if err := step(t); err != nil {
		b.Fatal(err)
	}
	if *opTimes {
		ops := ad.NewOpTimes()
		t.TimeOps(ops)
		defer func() { b.Logf("wall time by operation:\n%s", ops.Table(b.N)) }()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	ctx := context.Background()
	for b.Loop() {
		t.Reset()
		var err error
		trace.WithRegion(ctx, "step", func() { err = step(t) })
		if err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, flops, cpu0)
}

// BenchmarkRecipeSGPR: the collapsed bound at N = 5·10⁴, M = 500 and
// N = 10⁵, M = 1000, A-first (default) and G-first (Options.GramFirst).
// Flops: A-first 5·N·M² (L⁻¹Kuf and the rank-k update; backward L⁻¹Kuf
// again and the adjoint product), G-first 3·N·M², plus 10·M³ for the M×M
// work.
func BenchmarkRecipeSGPR(b *testing.B) {
	for _, sz := range [][2]int{{50_000, 500}, {100_000, 1000}} {
		for _, gramFirst := range []bool{false, true} {
			n, m := sz[0], sz[1]
			name := fmt.Sprintf("N=%d/M=%d/A-first", n, m)
			flops := 5*float64(n)*float64(m)*float64(m) + 10*float64(m)*float64(m)*float64(m)
			if gramFirst {
				name = fmt.Sprintf("N=%d/M=%d/G-first", n, m)
				flops -= 2 * float64(n) * float64(m) * float64(m)
			}
			b.Run(name, func(b *testing.B) {
				if testing.Short() && m == 1000 {
					b.Skip("M = 1000 skipped with -short")
				}
				s, k, f, x, y := recipeModel(b, n, m)
				opt := Options{Jitter: DefaultJitter, GramFirst: gramFirst}
				var grad []float64 // reused across steps
				benchSteps(b, flops, func(t *ad.Tape) error {
					bd := s.Bind(t)
					out, _, err := SGPR(k.Bind(bd, "k."), f.Bind(bd, "f."), t.Const(x), y, bd.Get("noise_variance"), opt)
					if err != nil {
						return err
					}
					t.Backward(out)
					grad = bd.AppendGradient(grad[:0])
					return nil
				})
			})
		}
	}
}

// BenchmarkRecipeSVGP: the whitened minibatch ELBO, B = 1000 of N = 10⁵,
// M = 500 and M = 200, Gaussian likelihood. Flops (the floor): forward
// L⁻¹Kuf (B·M²), Sᵀ(L⁻¹Kuf) triangular (B·M²), Kuu's Cholesky (M³/3);
// backward twice the forward's products.
func BenchmarkRecipeSVGP(b *testing.B) {
	for _, m := range []int{500, 200} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			const bsz = 1000
			s, k, f, x, y := recipeModel(b, bsz, m)
			declareQ(s, mat.NewDense(m, 1, nil), 1)
			lik := likelihoods.NewGaussian(0.01)
			yc := column(y)
			flops := 3 * (2*bsz*float64(m)*float64(m) + float64(m)*float64(m)*float64(m)/3)
			var grad []float64 // reused across steps
			benchSteps(b, flops, func(t *ad.Tape) error {
				bd := s.Bind(t)
				ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(bd, "", mu, v, yc) }
				q := Variational{Mu: bd.Get("q_mu"), Sqrt: bd.Get("q_sqrt"), Whiten: true}
				out, _, err := SVGP(k.Bind(bd, "k."), f.Bind(bd, "f."), t.Const(x), ve, q, 100_000, Options{Jitter: DefaultJitter})
				if err != nil {
					return err
				}
				t.Backward(out)
				grad = bd.AppendGradient(grad[:0])
				return nil
			})
		})
	}
}

// BenchmarkRecipeExact: the exact log marginal likelihood at N = 2000.
// Flops: Cholesky (N³/3) and the inverse of K + σ²I for the gradient
// (N³/3 for L⁻¹, N³/3 for L⁻ᵀL⁻¹). "chol+inv" times one Cholesky and one
// triangular inverse alone, the floor the issue compares with.
func BenchmarkRecipeExact(b *testing.B) {
	const n = 2000
	s, k, _, x, y := recipeModel(b, n, 1)
	b.Run("lml+grad", func(b *testing.B) {
		var grad []float64 // reused across steps
		benchSteps(b, float64(n)*n*n, func(t *ad.Tape) error {
			bd := s.Bind(t)
			out, _, err := ExactLML(k.Bind(bd, "k."), t.Const(x), y, bd.Get("noise_variance"), Options{})
			if err != nil {
				return err
			}
			t.Backward(out)
			grad = bd.AppendGradient(grad[:0])
			return nil
		})
	})
	b.Run("chol+inv", func(b *testing.B) {
		kx := kernels.Matrix(k, s, "k.", x, x)
		for i := 0; i < n; i++ {
			kx.Set(i, i, kx.At(i, i)+0.01)
		}
		cpu0 := cpuSeconds()
		for b.Loop() {
			l, err := linalg.Cholesky(kx)
			if err != nil {
				b.Fatal(err)
			}
			raw := l.RawMatrix()
			if ok := lapack64.Trtri(blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: raw.Stride, Data: raw.Data}); !ok {
				b.Fatal("singular factor")
			}
		}
		reportRate(b, 2*float64(n)*n*n/3, cpu0)
	})
}
