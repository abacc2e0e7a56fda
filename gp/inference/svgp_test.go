package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// addQ registers q_mu and q_sqrt (only the lower triangle is meaningful).
func (p *problem) addQ(mu, sqrt *mat.Dense) *problem {
	must(p.set.Add("q_mu", mat.DenseCopyOf(mu), param.Identity{}))
	must(p.set.Add("q_sqrt", mat.DenseCopyOf(sqrt), param.Identity{}))
	return p
}

func (p *problem) q(b *param.Bound, whiten bool) Variational {
	return Variational{Mu: b.Get("q_mu"), Sqrt: b.Get("q_sqrt"), Whiten: whiten}
}

func labels(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = 1
		if v < 0 {
			out[i] = -1
		}
	}
	return out
}

// svgpObjective is the ELBO on the rows idx of the data (nil: all).
func svgpObjective(p *problem, lik likelihoods.Likelihood, whiten bool, idx []int) objective {
	x, y := p.x, p.y
	if idx != nil {
		_, d := p.x.Dims()
		x = mat.NewDense(len(idx), d, nil)
		y = make([]float64, len(idx))
		for k, i := range idx {
			x.SetRow(k, p.x.RawRowView(i))
			y[k] = p.y[i]
		}
	}
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		ve := func(mu, v *ad.Node) *ad.Node { return lik.VarExp(b, "", mu, v, column(y)) }
		out, _, err := SVGP(p.kernel(b), p.points(b), t.Const(x), ve, p.q(b, whiten), len(p.y), Options{})
		return out, err
	}
}

func randomQ(rng *rand.Rand, m int) (mu, sqrt *mat.Dense) {
	mu = testhelp.RandMat(rng, m, 1, 0.5)
	sqrt = testhelp.RandMat(rng, m, m, 0.2)
	for i := 0; i < m; i++ {
		sqrt.Set(i, i, 0.3+0.5*rng.Float64())
	}
	return mu, sqrt
}

// whitenQ maps q(u) = N(m, LqLqᵀ) to q(v) with u = Lv: N(L⁻¹m, (L⁻¹Lq)(L⁻¹Lq)ᵀ).
func whitenQ(t testing.TB, p *problem, z, mu, sqrt *mat.Dense) (*mat.Dense, *mat.Dense) {
	l := cholesky(t, seMatrix(z, z, p.vari, p.ls))
	lq := lowerOf(sqrt)
	return solveLower(l, mu, false), solveLower(l, lq, false)
}

// naiveMarginals returns μ = Kfu Kuu⁻¹ m and v = kff − diag(Kfu Kuu⁻¹ (Kuu − S) Kuu⁻¹ Kuf)
// with an explicit inverse.
func naiveMarginals(p *problem, x, z, mu, sqrt *mat.Dense) (mean, variance []float64) {
	kuu := seMatrix(z, z, p.vari, p.ls)
	kuf := seMatrix(z, x, p.vari, p.ls)
	var kinv, s, diff, proj, mid mat.Dense
	if err := kinv.Inverse(kuu); err != nil {
		panic(err)
	}
	lq := lowerOf(sqrt)
	s.Mul(lq, lq.T())
	diff.Sub(kuu, &s)
	proj.Mul(&kinv, kuf) // Kuu⁻¹Kuf
	mid.Mul(&diff, &proj)
	n, _ := x.Dims()
	mean = make([]float64, n)
	variance = make([]float64, n)
	for i := 0; i < n; i++ {
		mean[i] = mat.Dot(proj.ColView(i), mu.ColView(0))
		variance[i] = p.vari - mat.Dot(proj.ColView(i), mid.ColView(i))
	}
	return mean, variance
}

// naiveKL is KL[N(m, S) ‖ N(0, Kuu)] with explicit inverse and determinants.
func naiveKL(p *problem, z, mu, sqrt *mat.Dense) float64 {
	kuu := seMatrix(z, z, p.vari, p.ls)
	var kinv, s, ks mat.Dense
	if err := kinv.Inverse(kuu); err != nil {
		panic(err)
	}
	lq := lowerOf(sqrt)
	s.Mul(lq, lq.T())
	ks.Mul(&kinv, &s)
	m, _ := z.Dims()
	ldK, _ := mat.LogDet(kuu)
	ldS, _ := mat.LogDet(&s)
	return 0.5 * (mat.Trace(&ks) + mat.Inner(mu.ColView(0), &kinv, mu.ColView(0)) - float64(m) + ldK - ldS)
}

