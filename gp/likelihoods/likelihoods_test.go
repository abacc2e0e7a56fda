package likelihoods

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// gaussExpect is ∫ g(f) N(f; mu, v) df by brute-force Legendre quadrature
// over ±14 standard deviations, independent of Gauss–Hermite.
func gaussExpect(g func(float64) float64, mu, v float64) float64 {
	s := math.Sqrt(v)
	return quad.Fixed(func(f float64) float64 {
		z := (f - mu) / s
		return g(f) * math.Exp(-0.5*z*z) / (s * math.Sqrt(2*math.Pi))
	}, mu-14*s, mu+14*s, 4000, nil, 0)
}

func TestGaussHermiteExactness(t *testing.T) {
	for _, n := range []int{1, 2, 5, 20, 50} {
		x, w, err := GaussHermite(n)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= 2*n; k++ {
			// Odd moments cancel: measure the error against Σ|wᵢxᵢᵏ|,
			// the scale of the rounding error of the sum.
			var got, scale float64
			for i := range x {
				term := w[i] * math.Pow(x[i], float64(k))
				got += term
				scale += math.Abs(term)
			}
			want := 0.0 // ∫ xᵏ e^{−x²} dx
			if k%2 == 0 {
				want = math.Gamma(float64(k+1) / 2)
			}
			err := math.Abs(got-want) / scale
			if k <= 2*n-1 && err > 1e-13 {
				t.Errorf("n=%d: degree %d integrates to %.17g, want %.17g (rel err %.2g)", n, k, got, want, err)
			}
			if k == 2*n && n <= 20 && err < 1e-9 {
				t.Errorf("n=%d: degree %d unexpectedly exact (rel err %.2g); check the test", n, k, err)
			}
		}
	}
	if _, _, err := GaussHermite(0); err == nil {
		t.Error("GaussHermite(0): no error")
	}
}

func TestLogNormCDF(t *testing.T) {
	// Both branches are valid between −38 and −30: they must agree there.
	for _, z := range []float64{-30, -31.5, -34, -36} {
		viaErfc := math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
		if e := math.Abs(LogNormCDF(z)-viaErfc) / math.Abs(viaErfc); e > 1e-14 {
			t.Errorf("z=%g: series %.17g, erfc %.17g", z, LogNormCDF(z), viaErfc)
		}
	}
	for _, z := range []float64{-5, -0.3, 0, 0.7, 8, 40} {
		if e := testhelp.RelErr(LogNormCDF(z), math.Log(NormCDF(z))); e > 1e-15 && z < 8 {
			t.Errorf("z=%g: %g vs %g", z, LogNormCDF(z), math.Log(NormCDF(z)))
		}
	}
	// Far tail: finite, and continuous at the switch.
	if v := LogNormCDF(-1e4); math.IsInf(v, 0) || math.IsNaN(v) {
		t.Errorf("LogNormCDF(-1e4) = %g", v)
	}
	if e := math.Abs(LogNormCDF(8)/-NormCDF(-8) - 1); e > 1e-10 {
		t.Errorf("LogNormCDF(8) = %g, want ≈ −Φ(−8) = %g", LogNormCDF(8), -NormCDF(-8))
	}
	// Derivatives against central differences.
	for _, z := range []float64{-60, -30.5, -29.5, -3, 0, 2.5} {
		_, d1, d2 := logNormCDFDerivs(z)
		h := 1e-5 * math.Max(1, math.Abs(z))
		fd1 := (LogNormCDF(z+h) - LogNormCDF(z-h)) / (2 * h)
		fd2 := (invMills(z+h) - invMills(z-h)) / (2 * h)
		if testhelp.RelErr(d1, fd1) > 1e-7 || testhelp.RelErr(d2, fd2) > 1e-6 {
			t.Errorf("z=%g: derivs (%g, %g), fd (%g, %g)", z, d1, d2, fd1, fd2)
		}
	}
}

