package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// vffProblem is a small VFF model (1-D, additive or Kronecker) on inputs in
// the unit box, with the kernel's parameters under "kernel.", the Gaussian
// noise variance, and q(u) in u-space ("q_mu", "q_sqrt").
type vffProblem struct {
	kern kernels.Kernel
	feat *features.IntervalFeature
	x    *mat.Dense
	y    []float64
	set  *param.Set
}

const vffPrefix = "kernel."

func newVFFProblem(t testing.TB, seed uint64, d, freqs int, s features.Structure, n int, binary bool) *vffProblem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := 0.0
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.Float64())
			v += math.Sin(5*x.At(i, j) + float64(j))
		}
		y[i] = v + 0.1*rng.NormFloat64()
		if binary {
			y[i] = 1
			if v < 0 {
				y[i] = -1
			}
		}
	}
	names := []string{"matern12", "matern32", "matern52"}
	parts := make([]kernels.Kernel, d)
	ivs := make([]features.Interval, d)
	for j := range parts {
		var err error
		parts[j], err = kernels.New(names[(j+int(seed))%3], 1, kernels.Options{Variance: 0.7 + 0.2*float64(j), Lengthscales: []float64{0.25 + 0.1*float64(j)}})
		if err != nil {
			t.Fatal(err)
		}
		ivs[j] = features.Interval{A: -0.3, B: 1.2 + 0.1*float64(j)}
	}
	p := &vffProblem{x: x, y: y, set: param.NewSet()}
	var err error
	switch {
	case d == 1:
		p.kern = parts[0]
	case s == features.Additive:
		p.kern, err = kernels.Additive(parts...)
	default:
		p.kern, err = features.NewSeparable(parts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	if p.feat, err = features.NewVFF(p.kern, ivs, freqs, s, false); err != nil {
		t.Fatal(err)
	}
	must(p.kern.Declare(p.set, vffPrefix))
	must(p.set.AddScalar("noise_variance", 0.3, param.DefaultPositive))
	m := p.feat.M()
	// A q(u) near the prior: Kuu's Cholesky factor times a perturbed
	// identity, and a mean of prior scale.
	tp := ad.NewTape()
	kuu := p.feat.Kuu(p.kern.Bind(p.set.Bind(tp), vffPrefix)).Value()
	lk := cholesky(t, kuu)
	mix := testhelp.RandMat(rng, m, m, 0.1)
	for i := 0; i < m; i++ {
		mix.Set(i, i, 0.6+0.3*rng.Float64())
	}
	var sq mat.Dense
	sq.Mul(lk, lowerOf(mix))
	mu := mat.NewDense(m, 1, nil)
	mu.Mul(lk, testhelp.RandMat(rng, m, 1, 0.7))
	must(p.set.Add("q_mu", mu, param.Identity{}))
	must(p.set.Add("q_sqrt", &sq, param.Identity{}))
	return p
}

// form says how the SVGP objective of a vffProblem is parameterised.
type form int

const (
	denseU       form = iota // non-whitened q(u), dense Cholesky of Kuu
	denseV                   // whitened with the Cholesky factor, q(v) mapped from q(u)
	structV                  // whitened with the structured root, q(v) mapped from q(u)
	denseVPrior              // whitened, dense, q(v) = N(0, I) whatever q_mu/q_sqrt hold
	structVPrior             // whitened, structured, q(v) = N(0, I)
)

func (f form) structured() bool { return f == structV || f == structVPrior }

// bound returns the feature, with the structured whitener attached for the
// structured forms.
func (p *vffProblem) bound(b *param.Bound, f form) features.Bound {
	fb := p.feat.Bind(b, "")
	if f.structured() {
		return WithWhitener(fb, p.feat.Whitener)
	}
	return features.DenseKuu(fb)
}

// whitenerFunc is a structured root b ↦ L⁻¹b of Kuu for the bound kernel.
type whitenerFunc = func(k kernels.Bound, maxTries int) (func(*ad.Node) *ad.Node, error)

// WithWhitener attaches w as f's Kuu structure (the root form).
func WithWhitener(f features.Bound, w whitenerFunc) features.Bound {
	return features.WithKuu(f, features.FormRoot, func(k kernels.Bound, n int) (features.KuuStructure, error) {
		if w == nil {
			return features.KuuStructure{}, errors.New("nil whitener")
		}
		fn, err := w(k, n)
		if err != nil {
			return features.KuuStructure{}, err
		}
		return features.KuuStructure{Whiten: fn}, nil
	})
}

// variational returns q on the tape in the form's coordinates. For the
// mapped forms, q(v) = N(L⁻¹m, L⁻¹S L⁻ᵀ) with the form's own L, so that the
// implied q(u) = N(m, S) is the same for all forms and the ELBO must agree,
// value and gradient (the map is on the tape).
func (p *vffProblem) variational(t *ad.Tape, b *param.Bound, kb kernels.Bound, f form) (Variational, error) {
	m := p.feat.M()
	mu, lq := b.Get("q_mu"), ad.Tril(b.Get("q_sqrt"))
	var whiten func(*ad.Node) *ad.Node
	switch f {
	case denseU:
		return Variational{Mu: mu, Sqrt: lq}, nil
	case denseVPrior, structVPrior:
		id := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			id.Set(i, i, 1)
		}
		return Variational{Mu: t.Const(mat.NewDense(m, 1, nil)), Sqrt: t.Const(id), Whiten: true}, nil
	case denseV:
		l, err := ad.Cholesky(p.feat.Kuu(kb))
		if err != nil {
			return Variational{}, err
		}
		whiten = func(x *ad.Node) *ad.Node { return ad.SolveLower(l, x) }
	case structV:
		var err error
		if whiten, err = p.feat.Whitener(kb, DefaultMaxTries); err != nil {
			return Variational{}, err
		}
	}
	wl := whiten(lq)
	sv, err := ad.Cholesky(ad.MatMulTB(wl, wl))
	if err != nil {
		return Variational{}, err
	}
	return Variational{Mu: whiten(mu), Sqrt: sv, Whiten: true}, nil
}

