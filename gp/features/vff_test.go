package features

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// matern1D builds a bound 1-D Matérn kernel with the given hyperparameters.
func matern1D(t *testing.T, name string, variance, ls float64) (kernels.Kernel, kernels.Bound) {
	t.Helper()
	k, err := kernels.New(name, 1, kernels.Options{Variance: variance, Lengthscales: []float64{ls}})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	return k, k.Bind(s.Bind(ad.NewTape()), "k.")
}

func orderOf(name string) float64 {
	return map[string]float64{"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}[name]
}

// fn is a function given by its derivatives up to order 3.
type fn func(x float64, j int) float64

// rkhsInner is the Matérn-ν RKHS inner product on [a, b] computed by
// quadrature from its state-space form (independent of the closed forms):
// κ_p/(λ^{2p−1}σ²) ∫ (D+λ)^p g (D+λ)^p h + s_g(a)ᵀ P∞⁻¹ s_h(a), with the
// integral split at the points in breaks (kinks of g or h).
func rkhsInner(g, h fn, nu, variance, ls float64, iv Interval, breaks ...float64) float64 {
	p := int(nu + 0.5)
	lam := math.Sqrt(2*nu) / ls
	kappa := map[int]float64{1: 0.5, 2: 0.25, 3: 3.0 / 16}[p]
	lop := func(f fn, x float64) float64 {
		s := 0.0
		for j := 0; j <= p; j++ {
			s += binom(p, j) * math.Pow(lam, float64(p-j)) * f(x, j)
		}
		return s
	}
	pts := append([]float64{iv.A}, breaks...)
	pts = append(pts, iv.B)
	integral := 0.0
	for i := 0; i+1 < len(pts); i++ {
		if pts[i+1] <= pts[i] {
			continue
		}
		integral += quad.Fixed(func(x float64) float64 { return lop(g, x) * lop(h, x) }, pts[i], pts[i+1], 400, nil, 0)
	}
	out := kappa / (math.Pow(lam, float64(2*p-1)) * variance) * integral
	pinv := stationaryStateInverse(p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			out += pinv[i][j] / (variance * math.Pow(lam, float64(i+j))) * g(iv.A, i) * h(iv.A, j)
		}
	}
	return out
}

// maternSection is x ↦ k(x0, x) and its x-derivatives.
func maternSection(nu, variance, ls, x0 float64) fn {
	lam := math.Sqrt(2*nu) / ls
	// k = σ² P(λr) e^{−λr}; P as coefficients in r.
	var poly []float64
	switch nu {
	case 0.5:
		poly = []float64{1}
	case 1.5:
		poly = []float64{1, lam}
	case 2.5:
		poly = []float64{1, lam, lam * lam / 3}
	}
	return func(x float64, j int) float64 {
		r := math.Abs(x - x0)
		c := append([]float64(nil), poly...)
		for k := 0; k < j; k++ { // (P e^{−λr})' = (P' − λP) e^{−λr}
			d := make([]float64, len(c))
			for i := range c {
				d[i] = -lam * c[i]
				if i+1 < len(c) {
					d[i] += float64(i+1) * c[i+1]
				}
			}
			c = d
		}
		v := 0.0
		for i := len(c) - 1; i >= 0; i-- {
			v = v*r + c[i]
		}
		v *= variance * math.Exp(-lam*r)
		if x < x0 && j%2 == 1 {
			v = -v
		}
		return v
	}
}

func harmonic(iv Interval, m int, sine bool) fn {
	w := 2 * math.Pi * float64(m) / iv.Width()
	return func(x float64, j int) float64 {
		ph := w*(x-iv.A) + float64(j)*math.Pi/2
		if sine {
			return math.Pow(w, float64(j)) * math.Sin(ph)
		}
		return math.Pow(w, float64(j)) * math.Cos(ph)
	}
}

