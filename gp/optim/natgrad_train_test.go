package optim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

func TestCholeskyAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, m := range []int{1, 2, 5, 9} {
		l := mat.NewDense(m, m, nil)
		g0 := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				l.Set(i, j, rng.NormFloat64())
				g0.SetSym(i, j, rng.NormFloat64())
			}
			l.Set(i, i, 0.5+rng.Float64())
		}
		// lbar = ∂ tr(G₀LLᵀ)/∂L = tril(2G₀L).
		var x mat.Dense
		x.Mul(g0, l)
		lbar := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				lbar.Set(i, j, 2*x.At(i, j))
			}
		}
		g := CholeskyAdjoint(l, lbar)
		if !mat.EqualApprox(g, g0, 1e-11) {
			t.Errorf("M = %d: recovered ∂f/∂S\n%v\nwant\n%v", m, mat.Formatted(g), mat.Formatted(g0))
		}
	}
}

// linGauss is L(q) = E_q log N(y | A u, σ²I) − KL[q(u) ‖ N(0, K)] with
// q = N(m, LLᵀ), plus a decoupled hyperparameter h with −(h − 3)²/2.
type linGauss struct {
	a, k, y *mat.Dense
	s2      float64
}

func (c linGauss) objective(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	m := b.Get("q_mu")
	l := ad.Tril(b.Get("q_sqrt"))
	a, y := t.Const(c.a), t.Const(c.y)
	r := ad.Sub(y, ad.MatMul(a, m))
	al := ad.MatMul(a, l)
	ell := ad.Scale(-0.5/c.s2, ad.Add(ad.Sum(ad.Square(r)), ad.Sum(ad.Square(al))))
	kl, err := ad.Cholesky(t.Const(c.k))
	if err != nil {
		return nil, err
	}
	n, _ := c.k.Dims()
	klTerm := ad.Scale(0.5, add3(
		ad.Sum(ad.Square(ad.SolveLower(kl, l))),
		ad.Sum(ad.Square(ad.SolveLower(kl, m))),
		ad.Sub(ad.LogDetChol(kl), ad.Sum(ad.Log(ad.Square(ad.Diag(l))))),
	))
	out := ad.Sub(ell, ad.AddConst(klTerm, -0.5*float64(n)))
	h := b.Get("h")
	return ad.Sub(out, ad.Scale(0.5, ad.Square(ad.AddConst(h, -3)))), nil
}

func add3(a, b, c *ad.Node) *ad.Node { return ad.Add(ad.Add(a, b), c) }

func newLinGauss(rng *rand.Rand, n, m int) (linGauss, *param.Set) {
	c := linGauss{a: mat.NewDense(n, m, nil), y: mat.NewDense(n, 1, nil), s2: 0.3}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			c.a.Set(i, j, rng.NormFloat64())
		}
		c.y.Set(i, 0, rng.NormFloat64())
	}
	b := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	c.k = mat.NewDense(m, m, nil)
	c.k.Mul(b, b.T())
	for i := 0; i < m; i++ {
		c.k.Set(i, i, c.k.At(i, i)+0.5)
	}
	s := param.NewSet()
	sq := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		sq.Set(i, i, 1)
	}
	s.MustAdd("q_mu", mat.NewDense(m, 1, nil), param.Identity{})
	s.MustAdd("q_sqrt", sq, param.Identity{})
	s.MustAdd("h", mat.NewDense(1, 1, []float64{1}), param.Identity{})
	return c, s
}

// optimum is S* = (K⁻¹ + AᵀA/σ²)⁻¹, m* = S*Aᵀy/σ².
func (c linGauss) optimum() (*mat.Dense, *mat.Dense) {
	var kinv, prec, s, aty, mu mat.Dense
	if err := kinv.Inverse(c.k); err != nil {
		panic(err)
	}
	prec.Mul(c.a.T(), c.a)
	prec.Scale(1/c.s2, &prec)
	prec.Add(&prec, &kinv)
	if err := s.Inverse(&prec); err != nil {
		panic(err)
	}
	aty.Mul(c.a.T(), c.y)
	mu.Mul(&s, &aty)
	mu.Scale(1/c.s2, &mu)
	return &mu, &s
}