func (p *vffProblem) elbo(lik likelihoods.Likelihood, f form) objective {
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		kb := p.kern.Bind(b, vffPrefix)
		q, err := p.variational(t, b, kb, f)
		if err != nil {
			return nil, err
		}
		ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(p.y)) }
		out, _, err := SVGP(kb, p.bound(b, f), t.Const(p.x), ve, q, len(p.y), Options{})
		return out, err
	}
}

func valueAndGradient(t *testing.T, s *param.Set, f objective) (float64, []float64) {
	t.Helper()
	tape := ad.NewTape()
	b := s.Bind(tape)
	out, err := f(tape, b)
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	return out.Scalar(), b.Gradient()
}

var vffStructCases = []struct {
	name      string
	d, freqs  int
	structure features.Structure
}{
	{"1-D", 1, 6, features.Kronecker},
	{"additive", 3, 4, features.Additive},
	{"kronecker", 2, 3, features.Kronecker},
}

// TestSVGPStructuredWhitenerMatchesDense: the whitened SVGP ELBO with the
// VFF structured square root (not triangular, so v means something else
// than with the Cholesky factor) equals the non-whitened dense ELBO and
// the whitened dense one at the same q(u), value and gradient with respect
// to every parameter (kernel, noise, q(u)); and at q(v) = N(0, I), which
// is q(u) = N(0, Kuu) for any root.
func TestSVGPStructuredWhitenerMatchesDense(t *testing.T) {
	for _, c := range vffStructCases {
		for _, lik := range []likelihoods.Likelihood{likelihoods.NewGaussian(1), mustLik("bernoulli")} {
			t.Run(c.name+"/"+lik.Name(), func(t *testing.T) {
				p := newVFFProblem(t, 11+uint64(c.d), c.d, c.freqs, c.structure, 40, lik.Name() == "bernoulli")
				// The test means something only if the structured root
				// is not the Cholesky factor: L_s⁻¹ is not triangular.
				tp := ad.NewTape()
				w, err := p.feat.Whitener(p.kern.Bind(p.set.Bind(tp), vffPrefix), DefaultMaxTries)
				if err != nil {
					t.Fatal(err)
				}
				m := p.feat.M()
				id := mat.NewDense(m, m, nil)
				for i := 0; i < m; i++ {
					id.Set(i, i, 1)
				}
				if linv := w(tp.Const(id)).Value(); mat.Equal(linv, lowerOf(linv)) {
					t.Fatalf("M = %d: the structured whitener is triangular; the comparison would not test the square-root freedom", m)
				}
				for _, pair := range []struct {
					name      string
					got, want form
				}{
					{"structured v vs dense u", structV, denseU},
					{"structured v vs dense v", structV, denseV},
					{"structured vs dense at q(v) = N(0, I)", structVPrior, denseVPrior},
				} {
					vg, gg := valueAndGradient(t, p.set, p.elbo(lik, pair.got))
					vw, gw := valueAndGradient(t, p.set, p.elbo(lik, pair.want))
					e := testhelp.RelErr(vg, vw)
					if e > 1e-9 {
						t.Errorf("%s: ELBO %.14g vs %.14g (rel %.2g)", pair.name, vg, vw, e)
					}
					gmax := 0.0
					for i := range gw {
						gmax = math.Max(gmax, math.Abs(gw[i]))
					}
					worst := 0.0
					for i := range gw {
						d := math.Abs(gg[i]-gw[i]) / math.Max(1, gmax)
						worst = math.Max(worst, d)
						if d > 1e-9 {
							t.Errorf("%s: gradient[%d] = %.14g vs %.14g", pair.name, i, gg[i], gw[i])
						}
					}
					t.Logf("M = %d, %s: ELBO rel %.2g, gradient max rel %.2g", m, pair.name, e, worst)
				}
			})
		}
	}
}

