package features

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// boundKernel binds a fresh 1-D Matérn kernel on its own tape.
func boundKernel(t *testing.T, name string, variance, ls float64) (kernels.Kernel, kernels.Bound) {
	t.Helper()
	k, err := kernels.New(name, 1, kernels.Options{Variance: variance, Lengthscales: []float64{ls}})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, ""); err != nil {
		t.Fatal(err)
	}
	return k, k.Bind(s.Bind(ad.NewTape()), "")
}

// kernelCov is ∂ʲ/∂eʲ k(x, e) by central differences of the kernel's own
// K (j ≤ 2): Cov(f(x), f^{(j)}(e)).
func kernelCov(kb kernels.Bound, x, e float64, j int) float64 {
	tape := kb.(kernels.SpectralBound).Variance().Tape()
	k := func(ee float64) float64 {
		return kb.K(tape.Const(mat.NewDense(1, 1, []float64{x})), tape.Const(mat.NewDense(1, 1, []float64{ee}))).Value().At(0, 0)
	}
	switch j {
	case 0:
		return k(e)
	case 1:
		h := 1e-5
		return (k(e+h) - k(e-h)) / (2 * h)
	}
	h := 1e-4
	return (k(e+h) - 2*k(e) + k(e-h)) / (h * h)
}

// TestIntervalKufEdgeMarkov checks Kuf beyond the box against the Markov
// construction built independently of edgeCoefs: c(x) = Cov(f(x), s(e))
// P∞⁻¹ with Cov(f(x), f^{(j)}(e)) from finite differences of the kernel's K
// and P∞ = σ² λ^{i+j} π_ij the stationary state covariance, then
// Kuf = Σ_j c_j φ^{(j)}(e).
func TestIntervalKufEdgeMarkov(t *testing.T) {
	iv := Interval{A: -0.2, B: 1.1}
	pis := map[int][][]float64{1: {{1}}, 2: {{1, 0}, {0, 1}}, 3: {{1, 0, -1.0 / 3}, {0, 1.0 / 3, 0}, {-1.0 / 3, 0, 1}}}
	for _, kname := range []string{"matern12", "matern32", "matern52"} {
		for _, feat := range []string{"vff", "bspline"} {
			t.Run(kname+"/"+feat, func(t *testing.T) {
				const sv, ls = 1.3, 0.35
				k, kb := boundKernel(t, kname, sv, ls)
				var f *IntervalFeature
				var err error
				if feat == "vff" {
					f, err = NewVFF(k, []Interval{iv}, 5, Kronecker, false)
				} else {
					f, err = NewBSplines(k, []Interval{iv}, 9, Kronecker)
				}
				if err != nil {
					t.Fatal(err)
				}
				nu := f.orders[0]
				p := int(nu + 0.5)
				lam := math.Sqrt(2*nu) / ls
				pinf := mat.NewDense(p, p, nil)
				for i := 0; i < p; i++ {
					for j := 0; j < p; j++ {
						pinf.Set(i, j, sv*math.Pow(lam, float64(i+j))*pis[p][i][j])
					}
				}
				var pinv mat.Dense
				if err := pinv.Inverse(pinf); err != nil {
					t.Fatal(err)
				}
				xs := []float64{-0.9, -0.35, -0.2001, 1.1001, 1.3, 2.0}
				tape := kb.(kernels.SpectralBound).Variance().Tape()
				got := f.Bind(nil, "").Kuf(kb, tape.Const(mat.NewDense(len(xs), 1, xs))).Value()
				m := f.M()
				col := make([]float64, m)
				for n, x := range xs {
					e := iv.A
					if x > iv.B {
						e = iv.B
					}
					cov := mat.NewDense(1, p, nil)
					for j := 0; j < p; j++ {
						cov.Set(0, j, kernelCov(kb, x, e, j))
					}
					var c mat.Dense
					c.Mul(cov, &pinv)
					want := make([]float64, m)
					for j := 0; j < p; j++ {
						f.bases[0].(basisDerivs).derivs(e, j, col)
						for i := range want {
							want[i] += c.At(0, j) * col[i]
						}
					}
					for i := range want {
						if d := math.Abs(got.At(i, n) - want[i]); d > 1e-6*math.Max(1, math.Abs(want[i])) {
							t.Errorf("x = %v, feature %d: Kuf %.10g, Markov construction %.10g", x, i, got.At(i, n), want[i])
						}
					}
				}
			})
		}
	}
}

