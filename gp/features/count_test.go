package features

import (
	"testing"

	"sgplab/gp/kernels"
	"sgplab/gp/sphere"
)

// The counts a caller checks before building a feature set are the sizes
// the constructors give.
func TestCountsMatchConstructors(t *testing.T) {
	matern := func(dim int, s Structure) kernels.Kernel {
		parts := make([]kernels.Kernel, dim)
		for i := range parts {
			k, err := kernels.New("matern32", 1, kernels.Options{})
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = k
		}
		if dim == 1 {
			return parts[0]
		}
		if s == Additive {
			k, err := kernels.Additive(parts...)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		k, err := NewSeparable(parts...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	box := func(dim int) []Interval {
		ivs := make([]Interval, dim)
		for i := range ivs {
			ivs[i] = Interval{A: -1, B: 2}
		}
		return ivs
	}
	for _, c := range []struct {
		freq, dim int
		s         Structure
		mask      bool
	}{
		{1, 1, Kronecker, false}, {7, 1, Kronecker, false}, {4, 3, Kronecker, false}, {5, 2, Kronecker, true},
		{6, 3, Kronecker, true}, {2, 4, Kronecker, true}, {9, 3, Additive, false},
	} {
		f, err := NewVFF(matern(c.dim, c.s), box(c.dim), c.freq, c.s, c.mask)
		if err != nil {
			t.Fatal(err)
		}
		got, err := VFFCount(c.freq, c.dim, c.s, c.mask)
		if err != nil || got != f.M() {
			t.Errorf("VFFCount(%d, %d, %v, mask %v) = %d, %v; NewVFF has %d", c.freq, c.dim, c.s, c.mask, got, err, f.M())
		}
	}
	for _, c := range []struct {
		bases, dim int
		s          Structure
	}{{4, 1, Kronecker}, {6, 3, Kronecker}, {8, 2, Additive}} {
		f, err := NewBSplines(matern(c.dim, c.s), box(c.dim), c.bases, c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := BSplineCount(c.bases, c.dim, c.s); err != nil || got != f.M() {
			t.Errorf("BSplineCount(%d, %d, %v) = %d, %v; NewBSplines has %d", c.bases, c.dim, c.s, got, err, f.M())
		}
	}
	for _, c := range []struct {
		perDim []int
		mask   bool
	}{{[]int{16}, true}, {[]int{5, 7}, true}, {[]int{6, 6, 6}, true}, {[]int{3, 4}, false}} {
		eps := make([]float64, len(c.perDim))
		for i := range eps {
			eps[i] = 0.1
		}
		f, err := NewIFF(c.perDim, eps, c.mask)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := IFFCount(c.perDim, c.mask); err != nil || got != f.M() {
			t.Errorf("IFFCount(%v, %v) = %d, %v; NewIFF has %d", c.perDim, c.mask, got, err, f.M())
		}
	}
	for _, c := range []struct {
		d, l   int
		parity sphere.Parity
	}{{3, 4, sphere.Parity{}}, {5, 3, sphere.EvenPlusLinear}, {9, 3, sphere.Parity{}}} {
		f, err := NewSphericalHarmonics(c.d, c.l, c.parity)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := SphericalHarmonicsCount(c.d, c.l, c.parity); err != nil || got != f.M() {
			t.Errorf("SphericalHarmonicsCount(%d, %d) = %d, %v; NewSphericalHarmonics has %d", c.d, c.l, got, err, f.M())
		}
	}
}

// The counts of grids far too large to build are computed without
// enumerating them, and a count that overflows an int is an error.
func TestCountsOfHugeGrids(t *testing.T) {
	m, err := VFFCount(16, 6, Kronecker, false)
	if err != nil || m != 887503681 { // 31⁶: the yacht grid of issue 27
		t.Errorf("31⁶ = %d, %v", m, err)
	}
	if _, err := VFFCount(16, 20, Kronecker, false); err == nil {
		t.Error("31²⁰ features did not overflow")
	}
	if _, err := IFFCount([]int{16, 16, 16, 16, 16, 16, 16}, true); err == nil {
		t.Error("a 16⁷ IFF grid was accepted")
	}
	// The masked count visits only the points inside the sphere.
	if m, err := VFFCount(16, 6, Kronecker, true); err != nil || m < 1e6 || m > 887503681 {
		t.Errorf("masked 31⁶ grid: %d, %v", m, err)
	}
}