func TestVarExpAgainstQuadrature(t *testing.T) {
	cases := []struct{ mu, v, y float64 }{
		{0, 1, 1}, {0.5, 0.1, -1}, {-2, 3, 1}, {3, 0.01, -1}, {-6, 2, 1}, {1, 10, -1}, {0.2, 1e-9, 1},
	}
	// A high-order rule must match brute-force quadrature tightly; the
	// default 20-point rule is limited by the smoothness of log Φ at large v.
	ber := mustBernoulli(120)
	ber20 := mustBernoulli(DefaultQuadraturePoints)
	gau := NewGaussian(0.3)
	s := param.NewSet()
	if err := gau.Declare(s, "lik."); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		tp := ad.NewTape()
		b := s.Bind(tp)
		mu := tp.Const(mat.NewDense(1, 1, []float64{c.mu}))
		v := tp.Const(mat.NewDense(1, 1, []float64{c.v}))
		y := mat.NewDense(1, 1, []float64{c.y})

		got := ber.VarExp(nil, "", mu, v, y).Value().At(0, 0)
		want := gaussExpect(func(f float64) float64 { return LogNormCDF(c.y * f) }, c.mu, c.v)
		if e := testhelp.RelErr(got, want); e > 1e-9 {
			t.Errorf("Bernoulli %+v: GH-120 %.15g, quadrature %.15g (rel err %.2g)", c, got, want, e)
		}
		got20 := ber20.VarExp(nil, "", mu, v, y).Value().At(0, 0)
		if e := testhelp.RelErr(got20, want); e > 3e-5 {
			t.Errorf("Bernoulli %+v: GH-20 %.15g, quadrature %.15g (rel err %.2g)", c, got20, want, e)
		}
		gotLD := ber.LogDensity(nil, "", []float64{c.mu}, []float64{c.v}, []float64{c.y})[0]
		wantLD := math.Log(gaussExpect(func(f float64) float64 { return NormCDF(c.y * f) }, c.mu, c.v))
		if e := testhelp.RelErr(gotLD, wantLD); e > 1e-10 {
			t.Errorf("Bernoulli LogDensity %+v: %.15g, quadrature %.15g", c, gotLD, wantLD)
		}
		p, pv := ber.Predict(nil, "", []float64{c.mu}, []float64{c.v})
		wantP := gaussExpect(NormCDF, c.mu, c.v)
		if testhelp.RelErr(p[0], wantP) > 1e-10 || testhelp.RelErr(pv[0], wantP*(1-wantP)) > 1e-10 {
			t.Errorf("Bernoulli Predict %+v: %g, quadrature %g", c, p[0], wantP)
		}

		s2 := 0.3
		gotG := gau.VarExp(b, "lik.", mu, v, y).Value().At(0, 0)
		logN := func(f float64) float64 { d := c.y - f; return -0.5*math.Log(2*math.Pi*s2) - d*d/(2*s2) }
		if e := testhelp.RelErr(gotG, gaussExpect(logN, c.mu, c.v)); e > 1e-10 {
			t.Errorf("Gaussian %+v: %.15g, quadrature %.15g", c, gotG, gaussExpect(logN, c.mu, c.v))
		}
		gotGLD := gau.LogDensity(s, "lik.", []float64{c.mu}, []float64{c.v}, []float64{c.y})[0]
		wantGLD := math.Log(gaussExpect(func(f float64) float64 { return math.Exp(logN(f)) }, c.mu, c.v))
		if e := testhelp.RelErr(gotGLD, wantGLD); e > 1e-10 {
			t.Errorf("Gaussian LogDensity %+v: %.15g, quadrature %.15g", c, gotGLD, wantGLD)
		}
	}
}

// weightedSum records Σ c_n a_n as a 1×1 node, so Backward can seed it.
func weightedSum(a *ad.Node, c []float64) *ad.Node {
	var s float64
	for i, ci := range c {
		s += ci * a.Value().At(i, 0)
	}
	return ad.Custom(mat.NewDense(1, 1, []float64{s}), func(g *mat.Dense) []*mat.Dense {
		out := mat.NewDense(len(c), 1, nil)
		for i, ci := range c {
			out.Set(i, 0, g.At(0, 0)*ci)
		}
		return []*mat.Dense{out}
	}, a)
}

