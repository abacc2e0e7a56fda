package illustrations

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Conditioning on the integrated features leaves only the spectral mass
// outside their band: Var f(0) → 1 − 2ε Σ_m s(z_m) (the midpoint rule of
// IFF's trace term), computed here independently of the Matheron updates.
// Point Fourier features leave the prior almost untouched (→ exactly as
// Δ → 0), and the prior variance is the discretised ∫ s = k(0) = 1.
func TestIFFConstructionMoments(t *testing.T) {
	c := NewIFFConstruction()
	truth := c.Draw(rand.New(rand.NewPCG(1, 2)))
	mid := len(c.X) / 2
	if c.X[mid] != 0 {
		t.Fatalf("grid middle %g, want 0", c.X[mid])
	}
	_, prior := c.Moments(truth, false, false)
	if math.Abs(prior[mid]-1) > 1e-3 {
		t.Errorf("prior variance %.6f, want 1 ± 1e-3 (∫ s = k(0))", prior[mid])
	}
	var zs float64
	for m := 0; m < c.Boxes; m++ {
		zs += SESpectral(c.BoxCentre(m))
	}
	want := 1 - 2*c.Eps*zs
	_, iff := c.Moments(truth, true, true)
	// The midpoint rule and the box average differ by O(ε²) per box.
	if math.Abs(iff[mid]-want) > 2e-3 {
		t.Errorf("Var f(0) after IFF %.6f, want 1 − 2εΣs(z) = %.6f ± 2e-3", iff[mid], want)
	}
	if !(want > 0.005 && want < 0.02) {
		t.Errorf("residual spectral mass %.4f: the figure's band should leave a visible but small remainder", want)
	}
	_, ff := c.Moments(truth, true, false)
	for i, v := range ff {
		if v < 0.97*prior[i] || v > prior[i]+1e-12 {
			t.Fatalf("Var f(%g) after point Fourier features %.4f, want in [0.97, 1] × prior %.4f", c.X[i], v, prior[i])
		}
	}
	// Variances are non-negative and the IFF posterior is tighter everywhere.
	for i := range iff {
		if iff[i] < -1e-12 || iff[i] > ff[i] {
			t.Fatalf("Var f(%g): IFF %.6g, Fourier features %.6g", c.X[i], iff[i], ff[i])
		}
	}
}

// Matheron's rule: a conditioned sample has exactly the truth's features,
// and conditioning a sample on its own features changes nothing.
func TestIFFConstructionConditioning(t *testing.T) {
	c := NewIFFConstruction()
	rng := rand.New(rand.NewPCG(3, 4))
	truth, w := c.Draw(rng), c.Draw(rng)
	for _, integrated := range []bool{false, true} {
		got := c.Condition(w, truth, integrated)
		for m := 0; m < c.Boxes; m++ {
			var a, b float64
			for _, j := range c.Feature(m, integrated) {
				a += got.Plus[j] - truth.Plus[j]
				b += got.Minus[j] - truth.Minus[j]
			}
			if math.Abs(a) > 1e-12 || math.Abs(b) > 1e-12 {
				t.Fatalf("integrated=%v feature %d: conditioned sample misses the data by %g, %g", integrated, m, a, b)
			}
		}
		same := c.Condition(truth, truth, integrated)
		for j := range same.Plus {
			if math.Abs(same.Plus[j]-truth.Plus[j]) > 1e-12 || math.Abs(same.Minus[j]-truth.Minus[j]) > 1e-12 {
				t.Fatalf("conditioning the truth on itself moved weight %d", j)
			}
		}
	}
}

// FeatureValues are the box averages (IFF) or point values (Fourier) of the
// truth, and OutsideMass is what the IFF moments leave at x = 0.
func TestIFFConstructionFeatureValues(t *testing.T) {
	c := NewIFFConstruction()
	truth, samples := c.Draws(2, 7)
	if len(samples) != 2 {
		t.Fatalf("%d samples, want 2", len(samples))
	}
	for _, integrated := range []bool{false, true} {
		z, u := c.FeatureValues(truth, integrated)
		if len(z) != 2*c.Boxes || len(u) != 2*c.Boxes {
			t.Fatalf("%d, %d feature values, want %d", len(z), len(u), 2*c.Boxes)
		}
		for m := 0; m < c.Boxes; m++ {
			idx := c.Feature(m, integrated)
			var want float64
			for _, j := range idx {
				want += truth.Plus[j]
			}
			if integrated {
				want /= math.Sqrt(float64(len(idx)))
			}
			if z[2*m] != c.BoxCentre(m) || z[2*m+1] != -c.BoxCentre(m) || math.Abs(u[2*m]-want) > 1e-12 {
				t.Fatalf("integrated=%v feature %d: (%g, %g), want (%g, %g)", integrated, m, z[2*m], u[2*m], c.BoxCentre(m), want)
			}
		}
	}
	_, v := c.Moments(truth, true, true)
	if got := c.OutsideMass(); math.Abs(v[len(c.X)/2]-got) > 2e-3 {
		t.Errorf("OutsideMass %.6f, Var f(0) after IFF %.6f", got, v[len(c.X)/2])
	}
}