// TestTrainNatGradConjugateOneStep: one step of length 1 through the
// training loop lands q on the closed-form optimum, while Adam moves the
// other parameter by its first step (lr·sign g).
func TestTrainNatGradConjugateOneStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c, s := newLinGauss(rng, 30, 6)
	rep, err := TrainNatGrad(context.Background(), s, c.objective, []Gaussian{{Mu: "q_mu", Sqrt: "q_sqrt"}},
		NatGradSettings{MaxIter: 1, Gamma: 1, LearningRate: 0.05}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantM, wantS := c.optimum()
	l := s.Value("q_sqrt")
	var gotS mat.Dense
	gotS.Mul(l, l.T())
	if !mat.EqualApprox(s.Value("q_mu"), wantM, 1e-10) {
		t.Errorf("m after one step\n%v\nwant\n%v", mat.Formatted(s.Value("q_mu")), mat.Formatted(wantM))
	}
	if !mat.EqualApprox(&gotS, wantS, 1e-10) {
		t.Errorf("S after one step\n%v\nwant\n%v", mat.Formatted(&gotS), mat.Formatted(wantS))
	}
	if h := s.Scalar("h"); math.Abs(h-(1+0.05)) > 1e-9 {
		t.Errorf("h after one Adam step %v, want 1.05", h)
	}
	if rep.Iterations != 1 || len(rep.Trace) != 2 || !(rep.Trace[1].Objective > rep.Trace[0].Objective) {
		t.Errorf("report %+v", rep)
	}
	// A second step stays at the optimum (the natural gradient there is 0).
	if _, err := TrainNatGrad(context.Background(), s, c.objective, []Gaussian{{Mu: "q_mu", Sqrt: "q_sqrt"}},
		NatGradSettings{MaxIter: 1, Gamma: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(s.Value("q_mu"), wantM, 1e-9) {
		t.Error("a second step left the optimum")
	}
}

// TestTrainNatGradSignedFactor: a square root of S with negative diagonal
// entries (as an L-BFGS warm start may leave it) is the same q as its
// Cholesky factor, and training from it takes bitwise the same steps.
func TestTrainNatGradSignedFactor(t *testing.T) {
	const m = 6
	rng := rand.New(rand.NewPCG(4, 2))
	c, signed := newLinGauss(rng, 30, m)
	_, canon := newLinGauss(rand.New(rand.NewPCG(4, 2)), 30, m)
	ls, lc := mat.NewDense(m, m, nil), mat.NewDense(m, m, nil)
	for j := 0; j < m; j++ {
		sign := 1.0
		if j%2 == 1 {
			sign = -1 // columns 1, 3, 5 negated
		}
		for i := j; i < m; i++ {
			v := 0.3 * rng.NormFloat64()
			if i == j {
				v = 0.5 + rng.Float64()
			}
			lc.Set(i, j, v)
			ls.Set(i, j, sign*v)
		}
	}
	if err := signed.SetValue("q_sqrt", ls); err != nil {
		t.Fatal(err)
	}
	if err := canon.SetValue("q_sqrt", lc); err != nil {
		t.Fatal(err)
	}
	qs := []Gaussian{{Mu: "q_mu", Sqrt: "q_sqrt"}}
	st := NatGradSettings{MaxIter: 3, Gamma: 0.5, LearningRate: 0.05}
	repS, err := TrainNatGrad(context.Background(), signed, c.objective, qs, st, nil)
	if err != nil {
		t.Fatalf("from a signed factor: %v", err)
	}
	repC, err := TrainNatGrad(context.Background(), canon, c.objective, qs, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range repC.Trace {
		if repS.Trace[i].Objective != repC.Trace[i].Objective {
			t.Errorf("step %d: objective %v from the signed factor, %v from the Cholesky factor", i, repS.Trace[i].Objective, repC.Trace[i].Objective)
		}
	}
	for _, name := range []string{"q_mu", "q_sqrt", "h"} {
		if !mat.Equal(signed.Value(name), canon.Value(name)) {
			t.Errorf("%s differs after training from the signed factor", name)
		}
	}
}

func TestTrainNatGradBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	c, s := newLinGauss(rng, 5, 2)
	for name, tc := range map[string]struct {
		qs []Gaussian
		st NatGradSettings
	}{
		"no factors":  {nil, NatGradSettings{Gamma: 1}},
		"bad gamma":   {[]Gaussian{{"q_mu", "q_sqrt"}}, NatGradSettings{Gamma: 0}},
		"bad lr":      {[]Gaussian{{"q_mu", "q_sqrt"}}, NatGradSettings{Gamma: 1, LearningRate: -1}},
		"unknown":     {[]Gaussian{{"q_mu", "nope"}}, NatGradSettings{Gamma: 1}},
		"wrong shape": {[]Gaussian{{"q_sqrt", "q_mu"}}, NatGradSettings{Gamma: 1}},
	} {
		if _, err := TrainNatGrad(context.Background(), s, c.objective, tc.qs, tc.st, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// natGradUpdateReference is the update by NatGradStep: ∂L/∂S by
// CholeskyAdjoint, S = LLᵀ, the step on (m, S), then L' = chol(S').
func natGradUpdateReference(x, g []float64, q gaussSeg, gamma float64) error {
	n := q.m
	mu := mat.NewVecDense(n, append([]float64(nil), x[q.mu:q.mu+n]...))
	dm := mat.NewVecDense(n, append([]float64(nil), g[q.mu:q.mu+n]...))
	l, lbar := mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l.Set(i, j, x[q.sqrt+i*n+j])
			lbar.Set(i, j, g[q.sqrt+i*n+j])
		}
	}
	var ll mat.Dense
	ll.Mul(l, l.T())
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, ll.At(i, j))
		}
	}
	newM, newS, err := NatGradStep(mu, s, dm, CholeskyAdjoint(l, lbar), gamma)
	if err != nil {
		return err
	}
	var ch mat.Cholesky
	if !ch.Factorize(newS) {
		return errors.New("new covariance not positive definite")
	}
	var nl mat.TriDense
	ch.LTo(&nl)
	for i := 0; i < n; i++ {
		x[q.mu+i] = newM.AtVec(i)
		for j := 0; j < n; j++ {
			x[q.sqrt+i*n+j] = 0
			if j <= i {
				x[q.sqrt+i*n+j] = nl.At(i, j)
			}
		}
	}
	return nil
}

