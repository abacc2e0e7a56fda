package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Conditioning on the integrated features leaves only the spectral mass
// outside their band: Var f(0) → 1 − 2ε Σ_m s(z_m) (the midpoint rule of
// IFF's trace term), computed here independently of the Matheron updates.
// Point Fourier features leave the prior almost untouched (→ exactly as
// Δ → 0), and the prior variance is the discretised ∫ s = k(0) = 1.
func TestIFFConstructionMoments(t *testing.T) {
	c := newIFFConstruction()
	truth := c.draw(rand.New(rand.NewPCG(1, 2)))
	mid := len(c.x) / 2
	if c.x[mid] != 0 {
		t.Fatalf("grid middle %g, want 0", c.x[mid])
	}
	_, prior := c.moments(truth, false, false)
	if math.Abs(prior[mid]-1) > 1e-3 {
		t.Errorf("prior variance %.6f, want 1 ± 1e-3 (∫ s = k(0))", prior[mid])
	}
	var zs float64
	for m := 0; m < c.boxes; m++ {
		zs += seSpectral(c.boxCentre(m))
	}
	want := 1 - 2*c.eps*zs
	_, iff := c.moments(truth, true, true)
	// The midpoint rule and the box average differ by O(ε²) per box.
	if math.Abs(iff[mid]-want) > 2e-3 {
		t.Errorf("Var f(0) after IFF %.6f, want 1 − 2εΣs(z) = %.6f ± 2e-3", iff[mid], want)
	}
	if !(want > 0.005 && want < 0.02) {
		t.Errorf("residual spectral mass %.4f: the figure's band should leave a visible but small remainder", want)
	}
	_, ff := c.moments(truth, true, false)
	for i, v := range ff {
		if v < 0.97*prior[i] || v > prior[i]+1e-12 {
			t.Fatalf("Var f(%g) after point Fourier features %.4f, want in [0.97, 1] × prior %.4f", c.x[i], v, prior[i])
		}
	}
	// Variances are non-negative and the IFF posterior is tighter everywhere.
	for i := range iff {
		if iff[i] < -1e-12 || iff[i] > ff[i] {
			t.Fatalf("Var f(%g): IFF %.6g, Fourier features %.6g", c.x[i], iff[i], ff[i])
		}
	}
}

// Matheron's rule: a conditioned sample has exactly the truth's features,
// and conditioning a sample on its own features changes nothing.
func TestIFFConstructionConditioning(t *testing.T) {
	c := newIFFConstruction()
	rng := rand.New(rand.NewPCG(3, 4))
	truth, w := c.draw(rng), c.draw(rng)
	for _, integrated := range []bool{false, true} {
		got := c.condition(w, truth, integrated)
		for m := 0; m < c.boxes; m++ {
			var a, b float64
			for _, j := range c.feature(m, integrated) {
				a += got.plus[j] - truth.plus[j]
				b += got.minus[j] - truth.minus[j]
			}
			if math.Abs(a) > 1e-12 || math.Abs(b) > 1e-12 {
				t.Fatalf("integrated=%v feature %d: conditioned sample misses the data by %g, %g", integrated, m, a, b)
			}
		}
		same := c.condition(truth, truth, integrated)
		for j := range same.plus {
			if math.Abs(same.plus[j]-truth.plus[j]) > 1e-12 || math.Abs(same.minus[j]-truth.minus[j]) > 1e-12 {
				t.Fatalf("conditioning the truth on itself moved weight %d", j)
			}
		}
	}
}

func TestIllustrationFigure(t *testing.T) {
	src := "name = \"p\"\n[[grid]]\nname = \"g\"\n[grid.params]\nm = 1\n[[figure]]\nname = \"figure-1\"\nkind = \"illustration\"\nillustration = \"iff-construction\"\n"
	spec, err := Parse("p.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := buildIllustration(spec.Figures[0], nil, nil, &renderCtx{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.panels) != 6 {
		t.Fatalf("%d panels, want 6 (3 columns × data and frequency domain)", len(f.panels))
	}
	for _, p := range f.panels {
		if p.Title.Text == "" {
			t.Error("unlabelled panel")
		}
	}
	png, err := f.encode("png")
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("png: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(src, "iff-construction", "iff", 1), `unknown illustration "iff"; valid: iff-construction`},
		{src + "grid = \"g\"\n", "an illustration is computed"},
	} {
		if _, err := Parse("p.toml", c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
