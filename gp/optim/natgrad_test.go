package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// conjugate is the SVGP-like ELBO of q(u) = N(m, S) with prior N(0, K) and
// observations yₙ ~ N(aₙᵀu, σ²):
// L = Σₙ E_q[log N(yₙ | aₙᵀu, σ²)] − KL(q ‖ p).
type conjugate struct {
	A    *mat.Dense
	K    *mat.SymDense
	y    []float64
	sig2 float64
}

func newConjugate(rng *rand.Rand, n, m int) *conjugate {
	a := mat.NewDense(n, m, nil)
	for i := range n {
		for j := range m {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	return &conjugate{A: a, K: testhelp.RandSPD(rng, m, 1), y: y, sig2: 0.3}
}

func (c *conjugate) elbo(m *mat.VecDense, S *mat.SymDense) float64 {
	n, _ := c.A.Dims()
	var l float64
	for i := range n {
		ai := c.A.RowView(i)
		d := c.y[i] - mat.Dot(ai, m)
		l += -0.5*math.Log(2*math.Pi*c.sig2) - (d*d+mat.Inner(ai, S, ai))/(2*c.sig2)
	}
	var chK, chS mat.Cholesky
	chK.Factorize(c.K)
	if !chS.Factorize(S) {
		return math.Inf(-1)
	}
	var kinvS mat.Dense
	_ = chK.SolveTo(&kinvS, S)
	var kinvm mat.VecDense
	_ = chK.SolveVecTo(&kinvm, m)
	kl := 0.5 * (mat.Trace(&kinvS) + mat.Dot(m, &kinvm) - float64(m.Len()) + chK.LogDet() - chS.LogDet())
	return l - kl
}

func (c *conjugate) grads(m *mat.VecDense, S *mat.SymDense) (*mat.VecDense, *mat.SymDense) {
	mm := m.Len()
	var kinv, sinv mat.SymDense
	var chK, chS mat.Cholesky
	chK.Factorize(c.K)
	chS.Factorize(S)
	_ = chK.InverseTo(&kinv)
	_ = chS.InverseTo(&sinv)
	var r mat.VecDense
	r.MulVec(c.A, m)
	r.SubVec(mat.NewVecDense(len(c.y), c.y), &r)
	dm := mat.NewVecDense(mm, nil)
	dm.MulVec(c.A.T(), &r)
	dm.ScaleVec(1/c.sig2, dm)
	var km mat.VecDense
	km.MulVec(&kinv, m)
	dm.SubVec(dm, &km)
	dS := mat.NewSymDense(mm, nil)
	dS.SymOuterK(-1/(2*c.sig2), c.A.T())
	for i := range mm {
		for j := i; j < mm; j++ {
			dS.SetSym(i, j, dS.At(i, j)-0.5*kinv.At(i, j)+0.5*sinv.At(i, j))
		}
	}
	return dm, dS
}

// optimum is the exact posterior: S* = (K⁻¹ + AᵀA/σ²)⁻¹, m* = S*Aᵀy/σ².
func (c *conjugate) optimum() (*mat.VecDense, *mat.SymDense) {
	_, mm := c.A.Dims()
	var kinv mat.SymDense
	var chK mat.Cholesky
	chK.Factorize(c.K)
	_ = chK.InverseTo(&kinv)
	var prec mat.SymDense
	prec.SymOuterK(1/c.sig2, c.A.T())
	prec.AddSym(&prec, &kinv)
	var ch mat.Cholesky
	ch.Factorize(&prec)
	S := mat.NewSymDense(mm, nil)
	_ = ch.InverseTo(S)
	var aty mat.VecDense
	aty.MulVec(c.A.T(), mat.NewVecDense(len(c.y), c.y))
	m := mat.NewVecDense(mm, nil)
	m.MulVec(S, &aty)
	m.ScaleVec(1/c.sig2, m)
	return m, S
}

func TestNatGradConjugate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dims := range [][2]int{{8, 3}, {30, 6}} {
		c := newConjugate(rng, dims[0], dims[1])
		mm := dims[1]
		m0 := mat.NewVecDense(mm, nil)
		for i := range mm {
			m0.SetVec(i, rng.NormFloat64())
		}
		S0 := testhelp.RandSPD(rng, mm, 0.5)

		// The test's own gradients are checked against finite differences.
		dm, dS := c.grads(m0, S0)
		gm := fd.Gradient(nil, func(x []float64) float64 { return c.elbo(mat.NewVecDense(mm, x), S0) }, m0.RawVector().Data, nil)
		for i := range gm {
			if math.Abs(gm[i]-dm.AtVec(i)) > 1e-5*(1+math.Abs(gm[i])) {
				t.Fatalf("dL/dm[%d] = %g, fd %g", i, dm.AtVec(i), gm[i])
			}
		}
		// Perturb S symmetrically along E_ij + E_ji: dL = 2 G_ij (i ≠ j).
		for i := range mm {
			for j := i; j < mm; j++ {
				h := 1e-5
				Sp, Sm := mat.NewSymDense(mm, nil), mat.NewSymDense(mm, nil)
				Sp.CopySym(S0)
				Sm.CopySym(S0)
				Sp.SetSym(i, j, S0.At(i, j)+h)
				Sm.SetSym(i, j, S0.At(i, j)-h)
				num := (c.elbo(m0, Sp) - c.elbo(m0, Sm)) / (2 * h)
				want := dS.At(i, j)
				if i != j {
					want *= 2
				}
				if math.Abs(num-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("dL/dS[%d,%d]: %g, fd %g", i, j, want, num)
				}
			}
		}

		// γ = 1 lands on the exact posterior.
		m1, S1, err := NatGradStep(m0, S0, dm, dS, 1)
		if err != nil {
			t.Fatal(err)
		}
		mStar, sStar := c.optimum()
		if !mat.EqualApprox(m1, mStar, 1e-10) || !mat.EqualApprox(S1, sStar, 1e-10) {
			t.Errorf("γ=1: m %v, want %v", mat.Formatted(m1.T()), mat.Formatted(mStar.T()))
		}
		// Small steps increase the ELBO, and never beat the optimum.
		l0, lStar := c.elbo(m0, S0), c.elbo(mStar, sStar)
		for _, g := range []float64{1e-3, 0.05, 0.3} {
			mg, Sg, err := NatGradStep(m0, S0, dm, dS, g)
			if err != nil {
				t.Fatalf("γ=%g: %v", g, err)
			}
			if lg := c.elbo(mg, Sg); !(lg > l0) || lg > lStar+1e-9 {
				t.Errorf("γ=%g: ELBO %g, start %g, optimum %g", g, lg, l0, lStar)
			}
		}
	}
}

func TestNatGradErrors(t *testing.T) {
	m := mat.NewVecDense(2, []float64{0, 0})
	S := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	g := mat.NewVecDense(2, nil)
	G := mat.NewSymDense(2, nil)
	notPD := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	bigG := mat.NewSymDense(2, []float64{1, 0, 0, 1}) // S⁻¹ − 2γG indefinite for γ ≥ ½
	cases := []struct {
		name  string
		m     *mat.VecDense
		S, G  *mat.SymDense
		gamma float64
	}{
		{"dims", mat.NewVecDense(3, nil), S, G, 1},
		{"gamma", m, S, G, 0},
		{"S not PD", m, notPD, G, 1},
		{"step too large", m, S, bigG, 1},
	}
	for _, c := range cases {
		if _, _, err := NatGradStep(c.m, c.S, g, c.G, c.gamma); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