// TestNatGradUpdateMatchesStep: the update in the Cholesky factor
// (natGradUpdate) agrees with the textbook route through S and its
// inverse (NatGradStep), on a well-conditioned factor and on one whose S
// has condition number ~10¹⁰, and refuses a step that leaves the
// precision indefinite as NatGradStep does.
func TestNatGradUpdateMatchesStep(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		diagSpread float64 // L's diagonal runs from 1 down to 10^−diagSpread
		gamma      float64
		tol        float64
	}{
		{"well conditioned", 40, 0, 0.1, 1e-12},
		{"gamma 1", 40, 0, 1, 1e-12},
		{"ill conditioned", 60, 5, 0.1, 1e-8},
		{"blocked sizes", 300, 1, 0.3, 1e-11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.n)))
			n := tc.n
			q := gaussSeg{mu: 0, sqrt: n, m: n}
			x := make([]float64, n+n*n)
			g := make([]float64, n+n*n)
			for i := 0; i < n; i++ {
				x[i], g[i] = rng.NormFloat64(), rng.NormFloat64()
				x[n+i*n+i] = math.Pow(10, -tc.diagSpread*float64(i)/float64(n-1))
				for j := 0; j < i; j++ {
					x[n+i*n+j] = 0.1 * rng.NormFloat64() * x[n+i*n+i]
				}
				for j := 0; j <= i; j++ {
					g[n+i*n+j] = 0.05 * rng.NormFloat64() / x[n+i*n+i]
				}
			}
			got, want := append([]float64(nil), x...), append([]float64(nil), x...)
			errGot := natGradUpdate(got, g, q, tc.gamma)
			errWant := natGradUpdateReference(want, g, q, tc.gamma)
			if (errGot != nil) != (errWant != nil) {
				t.Fatalf("errors differ: %v against the reference's %v", errGot, errWant)
			}
			if errGot != nil {
				return
			}
			// Entries compare relative to their row's size (L' rows scale with √S').
			for i := 0; i < n; i++ {
				var scale float64
				for j := 0; j <= i; j++ {
					scale = math.Max(scale, math.Abs(want[n+i*n+j]))
				}
				for j := 0; j < n; j++ {
					if d := math.Abs(got[n+i*n+j] - want[n+i*n+j]); d > tc.tol*scale {
						t.Fatalf("L'(%d, %d) = %.17g, reference %.17g (|Δ| %.3g > %g × %.3g)", i, j, got[n+i*n+j], want[n+i*n+j], d, tc.tol, scale)
					}
				}
			}
			var mscale float64
			for i := 0; i < n; i++ {
				mscale = math.Max(mscale, math.Abs(want[i]))
			}
			for i := 0; i < n; i++ {
				if d := math.Abs(got[i] - want[i]); d > tc.tol*mscale {
					t.Fatalf("m'(%d) = %.17g, reference %.17g", i, got[i], want[i])
				}
			}
		})
	}
	t.Run("indefinite", func(t *testing.T) {
		// L = I, L̄ = 2·I gives A = I − γ·2I, indefinite for γ > ½.
		n := 5
		q := gaussSeg{mu: 0, sqrt: n, m: n}
		x, g := make([]float64, n+n*n), make([]float64, n+n*n)
		for i := 0; i < n; i++ {
			x[n+i*n+i], g[n+i*n+i] = 1, 2
		}
		if err := natGradUpdate(append([]float64(nil), x...), g, q, 0.6); err == nil {
			t.Error("γ = 0.6 with ∂L/∂S = I: no error, want an indefinite precision")
		}
		if err := natGradUpdateReference(append([]float64(nil), x...), g, q, 0.6); err == nil {
			t.Error("the reference accepted it too")
		}
		if err := natGradUpdate(append([]float64(nil), x...), g, q, 0.4); err != nil {
			t.Errorf("γ = 0.4: %v", err)
		}
	})
}

