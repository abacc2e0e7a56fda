package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

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
			same := func(what string, want, got *mat.Dense) {
				if (want == nil) != (got == nil) {
					t.Fatalf("%s: gradient %v, composed %v", what, got != nil, want != nil)
				}
				if want == nil {
					return
				}
				r, cc := want.Dims()
				for i := 0; i < r; i++ {
					for j := 0; j < cc; j++ {
						if w, g := want.At(i, j), got.At(i, j); math.Float64bits(w) != math.Float64bits(g) {
							t.Errorf("%s[%d,%d] = %.17g, composed %.17g", what, i, j, g, w)
						}
					}
				}
			}
			same("S̄", gs0, gs1)
			same("m̄", gm0, gm1)
		})
	}
}

// TestWhitenedKLGradient checks the whitened KL's gradient against central
// differences, off the bits oracle above.
func TestWhitenedKLGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const m = 6
	s := param.NewSet()
	mu := mat.NewDense(m, 1, nil)
	sq := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		mu.Set(i, 0, rng.NormFloat64())
		for j := 0; j <= i; j++ {
			sq.Set(i, j, 0.3*rng.NormFloat64())
		}
		sq.Set(i, i, 0.5+rng.Float64())
	}
	must(s.Add("q_mu", mu, param.Identity{}))
	must(s.Add("q_sqrt", sq, param.Identity{}))
	checkGradient(t, s, func(_ *ad.Tape, b *param.Bound) (*ad.Node, error) {
		return whitenedKL(Variational{Mu: b.Get("q_mu"), Sqrt: b.Get("q_sqrt"), Whiten: true}), nil
	}, 1e-8)
}