// TestSVGPStructuredGradient checks the structured whitened ELBO's gradient
// against central differences (kernel, noise and q(u) parameters), on
// smaller feature sets than vffStructCases to keep the O(M²) differences
// cheap.
func TestSVGPStructuredGradient(t *testing.T) {
	for _, c := range []struct {
		name      string
		d, freqs  int
		structure features.Structure
	}{
		{"1-D", 1, 5, features.Kronecker},
		{"additive", 2, 3, features.Additive},
		{"kronecker", 2, 2, features.Kronecker},
	} {
		for _, lik := range []likelihoods.Likelihood{likelihoods.NewGaussian(1), mustLik("bernoulli")} {
			t.Run(c.name+"/"+lik.Name(), func(t *testing.T) {
				p := newVFFProblem(t, 21+uint64(c.d), c.d, c.freqs, c.structure, 25, lik.Name() == "bernoulli")
				checkGradient(t, p.set, p.elbo(lik, structV), 1e-6)
			})
		}
	}
}

// TestSVGPStructuredOptimumAndPrediction: for a Gaussian likelihood the
// optimal whitened q(v) is closed form, N(ΣAy/σ², Σ) with A = L⁻¹Kuf and
// Σ = (I + AAᵀ/σ²)⁻¹, for any square root L. With the structured root, the
// ELBO there equals the collapsed SGPR bound computed densely (an
// independent code path), and SVGPPosterior's predictions equal
// SGPRPosterior's; so do SVGPMarginals at the training inputs.
func TestSVGPStructuredOptimumAndPrediction(t *testing.T) {
	for _, c := range vffStructCases {
		t.Run(c.name, func(t *testing.T) {
			p := newVFFProblem(t, 31+uint64(c.d), c.d, c.freqs, c.structure, 60, false)
			m := p.feat.M()
			tape := ad.NewTape()
			b := p.set.Bind(tape)
			kb := p.kern.Bind(b, vffPrefix)
			w, err := p.feat.Whitener(kb, DefaultMaxTries)
			if err != nil {
				t.Fatal(err)
			}
			a := w(tape.Const(mustPhi(t, p.feat, p.x))).Value()
			s2 := p.set.Scalar("noise_variance")
			prec := mat.NewDense(m, m, nil)
			prec.Mul(a, a.T())
			prec.Scale(1/s2, prec)
			for i := 0; i < m; i++ {
				prec.Set(i, i, prec.At(i, i)+1)
			}
			var cov, mu mat.Dense
			if err := cov.Inverse(prec); err != nil {
				t.Fatal(err)
			}
			ay := mat.NewDense(m, 1, nil)
			ay.Mul(a, column(p.y))
			mu.Mul(&cov, ay)
			mu.Scale(1/s2, &mu)
			q := Variational{Mu: tape.Const(&mu), Sqrt: tape.Const(cholesky(t, &cov)), Whiten: true}

			fs := WithWhitener(p.feat.Bind(b, ""), p.feat.Whitener)
			lik := likelihoods.NewGaussian(1)
			ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(p.y)) }
			elbo, info, err := SVGP(kb, fs, tape.Const(p.x), ve, q, 0, Options{Jitter: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			if info.Jitter != 0 {
				t.Errorf("structured root reports jitter %g, want 0 (none is added)", info.Jitter)
			}
			sgpr, _, err := SGPR(kb, p.feat.Bind(b, ""), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := testhelp.RelErr(elbo.Scalar(), sgpr.Scalar())
			if e > 1e-9 {
				t.Errorf("structured SVGP at the optimal q %.14g, SGPR %.14g (rel %.2g)", elbo.Scalar(), sgpr.Scalar(), e)
			}
			t.Logf("M = %d: structured SVGP at the Titsias optimum − SGPR: rel %.2g", m, e)

			post, err := SVGPPosterior(kb, fs, q, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref, _, err := SGPRPosterior(kb, p.feat.Bind(b, ""), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 3))
			xs := mat.NewDense(15, c.d, nil)
			for i := 0; i < 15; i++ {
				for j := 0; j < c.d; j++ {
					xs.Set(i, j, rng.Float64())
				}
			}
			bind := func(t *ad.Tape) (kernels.Bound, features.Bound) {
				bb := p.set.Bind(t)
				return p.kern.Bind(bb, vffPrefix), p.feat.Bind(bb, "")
			}
			gm, gv, err := post.Predict(xs, bind)
			if err != nil {
				t.Fatal(err)
			}
			wm, wv, err := ref.Predict(xs, bind)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i := range wm {
				worst = math.Max(worst, math.Max(math.Abs(gm[i]-wm[i]), math.Abs(gv[i]-wv[i])))
			}
			if worst > 1e-9 {
				t.Errorf("predictions: structured SVGP vs SGPR differ by up to %.3g", worst)
			}
			tm, tv, _, err := SVGPMarginals(kb, fs, tape.Const(xs), q, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range wm {
				worst = math.Max(worst, math.Max(math.Abs(tm.Value().At(i, 0)-wm[i]), math.Abs(tv.Value().At(i, 0)-wv[i])))
			}
			if worst > 1e-9 {
				t.Errorf("SVGPMarginals vs SGPR predictions differ by up to %.3g", worst)
			}
			t.Logf("M = %d: predictions (posterior and marginals) − SGPR: max abs %.2g", m, worst)
		})
	}
}

func mustPhi(t testing.TB, f *features.IntervalFeature, x *mat.Dense) *mat.Dense {
	t.Helper()
	phi, err := f.Phi(x)
	if err != nil {
		t.Fatal(err)
	}
	return phi
}

// TestSVGPWhitenerNonWhitenedUsesDense: the non-whitened parameterisation
// ignores an attached whitener (it needs log|Kuu| and Kuu⁻¹) and gives
// exactly the plain feature's ELBO and KL.
func TestSVGPWhitenerNonWhitenedUsesDense(t *testing.T) {
	p := newVFFProblem(t, 41, 2, 3, features.Additive, 20, false)
	lik := likelihoods.NewGaussian(1)
	called := false
	vals := map[bool]float64{}
	for _, attach := range []bool{false, true} {
		vals[attach] = evaluate(t, p.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
			kb := p.kern.Bind(b, vffPrefix)
			fb := p.feat.Bind(b, "")
			if attach {
				fb = WithWhitener(fb, func(k kernels.Bound, n int) (func(*ad.Node) *ad.Node, error) {
					called = true
					return p.feat.Whitener(k, n)
				})
			}
			q := Variational{Mu: b.Get("q_mu"), Sqrt: b.Get("q_sqrt")}
			ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(p.y)) }
			elbo, _, err := SVGP(kb, fb, tp.Const(p.x), ve, q, 0, Options{})
			if err != nil {
				return nil, err
			}
			kl, err := KL(kb, fb, q, Options{})
			if err != nil {
				return nil, err
			}
			return ad.Add(elbo, ad.Scale(math.Pi, kl)), nil
		})
	}
	if called {
		t.Error("non-whitened SVGP called the structured whitener")
	}
	if vals[true] != vals[false] {
		t.Errorf("non-whitened ELBO + π·KL with a whitener attached %.16g, without %.16g", vals[true], vals[false])
	}
}

