package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

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
	draw := func(r, c int, scale float64) *mat.Dense {
		m := mat.NewDense(r, c, nil)
		for i := range m.RawMatrix().Data {
			m.RawMatrix().Data[i] = scale * rng.NormFloat64()
		}
		return m
	}
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
			same := func(what string, want, got *mat.Dense) {
				t.Helper()
				if (want == nil) != (got == nil) {
					t.Fatalf("%s: got %v, composed %v", what, got != nil, want != nil)
				}
				if want == nil {
					return
				}
				r, cc := want.Dims()
				bad := 0
				for i := 0; i < r; i++ {
					for j := 0; j < cc; j++ {
						if math.Float64bits(want.At(i, j)) != math.Float64bits(got.At(i, j)) {
							if bad++; bad <= 3 {
								t.Errorf("%s[%d,%d] = %.17g, composed %.17g", what, i, j, got.At(i, j), want.At(i, j))
							}
						}
					}
				}
			}
			for i, name := range []string{"mean", "prior", "cov"} {
				same(name, v0[i], v1[i])
			}
			for i, name := range []string{"Ā", "m̄", "S̄"} {
				same(name, g0[i], g1[i])
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
	fill := func(r, c int) *mat.Dense {
		x := mat.NewDense(r, c, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return x
	}
	must(s.Add("a", fill(m, n), param.Identity{}))
	must(s.Add("mu", fill(m, 1), param.Identity{}))
	must(s.Add("sqrt", fill(m, m), param.Identity{}))
	w := [3]*mat.Dense{fill(n, 1), fill(n, 1), fill(n, 1)}
	checkGradient(t, s, func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
		mean, prior, cov := whitenedTerms(b.Get("a"), b.Get("mu"), b.Get("sqrt"))
		return ad.Add(ad.Add(ad.Dot(mean, tape.Const(w[0])), ad.Dot(prior, tape.Const(w[1]))), ad.Dot(cov, tape.Const(w[2]))), nil
	}, 1e-8)
}