// TestRKHSInnerReproduces checks the inner product used by the other tests:
// ⟨k(x0, ·), h⟩ = h(x0) for smooth h.
func TestRKHSInnerReproduces(t *testing.T) {
	iv := Interval{-0.5, 1.5}
	for _, nu := range []float64{0.5, 1.5, 2.5} {
		for _, x0 := range []float64{-0.5, 0.1, 0.77, 1.5} {
			h := func(x float64, j int) float64 { // h = e^{x/2} sin(3x) + x²
				s, c := math.Sincos(3 * x)
				e := math.Exp(x / 2)
				switch j {
				case 0:
					return e*s + x*x
				case 1:
					return e*(s/2+3*c) + 2*x
				case 2:
					return e*(s/4+3*c-9*s) + 2
				}
				return e * (s/8 + 3*c/4 - 9*s/2 + 3*c/2 - 9*s - 27*c)
			}
			got := rkhsInner(maternSection(nu, 1.7, 0.3, x0), h, nu, 1.7, 0.3, iv, x0)
			if want := h(x0, 0); math.Abs(got-want) > 1e-8 {
				t.Errorf("ν=%v x0=%v: ⟨k(x0,·),h⟩ = %.12g, h(x0) = %.12g", nu, x0, got, want)
			}
		}
	}
}

// TestVFFGramSpecVectors compares with odvff-spec §7 (σ² = 1, ℓ = 0.5,
// [0, 1], three frequencies).
func TestVFFGramSpecVectors(t *testing.T) {
	cases := []struct {
		kernel     string
		dcos, dsin []float64
		cosLow     [][]float64 // columns
		sinLow     []float64
	}{
		{"matern12", []float64{1.0, 5.434802, 20.239209}, []float64{5.434802, 20.239209}, [][]float64{{1, 1, 1}}, nil},
		{"matern32", []float64{0.866025, 7.968719, 86.815003}, []float64{7.968719, 86.815003}, [][]float64{{1, 1, 1}}, []float64{1.813799, 3.627599}},
		{"matern52", []float64{0.838525, 11.027435, 295.137399}, []float64{11.027435, 295.137399},
			[][]float64{{-0.353553, 1.740106, 8.021084}, {1, 1, 1}}, []float64{2.433467, 4.866934}},
	}
	for _, c := range cases {
		k, kb := matern1D(t, c.kernel, 1, 0.5)
		f, err := NewVFF(k, []Interval{{0, 1}}, 3, Additive, false)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Kuu(kb).Value()
		want := mat.NewDense(5, 5, nil)
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				v := 0.0
				for _, col := range c.cosLow {
					v += col[i] * col[j]
				}
				if i == j {
					v += c.dcos[i]
				}
				want.Set(i, j, v)
			}
		}
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				v := 0.0
				if c.sinLow != nil {
					v = c.sinLow[i] * c.sinLow[j]
				}
				if i == j {
					v += c.dsin[i]
				}
				want.Set(3+i, 3+j, v)
			}
		}
		if !mat.EqualApprox(got, want, 2e-5) {
			t.Errorf("%s: Kuu =\n%v\nwant\n%v", c.kernel, mat.Formatted(got), mat.Formatted(want))
		}
	}
}

// TestVFFGramQuadrature compares the closed-form Kuu with the RKHS inner
// products of the harmonics computed by quadrature.
func TestVFFGramQuadrature(t *testing.T) {
	iv := Interval{-0.3, 1.9}
	for _, name := range []string{"matern12", "matern32", "matern52"} {
		k, kb := matern1D(t, name, 1.4, 0.35)
		f, err := NewVFF(k, []Interval{iv}, 4, Additive, false)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Kuu(kb).Value()
		var basis []fn
		for m := 0; m < 4; m++ {
			basis = append(basis, harmonic(iv, m, false))
		}
		for m := 1; m < 4; m++ {
			basis = append(basis, harmonic(iv, m, true))
		}
		for i, g := range basis {
			for j, h := range basis {
				want := rkhsInner(g, h, orderOf(name), 1.4, 0.35, iv)
				if d := math.Abs(got.At(i, j) - want); d > 1e-8*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: Kuu[%d,%d] = %.12g, quadrature %.12g", name, i, j, got.At(i, j), want)
				}
			}
		}
	}
}

