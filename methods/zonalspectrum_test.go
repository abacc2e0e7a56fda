package methods

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
)

// zonal-spectrum against closed forms on S^2 (d = 3: two inputs and a bias
// column): ReLU's odd levels ≥ 3 vanish by parity, and its ζ_ℓ decays like
// √λ_ℓ of arccos1 (the two differ only through N(d,ℓ) weighting in the RKHS
// norm, spec §3), while softplus decays much faster. Level 1 of ReLU on the
// surface measure of S^2 is 2π·∫ max(t,0)·t dt = 2π/3 (R_1(t) = t).
func TestZonalSpectrum(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{-1, 0.2, -0.3, 0.5, 0.4, -2, 1, 1})
	data := gp.Data{X: x, Y: []float64{0, 0, 0, 0}}
	coef := func(kernel, act, quantity string, level int) float64 {
		t.Helper()
		m, err := Build("zonal-spectrum", map[string]any{"kernel": kernel, "activation": act, "quantity": quantity, "level": int64(level)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Fit(context.Background(), data, FitOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Extra["sphere_dim"]; d != 3 {
			t.Fatalf("sphere dimension %v, want 3", d)
		}
		p, err := m.Predict(x)
		if err != nil || len(p.VarF) != 4 || !(p.VarF[0] > 0) {
			t.Fatalf("prior prediction %v, %v", p.VarF, err)
		}
		return res.Extra["coefficient"]
	}
	if got, want := coef("arccos1", "relu", "activation", 1), 2*math.Pi/3; math.Abs(got-want) > 1e-9 {
		t.Errorf("ReLU ζ_1 = %.12g, want 2π/3 = %.12g", got, want)
	}
	for _, l := range []int{3, 5, 7} {
		for _, act := range []string{"relu", "softplus"} {
			if z := coef("arccos1", act, "activation", l); z != 0 {
				t.Errorf("%s ζ_%d = %g, want exactly 0 (σ(t) − t/2 is even)", act, l, z)
			}
		}
		if k := coef("chordal-matern52", "relu", "kernel", l); !(k > 0) {
			t.Errorf("Matérn-5/2 √λ_%d = %g, want > 0 (the spectra mismatch)", l, k)
		}
		if k := coef("arccos1", "relu", "kernel", l); k > 1e-7 {
			t.Errorf("arccos1 √λ_%d = %g, want 0 (odd levels ≥ 3 vanish)", l, k)
		}
	}
	// Decay from ℓ = 2 to 20: ReLU tracks √λ of arccos1 (ratio of ratios
	// within 2×), softplus falls far faster.
	r := func(kernel, act, q string) float64 { return coef(kernel, act, q, 20) / coef(kernel, act, q, 2) }
	relu, ac, sp := r("arccos1", "relu", "activation"), r("arccos1", "relu", "kernel"), r("arccos1", "softplus", "activation")
	if q := relu / ac; q < 0.5 || q > 2 {
		t.Errorf("ReLU decay %g vs √λ decay %g: ratio %g, want within 2×", relu, ac, q)
	}
	if !(sp < relu/100) {
		t.Errorf("softplus decay %g not much faster than ReLU's %g", sp, relu)
	}
	if _, err := Build("zonal-spectrum", map[string]any{"level": int64(-1)}); err == nil {
		t.Error("level = -1: no error")
	}
}
