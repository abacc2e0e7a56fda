package testhelp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestRelErr(t *testing.T) {
	for _, c := range []struct{ got, want, err float64 }{
		{1.5, 1, 0.5}, {110, 100, 0.1}, {1e-3, 0, 1e-3}, {-2, -2, 0},
	} {
		if e := RelErr(c.got, c.want); math.Abs(e-c.err) > 1e-15 {
			t.Errorf("RelErr(%v, %v) = %v, want %v", c.got, c.want, e, c.err)
		}
	}
	if e := RelNormErr([]float64{3, 4}, []float64{0, 5}); math.Abs(e-math.Sqrt(10)/5) > 1e-15 {
		t.Errorf("RelNormErr = %v, want √10/5", e)
	}
}

func TestRandSPD(t *testing.T) {
	s := RandSPD(rand.New(rand.NewPCG(1, 2)), 6, 0.1)
	var eig mat.EigenSym
	if !eig.Factorize(s, false) {
		t.Fatal("no eigendecomposition")
	}
	if min := eig.Values(nil)[0]; min < 0.1-1e-12 {
		t.Errorf("smallest eigenvalue %v below the jitter 0.1", min)
	}
}

// With Z = X the bound is the exact log marginal likelihood (Qff = Kff).
func TestTitsiasBoundExactAtZEqualX(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	k := RandSPD(rng, 5, 0.5)
	kd := mat.DenseCopyOf(k)
	y := []float64{0.3, -1, 2, 0.5, -0.2}
	diag := make([]float64, 5)
	for i := range diag {
		diag[i] = k.At(i, i)
	}
	got, err := TitsiasBound(kd, kd, diag, y, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	c := mat.NewSymDense(5, nil)
	c.CopySym(k)
	for i := 0; i < 5; i++ {
		c.SetSym(i, i, c.At(i, i)+0.2)
	}
	var chol mat.Cholesky
	chol.Factorize(c)
	yv := mat.NewVecDense(5, y)
	var a mat.VecDense
	chol.SolveVecTo(&a, yv)
	want := -0.5*mat.Dot(yv, &a) - 0.5*chol.LogDet() - 2.5*math.Log(2*math.Pi)
	if math.Abs(got-want) > 1e-10 {
		t.Errorf("bound %v, exact LML %v", got, want)
	}
}

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		got, want string
		n         int
		g, w      string
	}{
		{"a\nb\nc", "a\nb\nc", 0, "", ""},
		{"a\nx\nc", "a\nb\nc", 2, "x", "b"},
		{"a\nb", "a\nb\nc", 3, "", "c"},
		{"a\n", "a", 2, "", ""}, // a trailing newline more

	} {
		n, g, w := FirstDiff(c.got, c.want)
		if n != c.n || g != c.g || w != c.w {
			t.Errorf("FirstDiff(%q, %q) = %d, %q, %q; want %d, %q, %q", c.got, c.want, n, g, w, c.n, c.g, c.w)
		}
	}
}

func TestSameBits(t *testing.T) {
	a := mat.NewDense(2, 2, []float64{1, 0, math.NaN(), 3})
	for _, c := range []struct {
		b    *mat.Dense
		want bool
	}{
		{mat.NewDense(2, 2, []float64{1, 0, math.NaN(), 3}), true},
		{mat.NewDense(2, 2, []float64{1, math.Copysign(0, -1), math.NaN(), 3}), false}, // −0 ≠ +0
		{mat.NewDense(2, 2, []float64{1, 0, math.NaN(), math.Nextafter(3, 4)}), false}, // one ulp
		{mat.NewDense(1, 4, []float64{1, 0, math.NaN(), 3}), false},                    // shape
	} {
		if got := SameBits(a, c.b); got != c.want {
			t.Errorf("SameBits(%v, %v) = %v, want %v", mat.Formatted(a), mat.Formatted(c.b), got, c.want)
		}
	}
}