func TestSVGPAtTitsiasOptimumEqualsSGPR(t *testing.T) {
	for _, tc := range []struct {
		seed    uint64
		n, d, m int
		noise   float64
	}{{71, 30, 2, 6, 0.1}, {72, 40, 1, 4, 0.4}} {
		p := newProblem(tc.seed, tc.n, tc.d, tc.noise)
		z := testhelp.RandMat(rand.New(rand.NewPCG(tc.seed, 1)), tc.m, tc.d, 1)
		p.addZ(z)
		tape := ad.NewTape()
		b := p.set.Bind(tape)
		bound, _, err := SGPR(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, q, err := SGPRPosterior(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		mu, sqrt := q.Mean, cholesky(t, q.Cov)
		wmu, wsqrt := whitenQ(t, p, z, mu, sqrt)
		for _, whiten := range []bool{false, true} {
			qs := p.set
			pp := *p
			pp.set = param.NewSet()
			for _, nm := range []string{"variance", "ls", "noise_variance", "z"} {
				must(pp.set.Add(nm, qs.Value(nm), param.Identity{}))
			}
			if whiten {
				pp.addQ(wmu, wsqrt)
			} else {
				pp.addQ(mu, sqrt)
			}
			got := evaluate(t, pp.set, svgpObjective(&pp, likelihoods.NewGaussian(1), whiten, nil))
			e := testhelp.RelErr(got, bound.Scalar())
			if e > 1e-8 {
				t.Errorf("seed %d whiten=%v: SVGP at the optimal q = %.12g, SGPR %.12g (rel %.2g)", tc.seed, whiten, got, bound.Scalar(), e)
			}
			t.Logf("seed %d whiten=%v: SVGP at the Titsias-optimal q − SGPR: rel %.2g", tc.seed, whiten, e)
		}
	}
}

func TestSVGPWhitenedMatchesNonWhitened(t *testing.T) {
	for _, lik := range []likelihoods.Likelihood{likelihoods.NewGaussian(1), mustLik("bernoulli")} {
		t.Run(lik.Name(), func(t *testing.T) {
			base := newProblem(81, 25, 2, 0.2)
			if lik.Name() == "bernoulli" {
				base.y = labels(base.y)
			}
			rng := rand.New(rand.NewPCG(81, 2))
			z := testhelp.RandMat(rng, 5, 2, 1)
			mu, sqrt := randomQ(rng, 5)
			wmu, wsqrt := whitenQ(t, base, z, mu, sqrt)
			plain := *base
			plain.set = cloneSet(base.set)
			plain.addZ(z).addQ(mu, sqrt)
			white := *base
			white.set = cloneSet(base.set)
			white.addZ(z).addQ(wmu, wsqrt)
			a := evaluate(t, plain.set, svgpObjective(&plain, lik, false, nil))
			w := evaluate(t, white.set, svgpObjective(&white, lik, true, nil))
			e := testhelp.RelErr(a, w)
			if e > 1e-10 {
				t.Errorf("non-whitened ELBO %.12g, whitened %.12g (rel %.2g)", a, w, e)
			}
			t.Logf("non-whitened − whitened ELBO: rel %.2g", e)
		})
	}
}

func mustLik(name string) likelihoods.Likelihood {
	l, err := likelihoods.New(name)
	must(err)
	return l
}

func cloneSet(s *param.Set) *param.Set {
	out := param.NewSet()
	for _, nm := range s.Names() {
		must(out.Add(nm, s.Value(nm), param.DefaultPositive))
	}
	return out
}

func TestSVGPBernoulliAgainstQuadrature(t *testing.T) {
	p := newProblem(91, 20, 2, 0.1)
	p.y = labels(p.y)
	rng := rand.New(rand.NewPCG(91, 3))
	z := testhelp.RandMat(rng, 6, 2, 1)
	mu, sqrt := randomQ(rng, 6)
	p.addZ(z).addQ(mu, sqrt)
	got := evaluate(t, p.set, svgpObjective(p, mustLik("bernoulli"), false, nil))

	mean, variance := naiveMarginals(p, p.x, z, mu, sqrt)
	want := -naiveKL(p, z, mu, sqrt)
	for i := range mean {
		s := math.Sqrt(variance[i])
		y := p.y[i]
		e := quad.Fixed(func(f float64) float64 {
			r := (f - mean[i]) / s
			return math.Exp(-0.5*r*r) / (s * math.Sqrt(2*math.Pi)) * math.Log(0.5*math.Erfc(-y*f/math.Sqrt2))
		}, mean[i]-12*s, mean[i]+12*s, 200, quad.Legendre{}, 0)
		want += e
	}
	if e := testhelp.RelErr(got, want); e > 1e-7 {
		t.Errorf("Bernoulli ELBO %.12g, quadrature %.12g (rel %.2g)", got, want, e)
	}
}

func TestSVGPMinibatchIsUnbiased(t *testing.T) {
	p := newProblem(101, 24, 2, 0.3)
	rng := rand.New(rand.NewPCG(101, 4))
	z := testhelp.RandMat(rng, 5, 2, 1)
	mu, sqrt := randomQ(rng, 5)
	p.addZ(z).addQ(mu, sqrt)
	lik := likelihoods.NewGaussian(1)
	full := evaluate(t, p.set, svgpObjective(p, lik, true, nil))
	perm := rng.Perm(24)
	avg := 0.0
	for k := 0; k < 4; k++ {
		avg += evaluate(t, p.set, svgpObjective(p, lik, true, perm[6*k:6*k+6])) / 4
	}
	if e := testhelp.RelErr(avg, full); e > 1e-12 {
		t.Errorf("mean of minibatch ELBOs %.12g, full-batch ELBO %.12g", avg, full)
	}
}

func TestSVGPGradient(t *testing.T) {
	for _, tc := range []struct {
		lik    string
		whiten bool
	}{{"gaussian", false}, {"gaussian", true}, {"bernoulli", false}, {"bernoulli", true}} {
		name := tc.lik
		if tc.whiten {
			name += "/whitened"
		}
		t.Run(name, func(t *testing.T) {
			p := newProblem(111, 12, 2, 0.2)
			if tc.lik == "bernoulli" {
				p.y = labels(p.y)
			}
			rng := rand.New(rand.NewPCG(111, 5))
			mu, sqrt := randomQ(rng, 4)
			p.addZ(testhelp.RandMat(rng, 4, 2, 1)).addQ(mu, sqrt)
			checkGradient(t, p.set, svgpObjective(p, mustLik(tc.lik), tc.whiten, []int{0, 2, 3, 5, 7, 8}), 1e-6)
		})
	}
}

func TestSVGPPosteriorMatchesNaive(t *testing.T) {
	p := newProblem(121, 10, 2, 0.2)
	rng := rand.New(rand.NewPCG(121, 6))
	z := testhelp.RandMat(rng, 5, 2, 1)
	mu, sqrt := randomQ(rng, 5)
	wmu, wsqrt := whitenQ(t, p, z, mu, sqrt)
	xs := testhelp.RandMat(rng, 8, 2, 1.5)
	wantMean, wantVar := naiveMarginals(p, xs, z, mu, sqrt)
	for _, whiten := range []bool{false, true} {
		pp := *p
		pp.set = cloneSet(p.set)
		if whiten {
			pp.addZ(z).addQ(wmu, wsqrt)
		} else {
			pp.addZ(z).addQ(mu, sqrt)
		}
		tape := ad.NewTape()
		b := pp.set.Bind(tape)
		post, err := SVGPPosterior(pp.kernel(b), pp.points(b), pp.q(b, whiten), Options{})
		if err != nil {
			t.Fatal(err)
		}
		mean, variance, err := post.Predict(xs, func(t *ad.Tape) (kernels.Bound, features.Bound) {
			b := pp.set.Bind(t)
			return pp.kernel(b), pp.points(b)
		})
		if err != nil {
			t.Fatal(err)
		}
		// The on-tape marginals used by the ELBO agree too.
		tm, tv, _, err := SVGPMarginals(pp.kernel(b), pp.points(b), tape.Const(xs), pp.q(b, whiten), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range mean {
			if math.Abs(mean[i]-wantMean[i]) > 1e-9 || math.Abs(variance[i]-wantVar[i]) > 1e-9 ||
				math.Abs(tm.Value().At(i, 0)-wantMean[i]) > 1e-9 || math.Abs(tv.Value().At(i, 0)-wantVar[i]) > 1e-9 {
				t.Errorf("whiten=%v point %d: mean %.10g var %.10g (tape %.10g %.10g), naive %.10g %.10g", whiten, i,
					mean[i], variance[i], tm.Value().At(i, 0), tv.Value().At(i, 0), wantMean[i], wantVar[i])
			}
		}
	}
}
