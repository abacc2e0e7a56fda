package features_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// spherical-odgp-spec §1.13: the diagonal of Kuu (unit z, d = 3, unit
// amplitude and lengthscale) for truncations L = 2, 4, 8, 16, 30.
func TestActivationKuuDiagonalReference(t *testing.T) {
	for _, c := range []struct {
		kernel, act string
		want        []float64
		digits      []float64 // absolute tolerance per entry (as printed)
	}{
		{"arccos1", "relu", []float64{0.667, 1.500, 5.167, 20.5, 73.0}, []float64{5e-4, 5e-4, 5e-4, 0.05, 0.05}},
		{"arccos1", "softplus", []float64{1.9360, 1.9913, 1.9915, 1.9915, 1.9915}, []float64{5e-5, 5e-5, 5e-5, 5e-5, 5e-5}},
		// The spec prints 0.845 at L = 2; its own coefficient table gives
		// 0.25²/0.3889981 + 3(1/6)²/0.1218685 = 0.844466, which is what
		// this test holds (to 1e-6).
		{"chordal-matern52", "relu", []float64{0.844466, 1.468, 2.754, 19.2, 221}, []float64{1e-6, 5e-4, 5e-4, 0.05, 0.5}},
		{"chordal-matern52", "softplus", []float64{2.0681, 2.1095, 2.1096, 2.1096, 2.1096}, []float64{5e-5, 5e-5, 5e-5, 5e-5, 5e-5}},
	} {
		for i, L := range []int{2, 4, 8, 16, 30} {
			k, err := kernels.New(c.kernel, 2, kernels.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := param.NewSet()
			_ = k.Declare(s, "kern.")
			z := mat.NewDense(1, 3, []float64{0.3, -0.5, 0.8})
			f, err := features.NewActivation(c.act, z, L)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Declare(s, "feat.")
			b := s.Bind(ad.NewTape())
			kb := k.Bind(b, "kern.").(kernels.ZonalBound)
			if err := f.CheckKernel(kb); err != nil {
				t.Fatal(err)
			}
			got := f.Bind(b, "feat.").Kuu(kb).Value().At(0, 0)
			if math.Abs(got-c.want[i]) > c.digits[i] {
				t.Errorf("%s + %s, L = %d: Kuu diagonal %.6g, want %g", c.kernel, c.act, L, got, c.want[i])
			}
		}
	}
}

type actSetup struct {
	k   kernels.Kernel
	f   *features.Activation
	set *param.Set
}

func newActSetup(t testing.TB, kernel, act string, d, m, L int, seed uint64) *actSetup {
	t.Helper()
	k, err := kernels.New(kernel, d, kernels.Options{Variance: 1.1, Lengthscales: []float64{0.9}, WeightVariances: []float64{0.8}, BiasVariance: 1.2})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	z := mat.NewDense(m, d+1, nil)
	for i := range z.RawMatrix().Data {
		z.RawMatrix().Data[i] = rng.NormFloat64()
	}
	f, err := features.NewActivation(act, z, L)
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	_ = k.Declare(s, "kern.")
	_ = f.Declare(s, "feat.")
	_ = s.AddScalar("noise", 0.05, param.DefaultPositive)
	return &actSetup{k: k, f: f, set: s}
}

// With softplus the truncated unit converges to ρ σ(ẑᵀx̂) quickly.
func TestActivationKufConverges(t *testing.T) {
	a := newActSetup(t, "chordal-matern52", "softplus", 3, 4, 24, 1)
	x, _ := vishData(5, 3, 7)
	tp := ad.NewTape()
	b := a.set.Bind(tp)
	kb := a.k.Bind(b, "kern.").(kernels.ZonalBound)
	kuf := a.f.Bind(b, "feat.").Kuf(kb, tp.Const(x)).Value()
	xt := kb.AugmentValue(nil, x)
	z := a.set.Value("feat.directions")
	for m := 0; m < 4; m++ {
		zr := z.RawRowView(m)
		zn := math.Sqrt(dot(zr, zr))
		for n := 0; n < 5; n++ {
			xr := xt.RawRowView(n)
			rho := math.Sqrt(dot(xr, xr))
			u := dot(zr, xr) / (zn * rho)
			want := rho * (math.Max(u, 0) + math.Log1p(math.Exp(-math.Abs(u))))
			if math.Abs(kuf.At(m, n)-want) > 1e-9*want {
				t.Errorf("H_%d(x_%d) = %.12g, ρσ(ẑᵀx̂) = %.12g", m, n, kuf.At(m, n), want)
			}
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The joint prior of (u, f) is positive semi-definite (truncated units in
// Kuu and Kuf), so the collapsed bound stays below the exact marginal
// likelihood; M above the rank of the truncated span (jitter) included.
func TestActivationJointPSD(t *testing.T) {
	for _, c := range []struct {
		kernel, act string
		m           int
	}{{"arccos1", "softplus", 6}, {"chordal-matern52", "relu", 8}, {"chordal-matern32", "softplus", 40}} {
		a := newActSetup(t, c.kernel, c.act, 2, c.m, 6, 2)
		x, y := vishData(30, 2, 8)
		tp := ad.NewTape()
		b := a.set.Bind(tp)
		kb := a.k.Bind(b, "kern.")
		fb := a.f.Bind(b, "feat.")
		xn := tp.Const(x)
		kuu, kuf, kff := fb.Kuu(kb).Value(), fb.Kuf(kb, xn).Value(), kb.K(xn, xn).Value()
		n := c.m + 30
		j := mat.NewSymDense(n, nil)
		for r := 0; r < n; r++ {
			for s := r; s < n; s++ {
				var v float64
				switch {
				case s < c.m:
					v = kuu.At(r, s)
				case r < c.m:
					v = kuf.At(r, s-c.m)
				default:
					v = kff.At(r-c.m, s-c.m)
				}
				j.SetSym(r, s, v)
			}
		}
		var eig mat.EigenSym
		eig.Factorize(j, false)
		vals := eig.Values(nil)
		if vals[0] < -1e-9*vals[n-1] {
			t.Errorf("%s/%s M=%d: joint prior has eigenvalue %g (largest %g)", c.kernel, c.act, c.m, vals[0], vals[n-1])
		}
		bound, _, err := inference.SGPR(kb, fb, xn, y, b.Get("noise"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exact, _, _ := inference.ExactLML(kb, xn, y, b.Get("noise"), inference.Options{})
		if bound.Scalar() > exact.Scalar()+1e-6*math.Abs(exact.Scalar()) {
			t.Errorf("%s/%s: bound %.10g above exact %.10g", c.kernel, c.act, bound.Scalar(), exact.Scalar())
		}
	}
}

// Gradients of the collapsed bound with respect to the directions, the
// kernel's parameters and the noise, and of Kuv = H(W) (the cross-covariance
// with inducing points, found by features.Kuv) with respect to W.
func TestActivationGradients(t *testing.T) {
	for _, c := range []struct{ kernel, act string }{{"chordal-matern52", "softplus"}, {"arccos1", "relu"}, {"sphere-matern32", "softplus"}} {
		t.Run(c.kernel+"-"+c.act, func(t *testing.T) {
			a := newActSetup(t, c.kernel, c.act, 2, 4, 6, 3)
			x, y := vishData(25, 2, 9)
			checkSetGradient(t, a.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
				out, _, err := inference.SGPR(a.k.Bind(b, "kern."), a.f.Bind(b, "feat."), tp.Const(x), y, b.Get("noise"), inference.Options{})
				return out, err
			}, 3e-6)
			w, _ := vishData(3, 2, 10)
			err := ad.CheckGradient(func(tp *ad.Tape, xs []*ad.Node) *ad.Node {
				b := a.set.Bind(tp)
				kb := a.k.Bind(b, "kern.")
				kuv, err := features.Kuv(kb, a.f.Bind(b, "feat."), features.BoundPoints{Z: xs[0]})
				if err != nil {
					t.Fatal(err)
				}
				return kuv
			}, []*mat.Dense{w}, 1e-6, 1e-6)
			if err != nil {
				t.Errorf("Kvu: %v", err)
			}
		})
	}
}

func TestActivationBadInput(t *testing.T) {
	z := mat.NewDense(2, 3, []float64{1, 0, 0, 0, 1, 0})
	if _, err := features.NewActivation("tanh", z, 6); err == nil {
		t.Error("unknown activation accepted")
	}
	if _, err := features.NewActivation("relu", z, 0); err == nil {
		t.Error("zero truncation accepted")
	}
	if _, err := features.NewActivation("relu", mat.NewDense(1, 3, nil), 4); err == nil {
		t.Error("zero direction accepted")
	}
	f, _ := features.NewActivation("relu", z, 6)
	if f.Warning() == "" {
		t.Error("relu: no divergence warning")
	}
	g, _ := features.NewActivation("softplus", z, 6)
	if g.Warning() != "" {
		t.Error("softplus: spurious warning")
	}
	// A kernel of another sphere dimension.
	k, _ := kernels.New("arccos1", 3, kernels.Options{})
	s := param.NewSet()
	_ = k.Declare(s, "")
	if err := f.CheckKernel(k.Bind(s.Bind(ad.NewTape()), "").(kernels.ZonalBound)); err == nil {
		t.Error("kernel on S³ accepted for directions in R³")
	}
}

// ActivationZeta is the spectrum a unit of any direction has.
func TestActivationZeta(t *testing.T) {
	for _, act := range features.Activations() {
		z := mat.NewDense(1, 5, []float64{0.3, -1, 0.2, 0, 2})
		f, err := features.NewActivation(act, z, 7)
		if err != nil {
			t.Fatal(err)
		}
		got, err := features.ActivationZeta(act, 5, 7)
		if err != nil {
			t.Fatal(err)
		}
		for l, want := range f.Zeta() {
			if got[l] != want {
				t.Errorf("%s: ζ_%d = %v, the unit's %v", act, l, got[l], want)
			}
		}
	}
	for _, c := range []struct {
		act       string
		d, levels int
	}{{"tanh", 3, 2}, {"relu", 1, 2}, {"relu", 3, 0}} {
		if _, err := features.ActivationZeta(c.act, c.d, c.levels); err == nil {
			t.Errorf("ActivationZeta(%q, %d, %d) accepted", c.act, c.d, c.levels)
		}
	}
}
