package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// vofProblem is a small 1-D regression problem with a VOF feature and a
// random q(u) in a param set: kernel under "k.", feature under "f.", noise
// variance "noise", q(u) as "m" and "L" (dense) or "s" (diagonal).
type vofProblem struct {
	set     *param.Set
	kernel  kernels.Kernel
	feature features.Feature
	x       *mat.Dense
	y       []float64
	m       int
	diag    bool
}

func newVOFProblem(t testing.TB, seed uint64, n int, kernel string, hermite, diag bool) *vofProblem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	p := &vofProblem{set: param.NewSet(), x: mat.NewDense(n, 1, nil), y: make([]float64, n), diag: diag}
	for i := range n {
		x := 1.5 * rng.NormFloat64()
		p.x.Set(i, 0, x)
		p.y[i] = math.Sin(2*x) + 0.1*rng.NormFloat64()
	}
	k, err := kernels.New(kernel, 1, kernels.Options{Variance: 0.8, Lengthscales: []float64{0.7}})
	if err != nil {
		t.Fatal(err)
	}
	p.kernel = k
	if hermite {
		p.feature, err = features.NewHermiteVOF(k, 7, 1.4)
		p.m = 7
	} else {
		p.feature, err = features.NewTrigVOF(k, 3, 4)
		p.m = 7
	}
	if err != nil {
		t.Fatal(err)
	}
	must(k.Declare(p.set, "k."))
	must(p.feature.Declare(p.set, "f."))
	must(p.set.AddScalar("noise", 0.05, param.DefaultPositive))
	mu := mat.NewDense(p.m, 1, nil)
	for i := range p.m {
		mu.Set(i, 0, 0.5*rng.NormFloat64())
	}
	must(p.set.Add("m", mu, param.Identity{}))
	if diag {
		s := mat.NewDense(p.m, 1, nil)
		for i := range p.m {
			s.Set(i, 0, 0.3+0.5*rng.Float64())
		}
		must(p.set.Add("s", s, param.Identity{}))
	} else {
		l := mat.NewDense(p.m, p.m, nil)
		for i := range p.m {
			for j := 0; j <= i; j++ {
				l.Set(i, j, 0.2*rng.NormFloat64())
			}
			l.Set(i, i, 0.4+0.4*rng.Float64())
		}
		must(p.set.Add("L", l, param.Identity{}))
	}
	return p
}

func (p *vofProblem) bind(tp *ad.Tape) (kernels.Bound, features.Bound, OrthoVariational, *ad.Node) {
	b := p.set.Bind(tp)
	q := OrthoVariational{Mu: b.Get("m")}
	if p.diag {
		q.SqrtDiag = b.Get("s")
	} else {
		q.Sqrt = b.Get("L")
	}
	return p.kernel.Bind(b, "k."), p.feature.Bind(b, "f."), q, b.Get("noise")
}

