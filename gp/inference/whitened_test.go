package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// sameBits fails t when the gradients or values want and got (nil when
// none was asked for) differ in presence or in any bit.
func sameBits(t *testing.T, what string, want, got *mat.Dense) {
	t.Helper()
	if (want == nil) != (got == nil) {
		t.Fatalf("%s: got %v, composed %v", what, got != nil, want != nil)
	}
	if want != nil && !testhelp.SameBits(want, got) {
		t.Errorf("%s differs in its bits from the composed operations'", what)
	}
}

// composedWhitenedKL is the whitened KL as the tape operations it was
// composed of before whitenedKL: the reference for its bits.
func composedWhitenedKL(q Variational) *ad.Node {
	t := q.Mu.Tape()
	m, _ := q.Sqrt.Dims()
	lq := ad.Tril(q.Sqrt)
	logDetS := ad.Sum(ad.Log(ad.Square(ad.Diag(lq))))
	return ad.Scale(0.5, add(t.Scalar(-float64(m)), ad.Neg(logDetS), ad.SumSquares(lq), ad.SumSquares(q.Mu)))
}

// TestWhitenedKLBits: the one-operation whitened KL has the value and the
// gradients of the composed operations bit for bit, with junk above the
// diagonal of q.Sqrt (ignored), negative and badly scaled diagonals
// (10⁻⁸ … 10⁶), a multi-column mean, a scaled upstream gradient, and
// gradients asked for q.Sqrt only, q.Mu only or both.
func TestWhitenedKLBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		name     string
		m, cols  int
		diag     func(i int) float64
		sqrt, mu bool
		upstream float64
	}{
		{"M=1", 1, 1, func(int) float64 { return 0.3 }, true, true, 1},
		{"M=20", 20, 1, func(i int) float64 { return 0.5 + float64(i)/7 }, true, true, -1},
		{"negative diagonal", 33, 1, func(i int) float64 { return float64(1-2*(i%2)) * (1 + float64(i)) }, true, true, -3.5},
		{"ill-scaled diagonal", 64, 2, func(i int) float64 { return math.Pow(10, float64(i%15)-8) }, true, true, 0.25},
		{"sqrt only", 70, 1, func(i int) float64 { return 1 + float64(i%3) }, true, false, -1},
		{"mu only", 70, 3, func(i int) float64 { return 1 + float64(i%3) }, false, true, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mat.NewDense(c.m, c.m, nil)
			for i := 0; i < c.m; i++ {
				for j := 0; j < c.m; j++ {
					s.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(7)-3)))
				}
				s.Set(i, i, c.diag(i))
			}
			mu := mat.NewDense(c.m, c.cols, nil)
			for i := range mu.RawMatrix().Data {
				mu.RawMatrix().Data[i] = rng.NormFloat64()
			}
			run := func(kl func(Variational) *ad.Node) (float64, *mat.Dense, *mat.Dense) {
				tape := ad.NewTape()
				node := func(v *mat.Dense, grad bool) *ad.Node {
					if grad {
						return tape.Var(v)
					}
					return tape.Const(v)
				}
				q := Variational{Mu: node(mu, c.mu), Sqrt: node(s, c.sqrt), Whiten: true}
				out := ad.Scale(c.upstream, kl(q))
				tape.Backward(out)
				return out.Scalar(), q.Sqrt.Grad(), q.Mu.Grad()
			}
			v0, gs0, gm0 := run(composedWhitenedKL)
			v1, gs1, gm1 := run(whitenedKL)
			if math.Float64bits(v0) != math.Float64bits(v1) {
				t.Errorf("value %.17g, composed %.17g", v1, v0)
			}
			sameBits(t, "S̄", gs0, gs1)
			sameBits(t, "m̄", gm0, gm1)
		})
	}
}

// TestWhitenedKLGradient checks the whitened KL's gradient against central
// differences, off the bits oracle above.
func TestWhitenedKLGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const m = 6
	s := param.NewSet()
	mu, sq := testhelp.RandQ(rng, m)
	must(s.Add("q_mu", mu, param.Identity{}))
	must(s.Add("q_sqrt", sq, param.Identity{}))
	checkGradient(t, s, func(_ *ad.Tape, b *param.Bound) (*ad.Node, error) {
		return whitenedKL(Variational{Mu: b.Get("q_mu"), Sqrt: b.Get("q_sqrt"), Whiten: true}), nil
	}, 1e-8)
}

