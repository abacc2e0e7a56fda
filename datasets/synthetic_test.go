package datasets

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// kernelMatrix is the reference covariance: gp/kernels with the config's
// hyperparameters.
func kernelMatrix(t *testing.T, c config, x, z *mat.Dense) *mat.Dense {
	t.Helper()
	_, dim := x.Dims()
	k, s, err := groundTruth(c, dim)
	if err != nil {
		t.Fatal(err)
	}
	return kernels.Matrix(k, s, "", x, z)
}

// TestGPDrawCovariance checks every sampling method against the kernel:
// the empirical covariance of many draws at fixed inputs matches k(x, x').
func TestGPDrawCovariance(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0.3, 0, 0.45})
	for _, tc := range []struct{ kernel, method string }{
		{"se", "cholesky"}, {"matern32", "cholesky"},
		{"matern12", "statespace"}, {"matern32", "statespace"}, {"matern52", "statespace"},
		{"se", "rff"}, {"matern32", "rff"},
	} {
		c := config{kernel: tc.kernel, method: tc.method, structure: "ard", ls: 0.2, variance: 1.5, rffFeatures: 200}
		rng := rand.New(rand.NewPCG(1, 2))
		const reps = 4000
		draws := mat.NewDense(reps, 3, nil)
		for r := 0; r < reps; r++ {
			f, _, err := sampleF(c, x, rng)
			if err != nil {
				t.Fatal(err)
			}
			draws.SetRow(r, f)
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, draws, nil)
		want := kernelMatrix(t, c, x, x)
		for i := 0; i < 3; i++ {
			for j := 0; j <= i; j++ {
				if math.Abs(cov.At(i, j)-want.At(i, j)) > 0.12 {
					t.Errorf("%s/%s: cov[%d][%d] = %.3f, want %.3f", tc.kernel, tc.method, i, j, cov.At(i, j), want.At(i, j))
				}
			}
		}
	}
}

// TestStateSpaceTransition checks the closed-form transition against a
// numerical matrix exponential, and that the SDE reproduces the kernel:
// Cov(f(t+Δ), f(t)) = (A P∞)₀₀ = k(Δ) and Q = P∞ − AP∞Aᵀ is PSD.
func TestStateSpaceTransition(t *testing.T) {
	for _, kernel := range []string{"matern12", "matern32", "matern52"} {
		c := config{kernel: kernel, ls: 0.3, variance: 1.7}
		s, err := newSDE(kernel, c.variance, c.ls)
		if err != nil {
			t.Fatal(err)
		}
		m := s.m
		f := s.drift()
		for _, dt := range []float64{1e-6, 0.01, 0.3, 2, 10} {
			fdt := mat.NewDense(m, m, nil)
			for i := 0; i < m; i++ {
				for j := 0; j < m; j++ {
					fdt.Set(i, j, f[i][j]*dt)
				}
			}
			var ref mat.Dense
			ref.Exp(fdt)
			a := s.transition(dt)
			for i := 0; i < m; i++ {
				for j := 0; j < m; j++ {
					scale := 1 + math.Abs(ref.At(i, j))
					if math.Abs(a[i][j]-ref.At(i, j)) > 1e-10*scale {
						t.Errorf("%s dt=%g: A[%d][%d] = %v, expm gives %v", kernel, dt, i, j, a[i][j], ref.At(i, j))
					}
				}
			}
			var cov float64
			for l := 0; l < m; l++ {
				cov += a[0][l] * s.pinf[l][0]
			}
			k := kernelMatrix(t, c, mat.NewDense(1, 1, []float64{dt}), mat.NewDense(1, 1, []float64{0})).At(0, 0)
			if math.Abs(cov-k) > 1e-12 {
				t.Errorf("%s dt=%g: (A P∞)₀₀ = %v, kernel %v", kernel, dt, cov, k)
			}
			q := s.processNoise(a)
			l := s.cholPSD(q)
			for i := 0; i < m; i++ {
				for j := 0; j <= i; j++ {
					var v float64
					for k := 0; k < m; k++ {
						v += l[i][k] * l[j][k]
					}
					// Pivots below 1e-13·P∞ are dropped, so entries may
					// be off by √(1e-13·P∞ᵢᵢP∞ⱼⱼ) for very short steps.
					tol := 1e-10
					if dt < 1e-3 {
						tol = 1e-6
					}
					if math.Abs(v-q[i][j]) > tol*math.Sqrt(s.pinf[i][i]*s.pinf[j][j]) {
						t.Errorf("%s dt=%g: LLᵀ[%d][%d] = %v, Q = %v", kernel, dt, i, j, v, q[i][j])
					}
				}
			}
		}
	}
}

// TestRFFFrequencies checks the random-feature frequencies against the
// kernels package: their characteristic function E cos(2πξᵀτ) is k(τ)/σ²
// (Bochner), and the histogram of ξ₁ matches Density1D/σ².
func TestRFFFrequencies(t *testing.T) {
	const nf = 200000
	for _, kernel := range []string{"se", "matern12", "matern32", "matern52"} {
		for _, dim := range []int{1, 2} {
			c := config{kernel: kernel, ls: 0.7, variance: 2}
			rng := rand.New(rand.NewPCG(3, uint64(dim)))
			xi := rffFrequencies(kernel, dim, nf, c.ls, rng)
			for _, tau := range [][]float64{{0.1, -0.2}, {0.5, 0.3}, {1.5, 0}} {
				tau = tau[:dim]
				var m float64
				for k := 0; k < nf; k++ {
					var a float64
					for d := 0; d < dim; d++ {
						a += xi[k*dim+d] * tau[d]
					}
					m += math.Cos(2 * math.Pi * a)
				}
				m /= nf
				want := kernelMatrix(t, c, mat.NewDense(1, dim, tau), mat.NewDense(1, dim, nil)).At(0, 0) / c.variance
				if math.Abs(m-want) > 5/math.Sqrt(2*nf) {
					t.Errorf("%s D=%d τ=%v: E cos = %.4f, k(τ)/σ² = %.4f", kernel, dim, tau, m, want)
				}
			}
			k, s, err := groundTruth(c, dim)
			if err != nil {
				t.Fatal(err)
			}
			sb := k.Bind(s.Bind(ad.NewTape()), "").(kernels.SpectralBound)
			density := func(x float64) float64 {
				return sb.Density1D(mat.NewDense(1, 1, []float64{x}), 0).Value().At(0, 0) / c.variance
			}
			edges := []float64{-0.6, -0.3, -0.15, -0.05, 0, 0.1, 0.2, 0.4, 0.8}
			for b := 0; b+1 < len(edges); b++ {
				var cnt int
				for k := 0; k < nf; k++ {
					if v := xi[k*dim]; v >= edges[b] && v < edges[b+1] {
						cnt++
					}
				}
				p := quad.Fixed(density, edges[b], edges[b+1], 20, nil, 0)
				got := float64(cnt) / nf
				if math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/nf) {
					t.Errorf("%s D=%d: P(ξ₁ ∈ [%g,%g)) = %.4f, density gives %.4f", kernel, dim, edges[b], edges[b+1], got, p)
				}
			}
		}
	}
}