// TestNatGradUpdateReusesWork: an update whose matrices are kept from the
// steps before (natGradWork, as TrainNatGrad keeps them) gives bitwise the
// update with fresh ones, step after step, across a change of size, and
// when x and g carry values above the factor's diagonal (which the update
// must not read).
func TestNatGradUpdateReusesWork(t *testing.T) {
	work := new(natGradWork)
	for step, n := range []int{30, 30, 30, 7, 30} {
		rng := rand.New(rand.NewPCG(12, uint64(step)))
		x := make([]float64, n+n*n)
		g := make([]float64, n+n*n)
		for i := 0; i < n; i++ {
			x[i], g[i] = rng.NormFloat64(), rng.NormFloat64()
			for j := 0; j < n; j++ {
				switch {
				case j == i:
					x[n+i*n+j] = 1 + rng.Float64()
				case j < i:
					x[n+i*n+j] = 0.1 * rng.NormFloat64()
				default:
					x[n+i*n+j] = 1e3 * rng.NormFloat64() // not part of the factor
				}
				g[n+i*n+j] = 0.05 * rng.NormFloat64()
			}
		}
		fresh, kept := append([]float64(nil), x...), append([]float64(nil), x...)
		if err := natGradUpdate(fresh, g, gaussSeg{mu: 0, sqrt: n, m: n}, 0.2); err != nil {
			t.Fatal(err)
		}
		if err := natGradUpdate(kept, g, gaussSeg{mu: 0, sqrt: n, m: n, work: work}, 0.2); err != nil {
			t.Fatal(err)
		}
		for i := range fresh {
			if math.Float64bits(fresh[i]) != math.Float64bits(kept[i]) {
				t.Fatalf("step %d (M = %d): entry %d is %.17g with kept matrices, %.17g with fresh ones", step, n, i, kept[i], fresh[i])
			}
		}
	}
}
