package features

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// TestComponentsBlocks: Kuu is block diagonal over the components and each
// block of Kuf is the part's Kuf under its own component kernel.
func TestComponentsBlocks(t *testing.T) {
	k1, _ := kernels.New("matern32", 1, kernels.Options{Variance: 0.8, Lengthscales: []float64{0.3}})
	k2, _ := kernels.New("periodic", 1, kernels.Options{Variance: 0.5, Lengthscales: []float64{0.4}, Period: 0.5})
	k, err := kernels.Sum(k1, k2)
	if err != nil {
		t.Fatal(err)
	}
	vff, err := NewVFF(k1, []Interval{{A: -0.5, B: 1.5}}, 4, Additive, false)
	if err != nil {
		t.Fatal(err)
	}
	r := mat.NewDense(3, 1, []float64{0.1, 0.45, 0.8})
	if _, err := NewComponents(nil, nil); err == nil {
		t.Error("components with no parts: no error")
	}
	c, err := NewComponents(vff, NewInducingPoints(r))
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	if err := c.Declare(s, "f."); err != nil {
		t.Fatal(err)
	}
	tape := ad.NewTape()
	b := s.Bind(tape)
	kb := k.Bind(b, "k.")
	fb := c.Bind(b, "f.")
	if fb.M() != 7+3 {
		t.Fatalf("M = %d, want 10", fb.M())
	}
	kb1, kb2 := k1.Bind(b, "k.k0."), k2.Bind(b, "k.k1.")
	x := tape.Const(mat.NewDense(4, 1, []float64{0, 0.3, 0.7, 1.2}))
	wantUU := BlockDiag(vff.Kuu(kb1), kb2.K(tape.Const(r), tape.Const(r))).Value()
	wantUF := ad.VCat(vff.Bind(b, "").Kuf(kb1, x), kb2.K(tape.Const(r), x)).Value()
	for name, pair := range map[string][2]*mat.Dense{"Kuu": {fb.Kuu(kb).Value(), wantUU}, "Kuf": {fb.Kuf(kb, x).Value(), wantUF}} {
		if !mat.EqualApprox(pair[0], pair[1], 1e-14) {
			t.Errorf("%s:\n%v\nwant\n%v", name, mat.Formatted(pair[0]), mat.Formatted(pair[1]))
		}
	}
	// The Gram block of the periodic part is the periodic kernel alone.
	if v := fb.Kuu(kb).Value().At(7, 7); math.Abs(v-0.5) > 1e-14 {
		t.Errorf("periodic block diagonal %v, want the component variance 0.5", v)
	}
	if n := c.Name(); n != "components(vff(additive),inducing_points)" {
		t.Errorf("name %q", n)
	}
}