// TestVarExpGradients checks d/d(mu, v, raw noise) of Σ c_n VarExp_n against
// central finite differences.
func TestVarExpGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n := 6
	mu0, v0, y, c := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range mu0 {
		mu0[i] = 3 * rng.NormFloat64()
		v0[i] = 0.05 + 3*rng.Float64()
		y[i] = float64(2*rng.IntN(2) - 1)
		c[i] = rng.NormFloat64()
	}
	mu0[0] = -9 // deep in the probit tail
	for _, lik := range []Likelihood{NewGaussian(0.4), mustBernoulli(20), mustBernoulli(7)} {
		s := param.NewSet()
		if err := lik.Declare(s, "p/"); err != nil {
			t.Fatal(err)
		}
		np := s.Len()
		eval := func(x []float64) (float64, []float64) {
			s.SetVector(x[2*n:])
			tp := ad.NewTape()
			b := s.Bind(tp)
			mu := tp.Var(mat.NewDense(n, 1, append([]float64(nil), x[:n]...)))
			v := tp.Var(mat.NewDense(n, 1, append([]float64(nil), x[n:2*n]...)))
			out := weightedSum(lik.VarExp(b, "p/", mu, v, mat.NewDense(n, 1, y)), c)
			tp.Backward(out)
			g := append(append(append([]float64(nil), mu.Grad().RawMatrix().Data...), v.Grad().RawMatrix().Data...), b.Gradient()...)
			return out.Scalar(), g
		}
		x0 := append(append(append([]float64(nil), mu0...), v0...), s.Vector()...)
		_, g := eval(x0)
		want := fd.Gradient(nil, func(x []float64) float64 { f, _ := eval(x); return f }, x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		for i := range g {
			if math.Abs(g[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
				t.Errorf("%s: d/dx[%d] = %.10g, fd %.10g", lik.Name(), i, g[i], want[i])
			}
		}
		if len(g) != 2*n+np {
			t.Errorf("%s: gradient length %d", lik.Name(), len(g))
		}
	}
}

// At v → 0 the derivative in v switches to the limit formula; both sides agree.
func TestBernoulliSmallVariance(t *testing.T) {
	ber := mustBernoulli(DefaultQuadraturePoints)
	dv := func(vv float64) float64 {
		tp := ad.NewTape()
		mu := tp.Const(mat.NewDense(1, 1, []float64{-1.3}))
		v := tp.Var(mat.NewDense(1, 1, []float64{vv}))
		out := ber.VarExp(nil, "", mu, v, mat.NewDense(1, 1, []float64{1}))
		tp.Backward(out)
		return v.Grad().At(0, 0)
	}
	_, _, d2 := logNormCDFDerivs(-1.3)
	for _, vv := range []float64{0, 1e-13, 1e-10, 1e-8} {
		if e := testhelp.RelErr(dv(vv), 0.5*d2); e > 1e-6 {
			t.Errorf("v=%g: dVarExp/dv %.12g, want ½h″(μ) = %.12g", vv, dv(vv), 0.5*d2)
		}
	}
}

func TestNewAndLabels(t *testing.T) {
	for _, name := range Names() {
		l, err := New(name)
		if err != nil || l.Name() != name {
			t.Errorf("New(%q) = %v, %v", name, l, err)
		}
	}
	_, err := New("poisson")
	if err == nil || !strings.Contains(err.Error(), "bernoulli, gaussian") {
		t.Errorf("New(poisson) error %v should list the valid names", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "label 0") {
			t.Errorf("bad label: recovered %v", r)
		}
	}()
	tp := ad.NewTape()
	one := tp.Const(mat.NewDense(1, 1, []float64{1}))
	mustBernoulli(5).VarExp(nil, "", one, one, mat.NewDense(1, 1, []float64{0}))
}

func BenchmarkBernoulliVarExp(b *testing.B) {
	n := 10000
	rng := rand.New(rand.NewPCG(1, 1))
	mu, v, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		mu.Set(i, 0, rng.NormFloat64())
		v.Set(i, 0, rng.Float64())
		y.Set(i, 0, float64(2*rng.IntN(2)-1))
	}
	ber := mustBernoulli(DefaultQuadraturePoints)
	for b.Loop() {
		tp := ad.NewTape()
		ber.VarExp(nil, "", tp.Var(mu), tp.Var(v), y)
	}
}

// The parallel path (large N) gives the same values and gradients as
// evaluating points one at a time.
func TestBernoulliParallelChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 5000
	mu, v, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		mu.Set(i, 0, 2*rng.NormFloat64())
		v.Set(i, 0, rng.Float64())
		y.Set(i, 0, float64(2*rng.IntN(2)-1))
	}
	ber := mustBernoulli(DefaultQuadraturePoints)
	c := make([]float64, n)
	for i := range c {
		c[i] = 1
	}
	tp := ad.NewTape()
	mun, vn := tp.Var(mu), tp.Var(v)
	all := ber.VarExp(nil, "", mun, vn, y)
	tp.Backward(weightedSum(all, c))
	for _, i := range []int{0, 1, 2047, 2500, 4999} {
		t1 := ad.NewTape()
		m1 := t1.Var(mat.NewDense(1, 1, []float64{mu.At(i, 0)}))
		v1 := t1.Var(mat.NewDense(1, 1, []float64{v.At(i, 0)}))
		one := ber.VarExp(nil, "", m1, v1, mat.NewDense(1, 1, []float64{y.At(i, 0)}))
		t1.Backward(one)
		if one.Scalar() != all.Value().At(i, 0) || m1.Grad().At(0, 0) != mun.Grad().At(i, 0) || v1.Grad().At(0, 0) != vn.Grad().At(i, 0) {
			t.Errorf("point %d differs between batch and single evaluation", i)
		}
	}
}
