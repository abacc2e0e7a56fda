package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/gp/sphere"
	"sgplab/internal/testhelp"
)

// vish-spec §1.13: S(√(ℓ(ℓ+d−2))) for Matérn-3/2, κ = 1, D_S = d−1.
func TestSphereSpectralDensityReference(t *testing.T) {
	ref := map[int][]float64{
		3: {6.28319, 1.75210, 0.403067, 0.112397, 0.0386068, 0.0156566, 0.00721027, 0.00366314},
		9: {18183, 14.3276, 0.408909, 0.0340413, 0.00486738, 0.000971539, 0.000243874, 7.24545e-5},
	}
	for d, want := range ref {
		for l, w := range want {
			got := SphereSpectralDensity(1.5, d, 1, math.Sqrt(float64(l*(l+d-2))))
			if math.Abs(got-w) > 6e-6*w {
				t.Errorf("d=%d ℓ=%d: S = %.7g, want %g", d, l, got, w)
			}
		}
	}
}

func zonalBind(t *testing.T, name string, dim int, opts Options) (ZonalBound, *param.Set) {
	t.Helper()
	k, err := New(name, dim, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "kern."); err != nil {
		t.Fatal(err)
	}
	zb, ok := k.Bind(s.Bind(ad.NewTape()), "kern.").(ZonalBound)
	if !ok {
		t.Fatalf("%s is not zonal", name)
	}
	return zb, s
}

// The spectral coefficients are the density at √(ℓ(ℓ+d−2)) up to one
// constant, chosen so that the truncated series has s(1) = σ².
func TestSpectralCoefficients(t *testing.T) {
	for _, c := range []struct {
		name string
		nu   float64
		dim  int
	}{{"sphere-matern32", 1.5, 8}, {"sphere-matern52", 2.5, 2}, {"sphere-matern12", 0.5, 4}, {"sphere-se", 0, 2}} {
		zb, _ := zonalBind(t, c.name, c.dim, Options{Variance: 1.7, Lengthscales: []float64{0.6}, Truncation: 40})
		d := zb.SphereDim()
		lam, err := zb.Coefficients(39)
		if err != nil {
			t.Fatal(err)
		}
		s1 := 0.0
		for l := 0; l < 40; l++ {
			s1 += lam.Value().At(l, 0) * sphere.MercerWeight(d, l)
			ratio := lam.Value().At(l, 0) / lam.Value().At(0, 0)
			want := SphereSpectralDensity(c.nu, d, 0.6, math.Sqrt(float64(l*(l+d-2)))) / SphereSpectralDensity(c.nu, d, 0.6, 0)
			if math.Abs(ratio-want) > 1e-12*want+1e-300 {
				t.Errorf("%s ℓ=%d: λ_ℓ/λ_0 = %.15g, S ratio %.15g", c.name, l, ratio, want)
			}
		}
		if math.Abs(s1-1.7) > 1e-13 {
			t.Errorf("%s: s(1) = Σ λ N/Ω = %.16g, want σ² = 1.7", c.name, s1)
		}
		if _, err := zb.Coefficients(40); err == nil {
			t.Errorf("%s: coefficients beyond the truncation accepted", c.name)
		}
	}
}

