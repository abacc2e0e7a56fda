package features

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

func vofKernel(t *testing.T, name string, v, l float64) kernels.Kernel {
	t.Helper()
	k, err := kernels.New(name, 1, kernels.Options{Variance: v, Lengthscales: []float64{l}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// bindVOF declares k and f in a fresh set and binds both on a new tape.
func bindVOF(t *testing.T, k kernels.Kernel, f Feature) (*ad.Tape, kernels.Bound, Bound) {
	t.Helper()
	s := param.NewSet()
	if err := k.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	if err := f.Declare(s, "f."); err != nil {
		t.Fatal(err)
	}
	tp := ad.NewTape()
	b := s.Bind(tp)
	return tp, k.Bind(b, "k."), f.Bind(b, "f.")
}

func col(xs ...float64) *mat.Dense { return mat.NewDense(len(xs), 1, xs) }

// sigmaXFromR inverts r² = ℓ√(σx² + ℓ²/4).
func sigmaXFromR(r, l float64) float64 { return math.Sqrt(math.Pow(r, 4)/(l*l) - l*l/4) }

func TestHermiteKufSpecValues(t *testing.T) {
	// vof-spec §1.4: v = 0.7, ℓ = 0.5, r = 0.9 (8 digits, from quadrature).
	want := map[int][3]float64{
		0: {0.63364802, 0.27958652, 0.05187411},
		1: {0.34502771, -0.49477242, 0.15535286},
		2: {-0.19541063, 0.47428976, 0.30210961},
		3: {-0.26782119, -0.18862373, 0.42943382},
		5: {0.18793190, 0.22966743, 0.32311222},
		8: {-0.02946226, 0.11782125, -0.18422798},
	}
	k := vofKernel(t, "se", 0.7, 0.5)
	f, err := NewHermiteVOF(k, 9, sigmaXFromR(0.9, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	tp, kb, fb := bindVOF(t, k, f)
	kuf := fb.Kuf(kb, tp.Const(col(0.4, -1.3, 2.2))).Value()
	for row, m := range fb.(*BoundHermiteVOF).Degrees() {
		w, ok := want[m]
		if !ok {
			continue
		}
		for j := range 3 {
			if got := kuf.At(row, j); math.Abs(got-w[j]) > 6e-9 {
				t.Errorf("Kuf[m=%d](x_%d) = %.9f, want %.8f", m, j, got, w[j])
			}
		}
	}
}

// TestHermiteKufQuadrature checks the closed form against independent
// adaptive-free Gauss–Legendre quadrature of the defining integral (*), and
// the truncated spectral form used by the Monte-Carlo estimator.
func TestHermiteKufQuadrature(t *testing.T) {
	const v, l, r = 1.3, 0.8, 1.1
	k := vofKernel(t, "se", v, l)
	f, _ := NewHermiteVOF(k, 12, sigmaXFromR(r, l))
	xs := []float64{-2.5, -0.3, 0, 0.9, 3.1}
	tp, kb, fb := bindVOF(t, k, f)
	hb := fb.(*BoundHermiteVOF)
	closed := fb.Kuf(kb, tp.Const(col(xs...))).Value()
	c, w := CompositeLegendre(64, 16)
	spectral := SpectralKuf(hb, kb, tp.Const(col(xs...)), c, w).Value()
	for row, m := range hb.Degrees() {
		for j, x := range xs {
			integrand := func(om float64) float64 {
				// ψ_m with the phase replaced by the sign (−1)^⌊m/2⌋.
				hm := hermiteTable([]float64{r * om}, m)[m][0]
				psi := hm * math.Exp(-r*r*om*om/2) * math.Sqrt(r) / math.Pow(math.Pi, 0.25)
				if (m/2)%2 == 1 {
					psi = -psi
				}
				ss := math.Sqrt(v * l * math.Exp(-l*l*om*om/2))
				if m%2 == 0 {
					return psi * ss * math.Cos(om*x)
				}
				return psi * ss * math.Sin(om*x)
			}
			q := math.Pow(2*math.Pi, -0.25) * quad.Fixed(integrand, -40, 40, 2000, quad.Legendre{}, 0)
			if d := math.Abs(closed.At(row, j) - q); d > 1e-10 {
				t.Errorf("m=%d x=%v: closed %.12f, quadrature %.12f", m, x, closed.At(row, j), q)
			}
			if d := math.Abs(spectral.At(row, j) - q); d > 1e-10 {
				t.Errorf("m=%d x=%v: spectral form %.12f, quadrature %.12f", m, x, spectral.At(row, j), q)
			}
		}
	}
}

func TestHermiteQffConverges(t *testing.T) {
	// vof-spec §1.4 convergence table at x = 0.3, x' = 0.8.
	cases := []struct {
		m       int
		qxy, qx float64
	}{
		{5, 0.446930, 0.638549},
		{10, 0.432032, 0.692536},
		{20, 0.424816, 0.699721},
		{40, 0.424571, 0.699999},
	}
	k := vofKernel(t, "se", 0.7, 0.5)
	for _, c := range cases {
		f, _ := NewHermiteVOF(k, c.m, sigmaXFromR(0.9, 0.5))
		tp, kb, fb := bindVOF(t, k, f)
		kuf := fb.Kuf(kb, tp.Const(col(0.3, 0.8))).Value()
		var q mat.Dense
		q.Mul(kuf.T(), kuf)
		if math.Abs(q.At(0, 1)-c.qxy) > 2e-6 || math.Abs(q.At(0, 0)-c.qx) > 2e-6 {
			t.Errorf("M=%d: Q(x,x')=%.6f Q(x,x)=%.6f, want %.6f %.6f", c.m, q.At(0, 1), q.At(0, 0), c.qxy, c.qx)
		}
	}
}

func TestTrigKufSpecValues(t *testing.T) {
	// vof-spec §1.5, order [const, cos_1, sin_1, cos_2, sin_2].
	cases := []struct {
		kernel string
		v, l   float64
		a, x   float64
		want   [5]float64
	}{
		{"matern32", 1, 0.2, 10, 0.5, [5]float64{-0.07836183, 0.43665065, 0.34651783, 0.47801294, 0.54145591}},
		{"se", 0.5, 0.5, 6, -1.0, [5]float64{-0.00124361, 0.20406531, -0.19245535, 0.43448505, -0.44221567}},
	}
	for _, c := range cases {
		k := vofKernel(t, c.kernel, c.v, c.l)
		f, err := NewTrigVOF(k, 2, c.a)
		if err != nil {
			t.Fatal(err)
		}
		tp, kb, fb := bindVOF(t, k, f)
		kuf := fb.Kuf(kb, tp.Const(col(c.x))).Value()
		// Our order is [const, cos_1, cos_2, sin_1, sin_2].
		got := [5]float64{kuf.At(0, 0), kuf.At(1, 0), kuf.At(3, 0), kuf.At(2, 0), kuf.At(4, 0)}
		for i := range got {
			// The spec's signs are those of ψ with the sin part taken as
			// ∫ψ √s sin(ωx); the sign of a feature is irrelevant (Kuu = I),
			// and ours agree.
			if math.Abs(got[i]-c.want[i]) > 6e-9 {
				t.Errorf("%s: Kuf[%d] = %.9f, want %.8f", c.kernel, i, got[i], c.want[i])
			}
		}
	}
}

// TestTrigQffBandLimit checks vof-spec §3.1: with a = 10 the Matérn-3/2 (ℓ =
// 0.2) Q(x, x) at x = 0 tends to the band-limited variance 0.861 as M grows,
// and the quadrature Kuf equals a much finer rule.
func TestTrigQffBandLimit(t *testing.T) {
	k := vofKernel(t, "matern32", 1, 0.2)
	f, _ := NewTrigVOF(k, 30, 10)
	tp, kb, fb := bindVOF(t, k, f)
	x := tp.Const(col(0, 0.7, -2.9))
	kuf := fb.Kuf(kb, x).Value()
	c, w := CompositeLegendre(400, 20)
	fine := SpectralKuf(fb.(SpectralFeature), kb, x, c, w).Value()
	if !mat.EqualApprox(kuf, fine, 1e-12) {
		t.Errorf("automatic quadrature differs from a fine rule")
	}
	q0 := mat.Dot(kuf.ColView(0), kuf.ColView(0))
	// Band-limited variance ∫_{−a}^{a} s/√(2π): closed form for Matérn-3/2.
	lam := math.Sqrt(3) / 0.2
	bl := 2 / math.Pi * (math.Atan(10/lam) + 10*lam/(lam*lam+100))
	if math.Abs(q0-bl) > 1e-3 || math.Abs(bl-0.861) > 1e-3 {
		t.Errorf("Q(0,0) = %.5f, band-limited variance %.5f, spec 0.861", q0, bl)
	}
}

func TestSqrtSpectralDensityMatchesKernels(t *testing.T) {
	om := []float64{0, 0.7, 3.1, -5}
	for _, name := range spectralKernels {
		k := vofKernel(t, name, 1.7, 0.6)
		s := param.NewSet()
		_ = k.Declare(s, "")
		tp := ad.NewTape()
		kb := k.Bind(s.Bind(tp), "").(kernels.SpectralBound)
		xi := make([]float64, len(om))
		for i, o := range om {
			xi[i] = o / (2 * math.Pi)
		}
		dens := kb.Density1D(col(xi...), 0).Value()
		got, err := SqrtSpectralDensity(name, 1.7, 0.6, om)
		if err != nil {
			t.Fatal(err)
		}
		for i := range om {
			want := math.Sqrt(dens.At(i, 0) / math.Sqrt(2*math.Pi))
			if math.Abs(got[i]-want) > 1e-12*math.Max(1, want) {
				t.Errorf("%s: √s(%v) = %v, want %v", name, om[i], got[i], want)
			}
		}
	}
}

func TestVOFGradients(t *testing.T) {
	xs := col(-1.2, 0.1, 0.8, 2.0)
	c, w := CompositeLegendre(3, 5)
	cases := []struct {
		name string
		f    func(tp *ad.Tape, in []*ad.Node) *ad.Node
		at   []*mat.Dense
	}{
		{"hermite Kuf(v, l, σx, x)", func(tp *ad.Tape, in []*ad.Node) *ad.Node {
			kb := fakeSpectral{in[0], in[1]}
			return NewBoundHermiteVOF(in[2], 7).Kuf(kb, in[3])
		}, []*mat.Dense{col(0.7), col(0.5), col(1.3), xs}},
		{"hermite spectral (v, l, σx)", func(tp *ad.Tape, in []*ad.Node) *ad.Node {
			return SpectralKuf(NewBoundHermiteVOF(in[2], 6), fakeSpectral{in[0], in[1]}, tp.Const(xs), c, w)
		}, []*mat.Dense{col(0.7), col(0.5), col(1.3)}},
	}
	for _, fam := range spectralKernels {
		cases = append(cases, struct {
			name string
			f    func(tp *ad.Tape, in []*ad.Node) *ad.Node
			at   []*mat.Dense
		}{"trig spectral " + fam + " (v, l, a, x)", func(tp *ad.Tape, in []*ad.Node) *ad.Node {
			f := &BoundTrigVOF{Kernel: fam, J: 3, A: in[2]}
			return SpectralKuf(f, fakeSpectral{in[0], in[1]}, in[3], c, w)
		}, []*mat.Dense{col(0.9), col(0.4), col(4.0), xs}})
	}
	for _, c := range cases {
		if err := ad.CheckGradient(c.f, c.at, 1e-6, 1e-6); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// fakeSpectral exposes variance and lengthscale nodes as a SpectralBound, so
// gradient checks can vary them directly.
type fakeSpectral struct{ v, l *ad.Node }

func (f fakeSpectral) K(x, z *ad.Node) *ad.Node           { panic("unused") }
func (f fakeSpectral) Diag(x *ad.Node) *ad.Node           { panic("unused") }
func (f fakeSpectral) Variance() *ad.Node                 { return f.v }
func (f fakeSpectral) Lengthscales() *ad.Node             { return f.l }
func (f fakeSpectral) Density(*mat.Dense) *ad.Node        { panic("unused") }
func (f fakeSpectral) Density1D(*mat.Dense, int) *ad.Node { panic("unused") }

func TestVOFBadInput(t *testing.T) {
	se, m32 := vofKernel(t, "se", 1, 1), vofKernel(t, "matern32", 1, 1)
	k2, _ := kernels.New("se", 2, kernels.Options{})
	per, _ := kernels.New("periodic", 1, kernels.Options{})
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"hermite matern", func() error { _, err := NewHermiteVOF(m32, 5, 1); return err }(), "squared-exponential"},
		{"hermite 2-D", func() error { _, err := NewHermiteVOF(k2, 5, 1); return err }(), "one-dimensional"},
		{"hermite M=0", func() error { _, err := NewHermiteVOF(se, 0, 1); return err }(), "at least one"},
		{"hermite σx", func() error { _, err := NewHermiteVOF(se, 3, math.NaN()); return err }(), "σx"},
		{"trig periodic", func() error { _, err := NewTrigVOF(per, 5, 1); return err }(), "supported kernels"},
		{"trig a", func() error { _, err := NewTrigVOF(se, 5, -1); return err }(), "half-width"},
		{"trig J", func() error { _, err := NewTrigVOF(se, -1, 1); return err }(), "J ≥ 0"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, c.err, c.want)
		}
	}
}