// qff is φ(x)ᵀ Kuu⁻¹ φ(x') for a 1-D VFF.
func qff(t *testing.T, f *IntervalFeature, kb kernels.Bound, x, y float64) float64 {
	t.Helper()
	phi, err := f.Phi(mat.NewDense(2, 1, []float64{x, y}))
	if err != nil {
		t.Fatal(err)
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(f.M(), f.Kuu(kb).Value().RawMatrix().Data)) {
		t.Fatal("Kuu not positive definite")
	}
	var s mat.Dense
	if err := ch.SolveTo(&s, phi); err != nil {
		t.Fatal(err)
	}
	var q mat.Dense
	q.Mul(phi.T(), &s)
	return q.At(0, 1)
}

// TestVFFQffConverges checks Qff → Kff inside the interval as the number
// of frequencies grows (odvff-spec §7 reference values for F = 60), and
// the halved variance at the interval ends.
func TestVFFQffConverges(t *testing.T) {
	iv := Interval{-1, 2}
	cases := []struct {
		kernel string
		x, y   float64
		want   float64 // F = 60 reference
		tol    float64
	}{
		{"matern32", 0.3, 0.3, 1.2998, 1e-4},
		{"matern32", 0.3, 0.4, 1.0203, 1e-4},
		{"matern32", 0.5, 0.9, 0.1817, 1e-4},
		{"matern32", -1, -1, 0.65, 1e-4},
		{"matern52", 0.3, 0.3, 1.3000, 1e-4},
		{"matern52", 0.3, 0.4, 1.0772, 1e-4},
		{"matern52", -1, -1, 0.65, 1e-4},
		{"matern12", 0.3, 0.3, 1.2674, 1e-4},
		{"matern12", 0.3, 0.4, 0.7884, 1e-4},
	}
	for _, c := range cases {
		k, kb := matern1D(t, c.kernel, 1.3, 0.2)
		f, err := NewVFF(k, []Interval{iv}, 61, Additive, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := qff(t, f, kb, c.x, c.y); math.Abs(got-c.want) > c.tol {
			t.Errorf("%s q(%v,%v) = %.5f, want %.4f", c.kernel, c.x, c.y, got, c.want)
		}
	}
	// Monotone convergence of the gap k − q at interior points.
	for _, name := range []string{"matern12", "matern32", "matern52"} {
		k, kb := matern1D(t, name, 1.3, 0.2)
		kv := kernels.Matrix(k, mustSet(t, k), "k.", mat.NewDense(1, 1, []float64{0.3}), mat.NewDense(1, 1, []float64{0.45})).At(0, 0)
		prev := math.Inf(1)
		for _, m := range []int{5, 10, 20, 40, 80, 160} {
			f, err := NewVFF(k, []Interval{iv}, m, Additive, false)
			if err != nil {
				t.Fatal(err)
			}
			gap := math.Abs(kv - qff(t, f, kb, 0.3, 0.45))
			if gap > prev+1e-12 {
				t.Errorf("%s: |k − q| grew from %g to %g at %d frequencies", name, prev, gap, m)
			}
			prev = gap
		}
		if prev > 0.02 {
			t.Errorf("%s: |k − q| = %g with 160 frequencies", name, prev)
		}
	}
}

func mustSet(t *testing.T, k kernels.Kernel) *param.Set {
	s := param.NewSet()
	if err := k.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVFFKroneckerAndAdditive checks the structure of D = 2 features
// against explicit products and sums.
func TestVFFKroneckerAndAdditive(t *testing.T) {
	ivs := []Interval{{0, 1}, {-1, 2}}
	k1, _ := kernels.New("matern32", 1, kernels.Options{Lengthscales: []float64{0.4}})
	k2, _ := kernels.New("matern52", 1, kernels.Options{Lengthscales: []float64{0.7}, Variance: 2})
	sep, err := NewSeparable(k1, k2)
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := sep.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	kb := sep.Bind(s.Bind(ad.NewTape()), "k.")
	f, err := NewVFF(sep, ivs, 3, Kronecker, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.M() != 25 {
		t.Fatalf("M = %d, want 25", f.M())
	}
	x := mat.NewDense(3, 2, []float64{0.1, 0.2, 0.9, -0.5, 0.5, 1.9})
	phi, err := f.Phi(x)
	if err != nil {
		t.Fatal(err)
	}
	g := f.Grams(kb)
	kuu := f.Kuu(kb).Value()
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			for n := 0; n < 3; n++ {
				a := mat.NewDense(5, 1, nil)
				b := mat.NewDense(5, 1, nil)
				f.bases[0].fill([]float64{x.At(n, 0)}, a)
				f.bases[1].fill([]float64{x.At(n, 1)}, b)
				if d := phi.At(i*5+j, n) - a.At(i, 0)*b.At(j, 0); math.Abs(d) > 1e-14 {
					t.Fatalf("Φ[%d,%d] off by %g", i*5+j, n, d)
				}
			}
			for k := 0; k < 5; k++ {
				for l := 0; l < 5; l++ {
					want := g[0].Value().At(i, k) * g[1].Value().At(j, l)
					if d := kuu.At(i*5+j, k*5+l) - want; math.Abs(d) > 1e-12*math.Abs(want)+1e-14 {
						t.Fatalf("Kuu[%d,%d] off by %g", i*5+j, k*5+l, d)
					}
				}
			}
		}
	}
	// Mask: frequency pairs with (m1/2)² + (m2/2)² ≤ 1.
	fm, err := NewVFF(sep, ivs, 3, Kronecker, true)
	if err != nil {
		t.Fatal(err)
	}
	// Per dimension, frequencies (0,1,2,1,2) for rows cos0..2, sin1..2; the
	// pairs outside the circle are those with both indices 2 or (2,1)/(1,2)
	// → kept: 25 − (4 [2,2]) − (8 [2,1],[1,2]) = 13.
	if fm.M() != 13 {
		t.Errorf("masked M = %d, want 13", fm.M())
	}
	if r, c := fm.Kuu(kb).Dims(); r != 13 || c != 13 {
		t.Errorf("masked Kuu is %d×%d", r, c)
	}

	// Additive: block diagonal, Φ stacked.
	add, err := kernels.Additive(k1, k2)
	if err != nil {
		t.Fatal(err)
	}
	s2 := mustSet(t, add)
	kb2 := add.Bind(s2.Bind(ad.NewTape()), "k.")
	fa, err := NewVFF(add, ivs, 3, Additive, false)
	if err != nil {
		t.Fatal(err)
	}
	if fa.M() != 10 {
		t.Fatalf("additive M = %d", fa.M())
	}
	ka := fa.Kuu(kb2).Value()
	for i := 0; i < 5; i++ {
		for j := 5; j < 10; j++ {
			if ka.At(i, j) != 0 || ka.At(j, i) != 0 {
				t.Fatalf("additive Kuu not block diagonal at %d,%d", i, j)
			}
		}
	}
}

func TestVFFGradients(t *testing.T) {
	for _, name := range []string{"matern12", "matern32", "matern52"} {
		k, _ := matern1D(t, name, 1, 1)
		f, err := NewVFF(k, []Interval{{-0.2, 1.3}}, 4, Additive, false)
		if err != nil {
			t.Fatal(err)
		}
		err = ad.CheckGradient(func(tp *ad.Tape, xs []*ad.Node) *ad.Node {
			return f.Grams(&fakeMatern{v: xs[0], l: xs[1]})[0]
		}, []*mat.Dense{mat.NewDense(1, 1, []float64{1.3}), mat.NewDense(1, 1, []float64{0.4})}, 1e-6, 1e-6)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fakeMatern exposes variance and lengthscale nodes as a SpectralBound for
// gradient checks of the Gram matrices.
type fakeMatern struct{ v, l *ad.Node }

func (f *fakeMatern) K(x, z *ad.Node) *ad.Node           { panic("unused") }
func (f *fakeMatern) Diag(x *ad.Node) *ad.Node           { panic("unused") }
func (f *fakeMatern) Variance() *ad.Node                 { return f.v }
func (f *fakeMatern) Lengthscales() *ad.Node             { return f.l }
func (f *fakeMatern) Density(*mat.Dense) *ad.Node        { panic("unused") }
func (f *fakeMatern) Density1D(*mat.Dense, int) *ad.Node { panic("unused") }

func TestStructuralOpsGradients(t *testing.T) {
	a := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	b := mat.NewDense(3, 2, []float64{0.5, -1, 2, 0.3, 0.7, 1.1})
	sq := mat.NewDense(3, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	for name, f := range map[string]func(*ad.Tape, []*ad.Node) *ad.Node{
		"kron":      func(_ *ad.Tape, x []*ad.Node) *ad.Node { return Kron(x[0], x[1]) },
		"blockdiag": func(_ *ad.Tape, x []*ad.Node) *ad.Node { return BlockDiag(x[0], x[1], x[2]) },
		"select":    func(_ *ad.Tape, x []*ad.Node) *ad.Node { return SelectSym(Kron(x[2], x[2]), []int{0, 2, 4, 7}) },
		"mode": func(_ *ad.Tape, x []*ad.Node) *ad.Node {
			y := ModeProduct(x[2], ad.VCat(x[1], ad.Scale(-2, x[1])), []int{2, 3}, 1) // 6×2 rows on a 2×3 grid
			return ModeProduct(x[3], y, []int{2, 3}, 0)
		},
	} {
		if err := ad.CheckGradient(f, []*mat.Dense{a, b, sq, mat.NewDense(2, 2, []float64{1, -2, 0.5, 3})}, 1e-6, 1e-7); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestVFFBadInput(t *testing.T) {
	se, _ := kernels.New("se", 1, kernels.Options{})
	m32, _ := kernels.New("matern32", 1, kernels.Options{})
	m32x2, _ := kernels.New("matern32", 2, kernels.Options{})
	per, _ := kernels.New("periodic", 1, kernels.Options{})
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"se", func() error { _, e := NewVFF(se, []Interval{{0, 1}}, 5, Additive, false); return e }, "matern12, matern32 and matern52"},
		{"periodic", func() error { _, e := NewVFF(per, []Interval{{0, 1}}, 5, Additive, false); return e }, "matern12, matern32 and matern52"},
		{"2-D stationary", func() error { _, e := NewVFF(m32x2, []Interval{{0, 1}, {0, 1}}, 5, Additive, false); return e }, "additive"},
		{"empty interval", func() error { _, e := NewVFF(m32, []Interval{{1, 1}}, 5, Additive, false); return e }, "a < b"},
		{"no frequencies", func() error { _, e := NewVFF(m32, []Interval{{0, 1}}, 0, Additive, false); return e }, "frequencies"},
		{"mask additive", func() error { _, e := NewVFF(m32, []Interval{{0, 1}}, 5, Additive, true); return e }, "Kronecker"},
		{"mask too small", func() error { _, e := NewVFF(m32, []Interval{{0, 1}}, 1, Kronecker, true); return e }, "more frequencies"},
		{"outside", func() error {
			f, _ := NewVFF(m32, []Interval{{0, 1}}, 5, Additive, false)
			_, e := f.Phi(mat.NewDense(2, 1, []float64{0.5, 1.2}))
			return e
		}, "widen the interval"},
		{"nan input", func() error {
			f, _ := NewVFF(m32, []Interval{{0, 1}}, 5, Additive, false)
			_, e := f.Phi(mat.NewDense(1, 1, []float64{math.NaN()}))
			return e
		}, "input [0,0] is NaN"},
	}
	for _, c := range cases {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestPaddedIntervals(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 5, 1, 5, -2, 5})
	ivs, err := PaddedIntervals(x, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Interval{{-2.1, 1.1}, {4.9, 5.1}}
	for d := range want {
		if math.Abs(ivs[d].A-want[d].A) > 1e-15 || math.Abs(ivs[d].B-want[d].B) > 1e-15 {
			t.Errorf("dimension %d: %v, want %v", d, ivs[d], want[d])
		}
	}
	if _, err := PaddedIntervals(x, -1); err == nil {
		t.Error("negative margin accepted")
	}
}

func ExampleNewVFF() {
	k, _ := kernels.New("matern32", 1, kernels.Options{Lengthscales: []float64{0.2}})
	f, _ := NewVFF(k, []Interval{{0, 1}}, 30, Additive, false)
	phi, _ := f.Phi(mat.NewDense(2, 1, []float64{0.25, 0.5}))
	r, c := phi.Dims()
	fmt.Println(f.Name(), f.M(), r, c)
	// Output: vff(additive) 59 59 2
}

// TestSeparableKernel checks k(x, z) = Π_d k_d(x_d, z_d) and its diagonal.
func TestSeparableKernel(t *testing.T) {
	k1, _ := kernels.New("matern12", 1, kernels.Options{Variance: 2, Lengthscales: []float64{0.3}})
	k2, _ := kernels.New("matern52", 1, kernels.Options{Lengthscales: []float64{1.7}})
	sep, err := NewSeparable(k1, k2)
	if err != nil {
		t.Fatal(err)
	}
	if sep.Name() != "separable(matern12,matern52)" {
		t.Errorf("name %q", sep.Name())
	}
	s := mustSet(t, sep)
	x := mat.NewDense(3, 2, []float64{0, 0, 0.5, -1, 1.2, 0.3})
	z := mat.NewDense(2, 2, []float64{0.1, 0.2, -0.4, 2})
	got := kernels.Matrix(sep, s, "k.", x, z)
	for i := 0; i < 3; i++ {
		for j := 0; j < 2; j++ {
			r1 := math.Abs(x.At(i, 0)-z.At(j, 0)) / 0.3
			r2 := math.Sqrt(5) * math.Abs(x.At(i, 1)-z.At(j, 1)) / 1.7
			want := 2 * math.Exp(-r1) * (1 + r2 + r2*r2/3) * math.Exp(-r2)
			if math.Abs(got.At(i, j)-want) > 1e-12 {
				t.Errorf("k[%d,%d] = %v, want %v", i, j, got.At(i, j), want)
			}
		}
	}
	for _, v := range kernels.DiagValues(sep, s, "k.", x) {
		if math.Abs(v-2) > 1e-15 {
			t.Errorf("k(x, x) = %v, want 2", v)
		}
	}
	se2, _ := kernels.New("se", 2, kernels.Options{})
	if _, err := NewSeparable(k1, se2); err == nil {
		t.Error("2-D component accepted")
	}
}

type fakeParts struct{ parts []kernels.Bound }

func (f fakeParts) Parts() []kernels.Bound { return f.parts }
func (fakeParts) K(x, z *ad.Node) *ad.Node { panic("unused") }
func (fakeParts) Diag(x *ad.Node) *ad.Node { panic("unused") }

// TestWhitenerMatchesDense: the structured whitening is L⁻¹ for a square
// root of the dense Kuu (L⁻¹KuuL⁻ᵀ = I), and its gradients agree with
// finite differences.
func TestWhitenerMatchesDense(t *testing.T) {
	m32, _ := kernels.New("matern32", 1, kernels.Options{})
	m52, _ := kernels.New("matern52", 1, kernels.Options{})
	m12, _ := kernels.New("matern12", 1, kernels.Options{})
	sep3, _ := NewSeparable(m32, m52, m12)
	sep2, _ := NewSeparable(m52, m32)
	add, _ := kernels.Additive(m32, m52, m12)
	ivs := []Interval{{0, 1}, {-1, 1}, {0, 3}}
	build := []struct {
		name string
		f    func() (*IntervalFeature, error)
	}{
		{"additive vff", func() (*IntervalFeature, error) { return NewVFF(add, ivs, 3, Additive, false) }},
		{"1-D vff matern52", func() (*IntervalFeature, error) { return NewVFF(m52, ivs[1:2], 5, Additive, false) }},
		{"1-D vff one frequency", func() (*IntervalFeature, error) { return NewVFF(m32, ivs[:1], 1, Additive, false) }},
		{"kronecker vff 3-D", func() (*IntervalFeature, error) { return NewVFF(sep3, ivs, 2, Kronecker, false) }},
		{"masked vff", func() (*IntervalFeature, error) { return NewVFF(sep2, ivs[:2], 4, Kronecker, true) }},
		{"kronecker bspline", func() (*IntervalFeature, error) { return NewBSplines(sep2, ivs[:2], 5, Kronecker) }},
		{"1-D bspline", func() (*IntervalFeature, error) { return NewBSplines(m32, ivs[:1], 6, Additive) }},
	}
	for _, c := range build {
		f, err := c.f()
		if err != nil {
			t.Fatal(err)
		}
		d := f.Dim()
		inputs := []*mat.Dense{}
		for i := 0; i < d; i++ {
			inputs = append(inputs, mat.NewDense(1, 1, []float64{0.8 + 0.3*float64(i)}), mat.NewDense(1, 1, []float64{0.3 + 0.2*float64(i)}))
		}
		bmat := mat.NewDense(f.M(), 3, nil)
		for i := 0; i < f.M(); i++ {
			for j := 0; j < 3; j++ {
				bmat.Set(i, j, math.Sin(float64(3*i+j)))
			}
		}
		inputs = append(inputs, bmat)
		kernel := func(xs []*ad.Node) kernels.Bound {
			if d == 1 {
				return &fakeMatern{v: xs[0], l: xs[1]}
			}
			parts := make([]kernels.Bound, d)
			for i := range parts {
				parts[i] = &fakeMatern{v: xs[2*i], l: xs[2*i+1]}
			}
			return fakeParts{parts}
		}
		// Values against the dense Cholesky factor.
		tp := ad.NewTape()
		xs := make([]*ad.Node, len(inputs))
		for i, in := range inputs {
			xs[i] = tp.Const(in)
		}
		w, err := f.Whitener(kernel(xs), 3)
		if err != nil {
			t.Fatal(err)
		}
		// L may be any square root (the VFF blocks' is not triangular):
		// check L⁻¹ Kuu L⁻ᵀ = I, and that w is linear, w(B) = L⁻¹B.
		m := f.M()
		id := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			id.Set(i, i, 1)
		}
		linv := w(tp.Const(id)).Value()
		var lk, lkl mat.Dense
		lk.Mul(linv, f.Kuu(kernel(xs)).Value())
		lkl.Mul(&lk, linv.T())
		if !mat.EqualApprox(&lkl, id, 1e-9) {
			t.Errorf("%s: L⁻¹ Kuu L⁻ᵀ ≠ I", c.name)
		}
		var want mat.Dense
		want.Mul(linv, bmat)
		if got := w(xs[len(xs)-1]).Value(); !mat.EqualApprox(got, &want, 1e-12) {
			t.Errorf("%s: whitening of B differs from L⁻¹B", c.name)
		}
		err = ad.CheckGradient(func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
			w, err := f.Whitener(kernel(xs), 3)
			if err != nil {
				t.Fatal(err)
			}
			return w(xs[len(xs)-1])
		}, inputs, 1e-6, 1e-6)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