// composedWhitenedTerms is whitenedTerms as the tape operations it was
// composed of (blockProject's and terms' for a whitened block): the
// reference for its bits.
func composedWhitenedTerms(a, mu, sqrt *ad.Node) (mean, prior, cov *ad.Node) {
	mean = ad.MatMulTA(a, mu)
	qa := ad.MulLowerT(ad.Tril(sqrt), a)
	return mean, ad.ColSqNorms(a), ad.ColSqNorms(qa)
}

// TestWhitenedTermsBits: the one-operation terms of a whitened block have
// the values and gradients of the composed operations bit for bit, on
// shapes small and large enough to be shared out over the cores, with
// junk above q.Sqrt's diagonal, and with gradients asked for every subset
// of A, m and S. The three terms are weighted differently downstream, as
// in the ELBO (μ and v enter the expected log likelihood, v = Kff − Prior
// + Cov).
func TestWhitenedTermsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	draw := func(r, c int, scale float64) *mat.Dense { return testhelp.RandMat(rng, r, c, scale) }
	for _, c := range []struct {
		name       string
		m, n       int
		ga, gm, gs bool
	}{
		{"M=1", 1, 5, true, true, true},
		{"M=20 N=100", 20, 100, true, true, true},
		{"M=200 N=1000", 200, 1000, true, true, true},
		{"M=70 N=600, S only", 70, 600, false, false, true},
		{"M=70 N=600, A only", 70, 600, true, false, false},
		{"M=70 N=600, m only", 70, 600, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			av, muv, sv := draw(c.m, c.n, 1), draw(c.m, 1, 1), draw(c.m, c.m, 0.3)
			w := [3]*mat.Dense{draw(c.n, 1, 1), draw(c.n, 1, 1), draw(c.n, 1, 1)}
			run := func(terms func(a, mu, sqrt *ad.Node) (*ad.Node, *ad.Node, *ad.Node)) ([3]*mat.Dense, [3]*mat.Dense) {
				tape := ad.NewTape()
				node := func(v *mat.Dense, grad bool) *ad.Node {
					if grad {
						return tape.Var(v)
					}
					return tape.Const(v)
				}
				a, mu, sq := node(av, c.ga), node(muv, c.gm), node(sv, c.gs)
				// An op upstream of A, as the tape has one (the solve).
				a = ad.Scale(1, a)
				mean, prior, cov := terms(a, mu, sq)
				out := ad.Add(ad.Add(ad.Dot(mean, tape.Const(w[0])), ad.Dot(prior, tape.Const(w[1]))), ad.Dot(cov, tape.Const(w[2])))
				tape.Backward(out)
				var grads [3]*mat.Dense
				for i, in := range []*ad.Node{a, mu, sq} {
					if in.NeedsGrad() {
						grads[i] = in.Grad()
					}
				}
				return [3]*mat.Dense{mean.Value(), prior.Value(), cov.Value()}, grads
			}
			v0, g0 := run(composedWhitenedTerms)
			v1, g1 := run(whitenedTerms)
			for i, name := range []string{"mean", "prior", "cov"} {
				sameBits(t, name, v0[i], v1[i])
			}
			for i, name := range []string{"Ā", "m̄", "S̄"} {
				sameBits(t, name, g0[i], g1[i])
			}
		})
	}
}

// TestWhitenedTermsGradient checks the gradients against central
// differences, off the bits oracle above.
func TestWhitenedTermsGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	const m, n = 5, 7
	s := param.NewSet()
	fill := func(r, c int) *mat.Dense { return testhelp.RandMat(rng, r, c, 1) }
	must(s.Add("a", fill(m, n), param.Identity{}))
	must(s.Add("mu", fill(m, 1), param.Identity{}))
	must(s.Add("sqrt", fill(m, m), param.Identity{}))
	w := [3]*mat.Dense{fill(n, 1), fill(n, 1), fill(n, 1)}
	checkGradient(t, s, func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
		mean, prior, cov := whitenedTerms(b.Get("a"), b.Get("mu"), b.Get("sqrt"))
		return ad.Add(ad.Add(ad.Dot(mean, tape.Const(w[0])), ad.Dot(prior, tape.Const(w[1]))), ad.Dot(cov, tape.Const(w[2]))), nil
	}, 1e-8)
}