func (p *vofProblem) exact(t testing.TB) float64 {
	t.Helper()
	tp := ad.NewTape()
	k, f, q, noise := p.bind(tp)
	out, err := VOFELBO(k, f, tp.Const(p.x), p.y, noise, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar()
}

func (p *vofProblem) monteCarlo(t testing.TB, s1, s2 SampleSet) *ad.Node {
	t.Helper()
	tp := ad.NewTape()
	k, f, q, noise := p.bind(tp)
	out, err := VOFMonteCarlo(k, f.(features.SpectralFeature), tp.Const(p.x), p.y, noise, q, s1, s2, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gaussVarExp(y []float64, noise *ad.Node) VarExp {
	return func(mu, v *ad.Node) *ad.Node {
		yn := mu.Tape().Const(mat.NewDense(len(y), 1, append([]float64(nil), y...)))
		sq := ad.Add(ad.Square(ad.Sub(yn, mu)), v)
		c := ad.Scale(-0.5, ad.Log(ad.Scale(2*math.Pi, noise)))
		return ad.AddScalar(ad.DivScalar(ad.Scale(-0.5, sq), noise), c)
	}
}

// TestVOFELBOMatchesSVGP checks VOFELBO against the generic SVGP path with
// whitened q (Kuu = I), for dense and diagonal S and both feature types.
func TestVOFELBOMatchesSVGP(t *testing.T) {
	for _, c := range []struct {
		hermite, diag bool
		kernel        string
	}{{true, false, "se"}, {true, true, "se"}, {false, false, "matern32"}, {false, true, "matern52"}} {
		p := newVOFProblem(t, 3, 30, c.kernel, c.hermite, c.diag)
		got := p.exact(t)
		tp := ad.NewTape()
		k, f, q, noise := p.bind(tp)
		sq := q.Sqrt
		if c.diag {
			sq = ad.DiagMat(q.SqrtDiag)
		}
		want, _, err := SVGP(k, f, tp.Const(p.x), gaussVarExp(p.y, noise), Variational{Mu: q.Mu, Sqrt: sq, Whiten: true}, 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if testhelp.RelErr(got, want.Scalar()) > 1e-11 {
			t.Errorf("%+v: VOFELBO %.12g, SVGP %.12g", c, got, want.Scalar())
		}
	}
}

// TestVOFOptimalBounds checks the closed-form optima of vof-spec §1.8: the
// ELBO at the optimal dense q is Titsias' bound (SGPR on the same feature),
// the one at the optimal diagonal q is Full − ½(Σ log A_mm − log|A|), and
// both are maxima.
func TestVOFOptimalBounds(t *testing.T) {
	p := newVOFProblem(t, 5, 60, "se", true, false)
	tp := ad.NewTape()
	k, f, _, noise := p.bind(tp)
	x := tp.Const(p.x)
	kuf := f.Kuf(k, x).Value()
	kd := k.Diag(x).Value().RawMatrix().Data
	opt, err := OrthoOptimal(kuf, kd, p.y, noise.Scalar())
	if err != nil {
		t.Fatal(err)
	}
	titsias, _, err := SGPR(k, f, x, p.y, noise, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if testhelp.RelErr(opt.Full, titsias.Scalar()) > 1e-10 {
		t.Errorf("optimal dense ELBO %.12g, Titsias bound %.12g", opt.Full, titsias.Scalar())
	}
	if !(opt.MeanField < opt.Full) {
		t.Errorf("mean-field optimum %.6g not below full %.6g", opt.MeanField, opt.Full)
	}
	mean := mat.NewDense(p.m, 1, opt.Mean)
	l := cholesky(t, opt.Cov)
	sd := make([]float64, p.m)
	for i, v := range opt.Diag {
		sd[i] = math.Sqrt(v)
	}
	full := elboConst(t, p, mean, l, nil)
	mf := elboConst(t, p, mean, nil, sd)
	if testhelp.RelErr(full, opt.Full) > 1e-10 || testhelp.RelErr(mf, opt.MeanField) > 1e-10 {
		t.Errorf("ELBO at optimal q: dense %.12g (closed form %.12g), diagonal %.12g (closed form %.12g)", full, opt.Full, mf, opt.MeanField)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 5 {
		m2 := mat.DenseCopyOf(mean)
		l2 := mat.DenseCopyOf(l)
		s2 := append([]float64(nil), sd...)
		i := rng.IntN(p.m)
		m2.Set(i, 0, m2.At(i, 0)+1e-3)
		l2.Set(i, i, l2.At(i, i)*1.01)
		s2[i] *= 1.01
		if elboConst(t, p, m2, l2, nil) >= full || elboConst(t, p, m2, nil, s2) >= mf {
			t.Errorf("a perturbation of the optimal q increased the ELBO")
		}
	}
}

func elboConst(t *testing.T, p *vofProblem, mu, l *mat.Dense, sd []float64) float64 {
	t.Helper()
	tp := ad.NewTape()
	k, f, _, noise := p.bind(tp)
	q := OrthoVariational{Mu: tp.Const(mu)}
	if l != nil {
		q.Sqrt = tp.Const(l)
	} else {
		q.SqrtDiag = tp.Const(mat.NewDense(len(sd), 1, sd))
	}
	out, err := VOFELBO(k, f, tp.Const(p.x), p.y, noise, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar()
}

// TestVOFMonteCarloUnbiased averages many Monte-Carlo ELBOs (T = 50 per set,
// as in the paper) and compares with the ELBO of the deterministic Kuf
// (closed form for Hermite, quadrature for trigonometric features).
func TestVOFMonteCarloUnbiased(t *testing.T) {
	const reps = 600
	cases := []struct {
		hermite, diag bool
		kernel        string
		samples       int
	}{
		{true, false, "se", 50}, {true, true, "se", 50}, {true, false, "se", 7}, {true, true, "se", 7},
		{false, false, "matern32", 50}, {false, true, "se", 50}, {false, false, "matern12", 10},
	}
	for i, c := range cases {
		p := newVOFProblem(t, 11, 40, c.kernel, c.hermite, c.diag)
		want := p.exact(t)
		rng := rand.New(rand.NewPCG(42, uint64(i)))
		vals := make([]float64, reps)
		for r := range vals {
			s1 := StratifiedSamples(rng, c.samples)
			s2 := StratifiedSamples(rng, c.samples)
			vals[r] = p.monteCarlo(t, s1, s2).Scalar()
		}
		mean, sd := stat.MeanStdDev(vals, nil)
		se := sd / math.Sqrt(reps)
		// With T = 50 the Hermite integrands vanish at the ends of the
		// interval, so the shifted grid is spectrally accurate and the
		// estimates agree with the exact ELBO to rounding.
		if math.Abs(mean-want) > 4*se+1e-9*math.Abs(want) {
			t.Errorf("%+v: mean MC ELBO %.8f ± %.2g (s.e.), exact %.8f", c, mean, se, want)
		}
		t.Logf("%+v: mean MC ELBO %.6f ± %.2g (s.e.; s.d. %.2g), exact %.6f", c, mean, se, sd, want)
	}
}

// TestVOFMonteCarloQuadratureLimit: with a fine quadrature rule in place of
// the samples (both sets), the estimator's pair structure reproduces the
// exact ELBO, which checks every block of the T×T variance estimator.
func TestVOFMonteCarloQuadratureLimit(t *testing.T) {
	c, w := features.CompositeLegendre(60, 16)
	s := SampleSet{C: c, W: w}
	for _, diag := range []bool{false, true} {
		for _, hermite := range []bool{true, false} {
			p := newVOFProblem(t, 2, 25, "se", hermite, diag)
			got := p.monteCarlo(t, s, s).Scalar()
			if want := p.exact(t); testhelp.RelErr(got, want) > 1e-9 {
				t.Errorf("hermite=%v diag=%v: quadrature-rule estimator %.12g, exact %.12g", hermite, diag, got, want)
			}
		}
	}
}

func TestVOFGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s1, s2 := StratifiedSamples(rng, 12), StratifiedSamples(rng, 12)
	for _, c := range []struct {
		hermite, diag, mc bool
		kernel            string
	}{
		{true, false, false, "se"}, {true, true, false, "se"},
		{true, false, true, "se"}, {true, true, true, "se"},
		{false, false, true, "matern12"}, {false, true, true, "matern52"},
		{false, false, false, "matern32"},
	} {
		p := newVOFProblem(t, 4, 15, c.kernel, c.hermite, c.diag)
		obj := func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			k, f := p.kernel.Bind(b, "k."), p.feature.Bind(b, "f.")
			q := OrthoVariational{Mu: b.Get("m")}
			if p.diag {
				q.SqrtDiag = b.Get("s")
			} else {
				q.Sqrt = b.Get("L")
			}
			if c.mc {
				return VOFMonteCarlo(k, f.(features.SpectralFeature), tp.Const(p.x), p.y, b.Get("noise"), q, s1, s2, 40)
			}
			return VOFELBO(k, f, tp.Const(p.x), p.y, b.Get("noise"), q, 40)
		}
		vofGradCheck(t, p.set, obj, 2e-6)
	}
}

func vofGradCheck(t *testing.T, s *param.Set, f func(*ad.Tape, *param.Bound) (*ad.Node, error), tol float64) {
	t.Helper()
	eval := func() (*ad.Node, *param.Bound, *ad.Tape) {
		tp := ad.NewTape()
		b := s.Bind(tp)
		out, err := f(tp, b)
		if err != nil {
			t.Fatal(err)
		}
		return out, b, tp
	}
	x0 := s.Vector()
	defer s.SetVector(x0)
	out, b, tp := eval()
	tp.Backward(out)
	got := b.Gradient()
	want := fd.Gradient(nil, func(x []float64) float64 {
		s.SetVector(x)
		o, _, _ := eval()
		return o.Scalar()
	}, x0, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, got[i], want[i])
		}
	}
}

func TestVOFMonteCarloDeterministic(t *testing.T) {
	p := newVOFProblem(t, 8, 20, "matern32", false, false)
	draw := func(seed uint64) float64 {
		rng := rand.New(rand.NewPCG(seed, 0))
		return p.monteCarlo(t, StratifiedSamples(rng, 50), StratifiedSamples(rng, 50)).Scalar()
	}
	if a, b := draw(3), draw(3); a != b {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if a, b := draw(3), draw(4); a == b {
		t.Errorf("different seeds gave the same estimate %v", a)
	}
	s := StratifiedSamples(rand.New(rand.NewPCG(1, 1)), 10)
	for i, c := range s.C {
		lo := -1 + 0.2*float64(i)
		if c < lo || c >= lo+0.2 || s.W[i] != 0.2 {
			t.Errorf("sample %d = %v (weight %v) outside its stratum [%v, %v)", i, c, s.W[i], lo, lo+0.2)
		}
	}
}

func TestVOFErrors(t *testing.T) {
	p := newVOFProblem(t, 1, 10, "se", true, false)
	tp := ad.NewTape()
	k, f, q, noise := p.bind(tp)
	x := tp.Const(p.x)
	s := StratifiedSamples(rand.New(rand.NewPCG(1, 1)), 5)
	sf := f.(features.SpectralFeature)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"targets", func() error { _, err := VOFELBO(k, f, x, p.y[:3], noise, q, 0); return err }(), "targets"},
		{"both S", func() error {
			q2 := q
			q2.SqrtDiag = tp.Const(mat.NewDense(p.m, 1, nil))
			_, err := VOFELBO(k, f, x, p.y, noise, q2, 0)
			return err
		}(), "exactly one"},
		{"mean shape", func() error {
			q2 := q
			q2.Mu = tp.Const(mat.NewDense(3, 1, nil))
			_, err := VOFELBO(k, f, x, p.y, noise, q2, 0)
			return err
		}(), "mean is 3×1"},
		{"numData", func() error { _, err := VOFMonteCarlo(k, sf, x, p.y, noise, q, s, s, 3); return err }(), "minibatch"},
		{"empty samples", func() error { _, err := VOFMonteCarlo(k, sf, x, p.y, noise, q, s, SampleSet{}, 0); return err }(), "sample set 2"},
		{"optimum noise", func() error {
			_, err := OrthoOptimal(mat.NewDense(2, 1, nil), []float64{1}, []float64{1}, 0)
			return err
		}(), "noise"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, c.err, c.want)
		}
	}
}

// BenchmarkVOF times one objective + gradient at N = 1000, M = 71 (the
// paper's largest M) for the exact Hermite ELBO and the Monte-Carlo one
// (T = 50), with dense and diagonal S.
func BenchmarkVOF(b *testing.B) {
	const n, m = 1000, 71
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		x.Set(i, 0, 3*rng.NormFloat64())
		y[i] = math.Sin(x.At(i, 0))
	}
	k, _ := kernels.New("se", 1, kernels.Options{Variance: 0.5, Lengthscales: []float64{0.5}})
	for _, est := range []string{"exact", "mc"} {
		for _, diag := range []bool{false, true} {
			name := est + "/dense"
			if diag {
				name = est + "/diagonal"
			}
			b.Run(name, func(b *testing.B) {
				f, _ := features.NewHermiteVOF(k, m, 3)
				s := param.NewSet()
				must(k.Declare(s, "k."))
				must(f.Declare(s, "f."))
				must(s.AddScalar("noise", 0.01, param.DefaultPositive))
				must(s.Add("m", mat.NewDense(m, 1, nil), param.Identity{}))
				if diag {
					must(s.Add("s", filled(m, 1, 1), param.Identity{}))
				} else {
					l := mat.NewDense(m, m, nil)
					for i := range m {
						l.Set(i, i, 1)
					}
					must(s.Add("L", l, param.Identity{}))
				}
				for b.Loop() {
					tp := ad.NewTape()
					bd := s.Bind(tp)
					q := OrthoVariational{Mu: bd.Get("m")}
					if diag {
						q.SqrtDiag = bd.Get("s")
					} else {
						q.Sqrt = bd.Get("L")
					}
					kb, fb := k.Bind(bd, "k."), f.Bind(bd, "f.")
					var out *ad.Node
					var err error
					if est == "mc" {
						out, err = VOFMonteCarlo(kb, fb.(features.SpectralFeature), tp.Const(x), y, bd.Get("noise"), q,
							StratifiedSamples(rng, DefaultVOFSamples), StratifiedSamples(rng, DefaultVOFSamples), 0)
					} else {
						out, err = VOFELBO(kb, fb, tp.Const(x), y, bd.Get("noise"), q, 0)
					}
					if err != nil {
						b.Fatal(err)
					}
					tp.Backward(out)
					_ = bd.Gradient()
				}
			})
		}
	}
}

