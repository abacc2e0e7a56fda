package features_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

const eps = 0x1p-52

// traceDifference is tr(Kff − Qff) the way the bound computes it without
// the closed form: Σ_n k(x_n, x_n) − ‖L⁻¹Kuf‖²_F with L⁻¹ = diag(√λ).
func traceDifference(t *testing.T, kb kernels.ZonalBound, fb features.Bound, tp *ad.Tape, x *ad.Node) (diff, diagSum float64) {
	t.Helper()
	st, err := features.StructureOf(kb, fb, 0, features.AllForms)
	if err != nil {
		t.Fatal(err)
	}
	prec := st.Precision.Value()
	kuf := fb.Kuf(kb, x).Value()
	m, n := kuf.Dims()
	trQ := 0.0
	for i := 0; i < m; i++ {
		row := 0.0
		for j := 0; j < n; j++ {
			row += kuf.At(i, j) * kuf.At(i, j)
		}
		trQ += prec.At(i, 0) * row
	}
	diagSum = kernels.DiagSum(tp, kb, x.Value()).Scalar()
	return diagSum - trQ, diagSum
}

// The closed form (Σρ²)·Σ_{ℓ<T, ℓ unused} λ_ℓ N(d,ℓ)/Ω equals Σk − tr Qff
// on well-scaled inputs, for 1-D inputs with one and two bias columns and
// for 3- and 8-D inputs (to 1e-12 relative, beyond the difference's own
// rounding of a few ε·Σk); with every level of the series used it is 0.
func TestSphericalTraceResidual(t *testing.T) {
	for _, c := range []struct {
		name           string
		kernel         string
		dim, bias      int
		levels, series int // series 0: the default truncation
	}{
		{"1d-bias2-matern32", "sphere-matern32", 1, 2, 3, 0},
		{"1d-bias1-se", "sphere-se", 1, 1, 4, 0},
		{"1d-bias1-matern12", "sphere-matern12", 1, 1, 6, 0},
		{"3d-bias1-matern52", "sphere-matern52", 3, 1, 2, 0},
		{"3d-bias2-matern32", "sphere-matern32", 3, 2, 3, 12},
		{"8d-bias1-matern12", "sphere-matern12", 8, 1, 2, 0},
		{"8d-bias2-se", "sphere-se", 8, 2, 1, 0},
		{"8d-bias1-matern32-L0", "sphere-matern32", 8, 1, 0, 0},
		{"2d-all-levels", "sphere-matern32", 2, 1, 4, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, _ := vishData(60, c.dim, 7)
			w := make([]float64, c.dim)
			for i := range w {
				w[i] = 0.6 + 0.2*float64(i%3)
			}
			v := newVishSetup(t, c.kernel, c.dim, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.8}, WeightVariances: w, ARD: true,
				BiasVariance: 1.1, BiasColumns: c.bias, Truncation: c.series}, 0.1)
			f := v.features(t, c.levels)
			tp := ad.NewTape()
			kb, b := v.bind(tp)
			fb := f.Bind(b, "")
			got, ok := features.TraceResidualOf(tp, kb, fb, x)
			if !ok {
				t.Fatal("no closed form for a truncated spectral kernel")
			}
			diff, kd := traceDifference(t, kb, fb, tp, tp.Const(x))
			r := got.Scalar()
			t.Logf("M = %d: tr(Kff − Qff) = %.15g closed, %.15g difference (%.2g of Σk)", f.M(), r, diff, r/kd)
			if c.levels == c.series-1 {
				if r != 0 || math.Abs(diff) > 1e-13*kd {
					t.Errorf("every level used: closed form %v, difference %v, want 0", r, diff)
				}
				return
			}
			// The difference carries a few ε·Σk of rounding itself.
			if tol := 1e-12*r + 8*eps*kd; !(r > 0) || math.Abs(r-diff) > tol {
				t.Errorf("closed form %.15g, difference %.15g (relative %.2g, allowed %.2g)", r, diff, math.Abs(r-diff)/r, tol/r)
			}
		})
	}
}