// TestSVGPWhitenerBadInput: a failing, nil or shape-changing whitener is a
// clear error from every entry point, never a panic.
func TestSVGPWhitenerBadInput(t *testing.T) {
	p := newVFFProblem(t, 51, 1, 3, features.Kronecker, 10, false)
	m := p.feat.M()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		w    whitenerFunc
		want string
	}{
		{"error", func(kernels.Bound, int) (func(*ad.Node) *ad.Node, error) { return nil, boom }, "boom"},
		{"nil map", func(kernels.Bound, int) (func(*ad.Node) *ad.Node, error) { return nil, nil }, "exactly one of"},
		{"nil func", nil, "nil whitener"},
		{"shape", func(kernels.Bound, int) (func(*ad.Node) *ad.Node, error) {
			return func(b *ad.Node) *ad.Node { _, c := b.Dims(); return ad.Slice(b, 0, m-1, 0, c) }, nil
		}, "want the same shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tape := ad.NewTape()
			b := p.set.Bind(tape)
			kb := p.kern.Bind(b, vffPrefix)
			fb := WithWhitener(p.feat.Bind(b, ""), tc.w)
			q := Variational{Mu: b.Get("q_mu"), Sqrt: b.Get("q_sqrt"), Whiten: true}
			lik := likelihoods.NewGaussian(1)
			ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(p.y)) }
			errs := map[string]error{}
			_, _, errs["SVGP"] = SVGP(kb, fb, tape.Const(p.x), ve, q, 0, Options{})
			_, _, _, errs["SVGPMarginals"] = SVGPMarginals(kb, fb, tape.Const(p.x), q, Options{})
			_, errs["SVGPPosterior"] = SVGPPosterior(kb, fb, q, Options{})
			if tc.name != "shape" { // KL never applies the map
				_, errs["KL"] = KL(kb, fb, q, Options{})
			}
			for name, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: err = %v, want one containing %q", name, err, tc.want)
				}
			}
		})
	}
}
