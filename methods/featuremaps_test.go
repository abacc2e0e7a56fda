package methods

import (
	"context"
	"math"
	"testing"

	"sgplab/gp"
)

func featureMap(t *testing.T, params map[string]any, name string) Artifact {
	t.Helper()
	m, err := Build("feature-maps", params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fit(context.Background(), gp.Data{}, FitOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	a, err := m.(ArtifactModel).Artifact(name, gp.Data{}, gp.Data{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func countFinite(a Artifact) int {
	n := 0
	for _, v := range a.Data {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// The M = 49 selections are the 7 × 7 square of 2-D VFF and the complete
// levels 0–6 of VISH (1 + 3 + … + 13 = 49); the VISH triangle holds 2ℓ + 1
// features on row ℓ with λ_ℓ decreasing in ℓ; VFF variances are symmetric
// and decrease with frequency. At d = 3 (spectral dimension 2, κ = 1)
// λ_ℓ/λ_0 = (3/(3 + ℓ(ℓ+1)))^{5/2}: level 1 is 10^{−0.554}.
func TestFeatureMapsSelections(t *testing.T) {
	vff := featureMap(t, map[string]any{"feature": "vff-2d"}, "selected_variance")
	vish := featureMap(t, map[string]any{"feature": "vish-s2"}, "selected_variance")
	if n := countFinite(vff); n != 49 {
		t.Errorf("vff-2d selection has %d features, want 49", n)
	}
	if n := countFinite(vish); n != 49 {
		t.Errorf("vish-s2 selection has %d features, want 49", n)
	}
	all := featureMap(t, map[string]any{"feature": "vish-s2"}, "prior_variance")
	width := len(all.Columns)
	prev := math.Inf(1)
	for l := 0; l < all.Rows; l++ {
		var n int
		var v float64
		for c := 0; c < width; c++ {
			if x := all.Data[l*width+c]; !math.IsNaN(x) {
				n++
				v = x
			}
		}
		if n != 2*l+1 || !(v < prev) {
			t.Errorf("level %d: %d features (want %d), variance %g after %g", l, n, 2*l+1, v, prev)
		}
		prev = v
	}
	if got, want := all.Data[width+width/2], 2.5*math.Log10(3.0/5); math.Abs(got-want) > 1e-14 {
		t.Errorf("log10 λ_1/λ_0 = %.16g, want %.16g", got, want)
	}
	sq := featureMap(t, map[string]any{"feature": "vff-2d"}, "prior_variance")
	s := sq.Rows
	for i := 0; i < s; i++ {
		for j := 0; j < s; j++ {
			if sq.Data[i*s+j] != sq.Data[j*s+i] {
				t.Fatalf("vff-2d variance not symmetric at (%d, %d)", i, j)
			}
		}
	}
	if sq.Data[0] != 0 || !(sq.Data[2*s+2] < sq.Data[2]) || sq.Data[1] != sq.Data[2] {
		t.Errorf("vff-2d: log10 (0,0) = %g (want 0), (2,2) = %g should be below (0,2) = %g; sin and cos of one frequency equal: %g, %g",
			sq.Data[0], sq.Data[2*s+2], sq.Data[2], sq.Data[1], sq.Data[2])
	}
}

// The harmonic maps are orthonormal on S² (un-normalised measure): by the
// trapezoidal rule in φ and Simpson's in θ with weight sin θ,
// ∫ φ_a φ_b dσ = δ_ab, and φ_0 = 1/√(4π).
func TestFeatureMapsHarmonicsOrthonormal(t *testing.T) {
	const nt = 181
	maps := map[int]Artifact{}
	for _, h := range []int{0, 2, 5, 7, 15} {
		maps[h] = featureMap(t, map[string]any{"feature": "harmonic-s2", "harmonic": h, "grid_n": nt}, "harmonic_map")
	}
	if v := maps[0].Data[1234]; math.Abs(v-1/math.Sqrt(4*math.Pi)) > 1e-14 {
		t.Errorf("φ_0 = %.16g, want 1/√(4π)", v)
	}
	np := len(maps[0].Columns)
	inner := func(a, b Artifact) float64 {
		var s float64
		for i := 0; i < nt; i++ {
			th := math.Pi * float64(i) / (nt - 1)
			wt := 2.0
			if i%2 == 1 {
				wt = 4
			}
			if i == 0 || i == nt-1 {
				wt = 1
			}
			var row float64
			for j := 0; j < np-1; j++ { // periodic: the last column repeats the first
				row += a.Data[i*np+j] * b.Data[i*np+j]
			}
			s += wt * math.Sin(th) * row * (2 * math.Pi / float64(np-1))
		}
		return s * math.Pi / (nt - 1) / 3
	}
	for ha, a := range maps {
		for hb, b := range maps {
			want := 0.0
			if ha == hb {
				want = 1
			}
			if got := inner(a, b); math.Abs(got-want) > 1e-6 {
				t.Errorf("⟨φ_%d, φ_%d⟩ = %.9f, want %g", ha, hb, got, want)
			}
		}
	}
}

func TestFeatureMapsBadInput(t *testing.T) {
	for _, p := range []map[string]any{
		{"feature": "vff-2d", "num_features": 50},
		{"feature": "vish-s2", "num_features": 50},
	} {
		m, err := Build("feature-maps", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Fit(context.Background(), gp.Data{}, FitOptions{}, nil); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
	if _, err := Build("feature-maps", map[string]any{"harmonic": -1}); err == nil {
		t.Error("harmonic = −1: no error")
	}
}