// TestIntervalKufEdgeContinuity: Kuf is C^{p−1} across the edges (value
// and, for ν ≥ 3⁄2, x-derivative), and the basis derivatives are the
// central differences of the basis.
func TestIntervalKufEdgeContinuity(t *testing.T) {
	iv := Interval{A: 0, B: 1}
	for _, kname := range []string{"matern12", "matern32", "matern52"} {
		for _, feat := range []string{"vff", "bspline"} {
			t.Run(kname+"/"+feat, func(t *testing.T) {
				k, _ := boundKernel(t, kname, 0.7, 0.2)
				var f *IntervalFeature
				var err error
				if feat == "vff" {
					f, err = NewVFF(k, []Interval{iv}, 6, Kronecker, false)
				} else {
					f, err = NewBSplines(k, []Interval{iv}, 10, Kronecker)
				}
				if err != nil {
					t.Fatal(err)
				}
				m := f.M()
				at := func(x float64) []float64 {
					v := f.dimKuf(0, []float64{x}, math.Sqrt(2*f.orders[0])/0.2, true)
					out := make([]float64, 2*m)
					for i := 0; i < m; i++ {
						out[i], out[m+i] = v.val.At(i, 0), v.dx.At(i, 0)
					}
					return out
				}
				const h = 1e-9
				for _, e := range []float64{iv.A, iv.B} {
					in, out := at(e), at(e+h*map[bool]float64{true: -1, false: 1}[e == iv.A])
					for i := 0; i < m; i++ {
						if d := math.Abs(in[i] - out[i]); d > 1e-7 {
							t.Errorf("edge %v feature %d: value inside %.12g, just outside %.12g", e, i, in[i], out[i])
						}
						if f.orders[0] > 1 {
							if d := math.Abs(in[m+i] - out[m+i]); d > 1e-5*math.Max(1, math.Abs(in[m+i])) {
								t.Errorf("edge %v feature %d: x-derivative inside %.10g, just outside %.10g", e, i, in[m+i], out[m+i])
							}
						}
					}
				}
				// Basis derivatives j = 1, 2 against central differences.
				bd := f.bases[0].(basisDerivs)
				lo, hi, mid := make([]float64, m), make([]float64, m), make([]float64, m)
				for _, x := range []float64{0.13, 0.5, 0.77} {
					for j := 1; j <= 2; j++ {
						const hh = 1e-6
						bd.derivs(x-hh, j-1, lo)
						bd.derivs(x+hh, j-1, hi)
						bd.derivs(x, j, mid)
						for i := range mid {
							fdv := (hi[i] - lo[i]) / (2 * hh)
							if d := math.Abs(fdv - mid[i]); d > 1e-5*math.Max(1, math.Abs(mid[i])) {
								t.Errorf("x = %v, derivative %d of basis %d: %.10g, central difference %.10g", x, j, i, mid[i], fdv)
							}
						}
					}
				}
			})
		}
	}
}

// TestEdgeCoefsDerivatives checks the τ and λ derivatives of edgeCoefs
// against central differences.
func TestEdgeCoefsDerivatives(t *testing.T) {
	for p := 1; p <= 3; p++ {
		for _, tau := range []float64{-0.7, -0.05, 0.03, 0.4, 2.5} {
			for _, lam := range []float64{0.5, 3, 11} {
				_, dt, dl := edgeCoefs(p, tau, lam)
				const h = 1e-6
				cp, _, _ := edgeCoefs(p, tau+h, lam)
				cm, _, _ := edgeCoefs(p, tau-h, lam)
				lp, _, _ := edgeCoefs(p, tau, lam+h)
				lm, _, _ := edgeCoefs(p, tau, lam-h)
				for j := 0; j < p; j++ {
					name := fmt.Sprintf("p=%d τ=%v λ=%v c_%d", p, tau, lam, j)
					if fdv := (cp[j] - cm[j]) / (2 * h); math.Abs(fdv-dt[j]) > 1e-7 {
						t.Errorf("%s: ∂τ %.10g, central difference %.10g", name, dt[j], fdv)
					}
					if fdv := (lp[j] - lm[j]) / (2 * h); math.Abs(fdv-dl[j]) > 1e-7 {
						t.Errorf("%s: ∂λ %.10g, central difference %.10g", name, dl[j], fdv)
					}
				}
			}
		}
	}
}