// K equals the Mercer sum over an explicit orthonormal basis,
// ρρ' Σ_m λ_ℓ(m) φ_m(x̂) φ_m(ẑ): the kernels, ZonalSeries and the basis
// agree. For the chordal kernels the sum converges (λ_ℓ N ~ ℓ^{−2ν−1}).
func TestZonalMercerBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, c := range []struct {
		name   string
		dim    int
		levels int
		tol    float64
	}{
		{"sphere-matern32", 2, 12, 1e-12}, {"sphere-se", 4, 8, 1e-12},
		{"chordal-matern52", 2, 80, 1e-8}, {"chordal-se", 3, 20, 1e-12},
	} {
		opts := Options{Variance: 1.3, Lengthscales: []float64{0.9}, WeightVariances: []float64{0.8}, BiasVariance: 1.2, Truncation: c.levels}
		zb, _ := zonalBind(t, c.name, c.dim, opts)
		x := testhelp.RandMat(rng, 5, c.dim, 1)
		z := testhelp.RandMat(rng, 4, c.dim, 1)
		tp := zb.ShapeAtOne().Tape()
		xn, zn := tp.Const(x), tp.Const(z)
		k := zb.K(xn, zn).Value()
		rx, xh, _ := Radius(zb.Augment(xn))
		rz, zh, _ := Radius(zb.Augment(zn))
		basis, err := sphere.NewBasis(zb.SphereDim(), c.levels-1)
		if err != nil {
			t.Fatal(err)
		}
		px, _ := basis.Eval(xh.Value())
		pz, _ := basis.Eval(zh.Value())
		lam, _ := zb.Coefficients(c.levels - 1)
		lev := basis.LevelOf()
		for i := 0; i < 5; i++ {
			for j := 0; j < 4; j++ {
				s := 0.0
				for m, l := range lev {
					s += lam.Value().At(l, 0) * px.At(m, i) * pz.At(m, j)
				}
				want := rx.Value().At(i, 0) * rz.Value().At(j, 0) * s
				if math.Abs(k.At(i, j)-want) > c.tol*(1+math.Abs(want)) {
					t.Errorf("%s: K[%d,%d] = %.15g, Mercer sum %.15g", c.name, i, j, k.At(i, j), want)
				}
			}
		}
		// The diagonal is ρ² s(1).
		diag := zb.Diag(xn).Value()
		kk := zb.K(xn, xn).Value()
		for i := 0; i < 5; i++ {
			if math.Abs(diag.At(i, 0)-kk.At(i, i)) > 1e-12*diag.At(i, 0) {
				t.Errorf("%s: Diag %v, K(x,x) %v", c.name, diag.At(i, 0), kk.At(i, i))
			}
		}
	}
}

// Chordal kernels are the closed form σ² f(‖x̂ − ẑ‖/ℓ) ρρ'.
func TestChordalClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for _, p := range []profile{matern12, matern32, matern52, se} {
		zb, _ := zonalBind(t, "chordal-"+string(p), 3, Options{Variance: 0.7, Lengthscales: []float64{1.4}, WeightVariances: []float64{0.5, 1, 2}, ARD: true, BiasVariance: 0.3})
		x := testhelp.RandMat(rng, 4, 3, 1)
		tp := zb.ShapeAtOne().Tape()
		k := zb.K(tp.Const(x), tp.Const(x)).Value()
		for i := 0; i < 4; i++ {
			for j := 0; j < 4; j++ {
				xi := []float64{x.At(i, 0) * math.Sqrt(0.5), x.At(i, 1), x.At(i, 2) * math.Sqrt(2), math.Sqrt(0.3)}
				xj := []float64{x.At(j, 0) * math.Sqrt(0.5), x.At(j, 1), x.At(j, 2) * math.Sqrt(2), math.Sqrt(0.3)}
				ni, nj := math.Sqrt(dot4(xi, xi)), math.Sqrt(dot4(xj, xj))
				d2 := 0.0
				for k := range xi {
					d := xi[k]/ni - xj[k]/nj
					d2 += d * d
				}
				f, _ := p.eval(d2 / (1.4 * 1.4))
				want := 0.7 * ni * nj * f
				if math.Abs(k.At(i, j)-want) > 1e-13*want {
					t.Errorf("chordal-%s: K[%d,%d] = %.16g, closed form %.16g", p, i, j, k.At(i, j), want)
				}
			}
		}
	}
}