// Kernels whose Mercer series does not end, and a kernel on another
// sphere, give no closed form: the bound keeps the difference.
func TestSphericalTraceResidualUnavailable(t *testing.T) {
	x, _ := vishData(10, 2, 1)
	f := newVishSetup(t, "sphere-matern32", 2, kernels.Options{}, 0.1).features(t, 3)
	for _, c := range []struct {
		kernel string
		dim    int
	}{{"chordal-matern32", 2}, {"arccos1", 2}, {"sphere-matern32", 3}} {
		v := newVishSetup(t, c.kernel, c.dim, kernels.Options{Variance: 1, Lengthscales: []float64{1}}, 0.1)
		tp := ad.NewTape()
		kb, b := v.bind(tp)
		xs, _ := vishData(10, c.dim, 1)
		if c.dim == 2 {
			xs = x
		}
		if _, ok := features.TraceResidualOf(tp, kb, f.Bind(b, ""), xs); ok {
			t.Errorf("%s on %d-D inputs: closed form offered for harmonics on S^2", c.kernel, c.dim)
		}
	}
}

// The closed form's gradient with respect to every kernel parameter
// (variance, κ, weight variances, bias variance; with the weight and bias
// variances fixed, through DiagSum's cached Σρ²) against central
// differences, alone and inside the collapsed bound on both paths.
func TestSphericalTraceResidualGradient(t *testing.T) {
	for _, c := range []struct {
		name   string
		kernel string
		dim    int
		fixed  bool // weight and bias variances fixed
	}{
		{"matern32-1d", "sphere-matern32", 1, false},
		{"se-3d", "sphere-se", 3, false},
		{"matern52-3d-fixed", "sphere-matern52", 3, true},
		{"matern12-8d", "sphere-matern12", 8, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, y := vishData(40, c.dim, 5)
			w := make([]float64, c.dim)
			for i := range w {
				w[i] = 0.7 + 0.3*float64(i%2)
			}
			v := newVishSetup(t, c.kernel, c.dim, kernels.Options{Variance: 1.2, Lengthscales: []float64{0.9}, WeightVariances: w, ARD: true, BiasVariance: 0.7, Truncation: 20}, 0.05)
			if c.fixed {
				v.set.SetTrainable(false, "kern.weight_variances", "kern.bias_variance")
			}
			f := v.features(t, 2)
			checkSetGradient(t, v.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
				r, ok := features.TraceResidualOf(tp, v.k.Bind(b, "kern."), f.Bind(b, ""), x)
				if !ok {
					t.Fatal("no closed form")
				}
				return r, nil
			}, 1e-6)
			checkSetGradient(t, v.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
				out, _, err := inference.SGPR(v.k.Bind(b, "kern."), f.Bind(b, ""), tp.Const(x), y, b.Get("noise"), inference.Options{})
				return out, err
			}, 2e-6)
			if !c.fixed {
				return
			}
			kb0, _ := v.bind(ad.NewTape())
			stats, err := inference.ComputeStats(x, y, f.M(), func(dst, xc *mat.Dense) (*mat.Dense, error) { return f.Phi(dst, kb0, xc) })
			if err != nil {
				t.Fatal(err)
			}
			checkSetGradient(t, v.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
				kb, fb := v.k.Bind(b, "kern."), f.Bind(b, "")
				kuu, err := features.StructureOf(kb, fb, 0, features.AllForms)
				if err != nil {
					return nil, err
				}
				r, _ := features.TraceResidualOf(tp, kb, fb, x)
				out, _, err := inference.CollapsedFromStatsResidual(stats, kuu, r, kernels.DiagSum(tp, kb, x), b.Get("noise"), inference.Options{})
				return out, err
			}, 2e-6)
		})
	}
}