// TestStratifiedSamplesExactness: the shifted grid of App. E.1 is the
// periodic trapezoid rule with a random offset, so it integrates cos(πkc) and
// sin(πkc) on [−1, 1] exactly for every offset when 0 < k < T, and aliases
// at k = T. In the TrigVOF estimator the integrands are products of basis
// terms (k ≤ J) and data terms (k ≈ a|x|/π), so T must exceed J + a·max|x|/π
// for the Monte-Carlo ELBO to stay close to exact; beyond it the variance
// grows sharply (why M = 71 with T = 50 is noisy in Figure 3).
func TestStratifiedSamplesExactness(t *testing.T) {
	const T = 50
	rng := rand.New(rand.NewPCG(4, 5))
	for _, c := range []struct {
		k     int
		exact bool
	}{{0, true}, {1, true}, {17, true}, {49, true}, {50, false}, {51, true}, {100, false}} {
		worst := 0.0
		for range 20 {
			s := StratifiedSamples(rng, T)
			var ic, is float64
			for i, ci := range s.C {
				sv, cv := math.Sincos(math.Pi * float64(c.k) * ci)
				ic += s.W[i] * cv
				is += s.W[i] * sv
			}
			want := 0.0
			if c.k == 0 {
				want = 2
			}
			worst = math.Max(worst, math.Max(math.Abs(ic-want), math.Abs(is)))
		}
		if c.exact && worst > 1e-12 {
			t.Errorf("k = %d: error %.3g, want exact", c.k, worst)
		}
		if !c.exact && worst < 0.1 {
			t.Errorf("k = %d: error %.3g, want aliasing", c.k, worst)
		}
	}
}