func dot4(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The arc-cosine kernels' coefficients: vanishing levels by parity are
// zero to quadrature accuracy before the rule sets them exactly, and the
// Mercer series (radial power n) reproduces K.
func TestArcCosineZonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	for order, tol := range []float64{2e-3, 2e-5, 2e-6} {
		name := fmt.Sprintf("arccos%d", order)
		zb, _ := zonalBind(t, name, 2, Options{Variance: 1.3, WeightVariances: []float64{0.7}, BiasVariance: 1.1})
		if zb.RadialPower() != order || zb.SphereDim() != 3 {
			t.Fatalf("%s: radial power %d, sphere dimension %d", name, zb.RadialPower(), zb.SphereDim())
		}
		raw, _, err := sphere.FunkHecke(3, 30, func(t float64) (float64, float64) { return ArcCosineShape(order, t), 0 }, sphere.Parity{})
		if err != nil {
			t.Fatal(err)
		}
		for l := range raw {
			if zb.Parity().Zero(l) && math.Abs(raw[l]) > 1e-14*raw[0] {
				t.Errorf("%s: level %d should vanish, quadrature gives %g", name, l, raw[l])
			}
			if !zb.Parity().Zero(l) && math.Abs(raw[l]) < 1e-12 {
				t.Errorf("%s: level %d vanishes (%g) but parity does not say so", name, l, raw[l])
			}
		}
		const levels = 200
		lam, err := zb.Coefficients(levels - 1)
		if err != nil {
			t.Fatal(err)
		}
		x := testhelp.RandMat(rng, 4, 2, 1)
		tp := zb.ShapeAtOne().Tape()
		xn := tp.Const(x)
		k := zb.K(xn, xn).Value()
		rho, xh, _ := Radius(zb.Augment(xn))
		series := ZonalSeries(cosines(xh, xh), lam, 3).Value()
		for i := 0; i < 4; i++ {
			for j := 0; j < 4; j++ {
				want := k.At(i, j)
				got := math.Pow(rho.Value().At(i, 0)*rho.Value().At(j, 0), float64(order)) * series.At(i, j)
				if math.Abs(got-want) > tol*want {
					t.Errorf("%s: K[%d,%d] = %.10g, Mercer series (%d levels) %.10g", name, i, j, want, levels, got)
				}
			}
		}
		// s(1) = σ² J_n(0)/π.
		if got, want := zb.ShapeAtOne().Scalar(), 1.3*[]float64{1, 1, 3}[order]; got != want {
			t.Errorf("%s: s(1) = %v, want %v", name, got, want)
		}
	}
}

// Coefficients are differentiable in the variance and lengthscale.
func TestZonalCoefficientGradients(t *testing.T) {
	for _, name := range []string{"sphere-matern32", "sphere-se", "chordal-matern52", "chordal-matern12", "arccos1"} {
		k, err := New(name, 3, Options{Variance: 1.2, Lengthscales: []float64{0.7}, Truncation: 20})
		if err != nil {
			t.Fatal(err)
		}
		s := param.NewSet()
		_ = k.Declare(s, "kern.")
		w := mat.NewDense(10, 1, []float64{1, -0.5, 0.3, 2, -1, 0.7, 0.2, -0.3, 1.5, 0.9})
		f := func(v []float64) float64 {
			s.SetVector(v)
			tp := ad.NewTape()
			c, err := k.Bind(s.Bind(tp), "kern.").(ZonalBound).Coefficients(9)
			if err != nil {
				t.Fatal(err)
			}
			return dotAll(c.Value(), w)
		}
		v0 := s.Vector()
		tp := ad.NewTape()
		bs := s.Bind(tp)
		c, _ := k.Bind(bs, "kern.").(ZonalBound).Coefficients(9)
		out := ad.Sum(ad.Mul(c, tp.Const(w)))
		tp.Backward(out)
		got := bs.Gradient()
		want := fd.Gradient(nil, f, append([]float64(nil), v0...), &fd.Settings{Formula: fd.Central, Step: 1e-6})
		compareGrad(t, name, got, want, 1e-7)
	}
}

func TestZonalSeriesGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tv := mat.NewDense(3, 4, nil)
	for i := range tv.RawMatrix().Data {
		tv.RawMatrix().Data[i] = 1.9*rng.Float64() - 0.95 // cosines in (−1, 1)
	}
	c := testhelp.RandMat(rng, 7, 1, 1)
	for _, d := range []int{2, 3, 9} {
		err := ad.CheckGradient(func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
			return ZonalSeries(xs[0], xs[1], d)
		}, []*mat.Dense{tv, c}, 1e-6, 1e-7)
		if err != nil {
			t.Errorf("d=%d: %v", d, err)
		}
	}
}

func TestZonalBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		dim  int
		opts Options
	}{
		{"sphere-matern32", 2, Options{BiasColumns: 3}},
		{"sphere-matern32", 2, Options{Truncation: -1}},
		{"sphere-matern32", 2, Options{Truncation: 1000}},
		{"chordal-se", 2, Options{Lengthscales: []float64{1, 2}}},
		{"chordal-se", 2, Options{BiasVariance: -1}},
		{"sphere-matern42", 2, Options{}},
	} {
		if _, err := New(c.name, c.dim, c.opts); err == nil {
			t.Errorf("%s %+v accepted", c.name, c.opts)
		}
	}
	tp := ad.NewTape()
	if _, _, err := Radius(tp.Const(mat.NewDense(2, 3, []float64{1, 0, 0, 0, 0, 0}))); err == nil {
		t.Error("an augmented input of norm zero accepted")
	}
}

func TestAugmentValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, name := range []string{"sphere-matern32", "arccos1"} {
		zb, _ := zonalBind(t, name, 3, Options{WeightVariances: []float64{0.5, 2, 3}, ARD: true, BiasVariance: 0.4, BiasColumns: 1})
		x := testhelp.RandMat(rng, 4, 3, 1)
		want := zb.Augment(zb.ShapeAtOne().Tape().Const(x)).Value()
		got := zb.AugmentValue(nil, x)
		if !mat.EqualApprox(got, want, 1e-15) {
			t.Errorf("%s: AugmentValue %v, Augment %v", name, mat.Formatted(got), mat.Formatted(want))
		}
		dst := testhelp.RandMat(rng, 4, 4, 1) // arbitrary contents, overwritten
		if into := zb.AugmentValue(dst, x); into != dst || !mat.Equal(into, got) {
			t.Errorf("%s: AugmentValue into a matrix %v, into nil %v", name, mat.Formatted(into), mat.Formatted(got))
		}
	}
}

// TestZonalDiagSumRowByRow: the cached Σ ρ^{2p} over the training inputs
// is bitwise the sum over the rows of AugmentValue in row order, and is
// computed without an N×d matrix (at the airline set's 3.95M training
// rows x̃ was 284 MB of garbage).
func TestZonalDiagSumRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 50000
	x := testhelp.RandMat(rng, n, 3, 1)
	for _, name := range []string{"sphere-matern32", "arccos1"} {
		// Fixed weight and bias variances: the cached path of the
		// collapsed bound's trace term.
		k, err := New(name, 3, Options{WeightVariances: []float64{0.5, 2, 3}, ARD: true, BiasVariance: 0.4, BiasColumns: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := param.NewSet()
		_ = k.Declare(s, "")
		s.SetAllTrainable(false)
		zb := k.Bind(s.Bind(ad.NewTape()), "").(ZonalBound)
		xt := zb.AugmentValue(nil, x)
		want := 0.0
		for i := range n {
			r2 := 0.0
			for _, v := range xt.RawRowView(i) {
				r2 += v * v
			}
			want += math.Pow(r2, float64(zb.RadialPower()))
		}
		want *= zb.ShapeAtOne().Scalar()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := DiagSum(zb.ShapeAtOne().Tape(), zb, x).Scalar()
		runtime.ReadMemStats(&after)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: DiagSum %v, sum over the augmented rows %v", name, got, want)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > n*8 {
			t.Errorf("%s: DiagSum of %d rows allocated %d bytes; want less than one value per row", name, n, a)
		}
	}
}

// DiagSum caches Σρ² per input matrix and weight values: it must follow
// a change of the weight or bias variances and of the inputs.
func TestZonalDiagSumCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, name := range []string{"sphere-matern32", "arccos2"} {
		k, _ := New(name, 2, Options{ARD: true})
		s := param.NewSet()
		_ = k.Declare(s, "")
		s.SetAllTrainable(false)
		x := testhelp.RandMat(rng, 7, 2, 1)
		for step, w := range []float64{1, 1, 2.5, 2.5} {
			_ = s.SetValue("weight_variances", mat.NewDense(1, 2, []float64{w, 0.5}))
			if step == 3 {
				x = testhelp.RandMat(rng, 7, 2, 1)
			}
			tp := ad.NewTape()
			kb := k.Bind(s.Bind(tp), "")
			got := DiagSum(tp, kb, x).Scalar()
			want := ad.Sum(kb.Diag(tp.Const(x))).Scalar()
			if math.Abs(got-want) > 1e-12*want {
				t.Errorf("%s step %d: DiagSum %v, Σ Diag %v", name, step, got, want)
			}
		}
	}
}
