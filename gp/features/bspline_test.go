package features

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// coxDeBoor evaluates the deriv-th derivative of the degree-k B-spline j
// on the knots t by the Cox–de Boor recursion (independent of the local
// polynomial forms in bspline.go).
func coxDeBoor(t []float64, j, k, deriv int, x float64) float64 {
	if deriv > 0 {
		if k == 0 {
			return 0
		}
		v := 0.0
		if d := t[j+k] - t[j]; d > 0 {
			v += float64(k) / d * coxDeBoor(t, j, k-1, deriv-1, x)
		}
		if d := t[j+k+1] - t[j+1]; d > 0 {
			v -= float64(k) / d * coxDeBoor(t, j+1, k-1, deriv-1, x)
		}
		return v
	}
	if k == 0 {
		if t[j] <= x && x < t[j+1] {
			return 1
		}
		return 0
	}
	v := 0.0
	if d := t[j+k] - t[j]; d > 0 {
		v += (x - t[j]) / d * coxDeBoor(t, j, k-1, 0, x)
	}
	if d := t[j+k+1] - t[j+1]; d > 0 {
		v += (t[j+k+1] - x) / d * coxDeBoor(t, j+1, k-1, 0, x)
	}
	return v
}

func splineKnots(iv Interval, m int) []float64 {
	delta := iv.Width() / float64(m-3)
	t := make([]float64, m+4)
	for i := range t {
		t[i] = iv.A + float64(i-3)*delta
	}
	return t
}

func TestBSplineBasisMatchesCoxDeBoor(t *testing.T) {
	iv := Interval{-0.4, 2.1}
	const m = 9
	k, _ := kernels.New("matern32", 1, kernels.Options{})
	f, err := NewBSplines(k, []Interval{iv}, m, Additive)
	if err != nil {
		t.Fatal(err)
	}
	knots := splineKnots(iv, m)
	xs := []float64{-0.4, -0.1, 0.3, 0.9999, 1.5, 2.0999}
	phi, err := f.Phi(mat.NewDense(len(xs), 1, xs))
	if err != nil {
		t.Fatal(err)
	}
	for n, x := range xs {
		sum := 0.0
		for j := 0; j < m; j++ {
			want := coxDeBoor(knots, j, 3, 0, x)
			if d := math.Abs(phi.At(j, n) - want); d > 1e-13 {
				t.Errorf("B_%d(%v) = %v, Cox–de Boor %v", j, x, phi.At(j, n), want)
			}
			sum += phi.At(j, n)
		}
		if math.Abs(sum-1) > 1e-13 {
			t.Errorf("Σ_j B_j(%v) = %v, want 1 (partition of unity)", x, sum)
		}
	}
	// x = b exactly belongs to the last interval: (B_{m−3}, B_{m−2}, B_{m−1}) = (⅙, ⅔, ⅙).
	phi, err = f.Phi(mat.NewDense(1, 1, []float64{iv.B}))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(phi.At(m-3, 0)-1.0/6) > 1e-13 || math.Abs(phi.At(m-2, 0)-2.0/3) > 1e-13 || math.Abs(phi.At(m-1, 0)-1.0/6) > 1e-13 {
		t.Errorf("Φ(b) = %v", mat.Formatted(phi.T()))
	}
}

// TestBSplineGramQuadrature compares the banded Kuu with RKHS inner
// products of Cox–de Boor splines computed by quadrature, per Matérn order.
func TestBSplineGramQuadrature(t *testing.T) {
	iv := Interval{0.2, 1.7}
	const m = 8
	knots := splineKnots(iv, m)
	breaks := append([]float64(nil), knots[4:m]...) // interior knots
	for _, name := range []string{"matern12", "matern32", "matern52"} {
		k, kb := matern1D(t, name, 0.8, 0.3)
		f, err := NewBSplines(k, []Interval{iv}, m, Additive)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Kuu(kb).Value()
		spline := func(j int) fn {
			return func(x float64, d int) float64 { return coxDeBoor(knots, j, 3, d, x) }
		}
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				if abs := i - j; abs > 3 || -abs > 3 {
					if got.At(i, j) != 0 {
						t.Errorf("%s: Kuu[%d,%d] = %g outside the band", name, i, j, got.At(i, j))
					}
					continue
				}
				want := rkhsInner(spline(i), spline(j), orderOf(name), 0.8, 0.3, iv, breaks...)
				if d := math.Abs(got.At(i, j) - want); d > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: Kuu[%d,%d] = %.12g, quadrature %.12g", name, i, j, got.At(i, j), want)
				}
			}
		}
	}
}

// TestBSplineQffConverges: q(x, x') → k(x, x') as the knot grid refines.
func TestBSplineQffConverges(t *testing.T) {
	iv := Interval{-1, 2}
	for _, name := range []string{"matern32", "matern52"} {
		k, kb := matern1D(t, name, 1.3, 0.4)
		kv := kernels.Matrix(k, mustSet(t, k), "k.", mat.NewDense(1, 1, []float64{0.3}), mat.NewDense(1, 1, []float64{0.5})).At(0, 0)
		var gaps []float64
		for _, m := range []int{8, 16, 32, 64} {
			f, err := NewBSplines(k, []Interval{iv}, m, Additive)
			if err != nil {
				t.Fatal(err)
			}
			gaps = append(gaps, math.Abs(kv-qff(t, f, kb, 0.3, 0.5)))
		}
		for i := 1; i < len(gaps); i++ {
			if gaps[i] > gaps[i-1] {
				t.Errorf("%s: gaps %v not decreasing", name, gaps)
			}
		}
		if gaps[len(gaps)-1] > 1e-3 {
			t.Errorf("%s: gap %g with 64 bases", name, gaps[len(gaps)-1])
		}
	}
}

func TestBSplineTensorAndGradients(t *testing.T) {
	k1, _ := kernels.New("matern52", 1, kernels.Options{Lengthscales: []float64{0.5}})
	k2, _ := kernels.New("matern52", 1, kernels.Options{Lengthscales: []float64{0.9}})
	sep, _ := NewSeparable(k1, k2)
	f, err := NewBSplines(sep, []Interval{{0, 1}, {0, 2}}, 6, Kronecker)
	if err != nil {
		t.Fatal(err)
	}
	if f.M() != 36 {
		t.Fatalf("M = %d", f.M())
	}
	s := param.NewSet()
	if err := sep.Declare(s, "k."); err != nil {
		t.Fatal(err)
	}
	kuu := f.Kuu(sep.Bind(s.Bind(ad.NewTape()), "k.")).Value()
	// Banded Kronecker structure: blocks (i, k) with |i − k| > 3 vanish.
	for i := 0; i < 36; i++ {
		for j := 0; j < 36; j++ {
			if (abs(i/6-j/6) > 3 || abs(i%6-j%6) > 3) && kuu.At(i, j) != 0 {
				t.Fatalf("Kuu[%d,%d] = %g outside the band", i, j, kuu.At(i, j))
			}
		}
	}
	for _, name := range []string{"matern12", "matern32", "matern52"} {
		k, _ := matern1D(t, name, 1, 1)
		g, err := NewBSplines(k, []Interval{{-0.2, 1.3}}, 7, Additive)
		if err != nil {
			t.Fatal(err)
		}
		err = ad.CheckGradient(func(tp *ad.Tape, xs []*ad.Node) *ad.Node {
			return g.Grams(&fakeMatern{v: xs[0], l: xs[1]})[0]
		}, []*mat.Dense{mat.NewDense(1, 1, []float64{0.7}), mat.NewDense(1, 1, []float64{0.3})}, 1e-6, 1e-6)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func TestBSplineBadInput(t *testing.T) {
	se, _ := kernels.New("se", 1, kernels.Options{})
	m, _ := kernels.New("matern12", 1, kernels.Options{})
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"se":       {func() error { _, e := NewBSplines(se, []Interval{{0, 1}}, 10, Additive); return e }(), "matern12, matern32 and matern52"},
		"few":      {func() error { _, e := NewBSplines(m, []Interval{{0, 1}}, 3, Additive); return e }(), "≥ 4"},
		"interval": {func() error { _, e := NewBSplines(m, []Interval{{1, 0}}, 10, Additive); return e }(), "a < b"},
		"outside": {func() error {
			f, _ := NewBSplines(m, []Interval{{0, 1}}, 10, Additive)
			_, e := f.Phi(mat.NewDense(1, 1, []float64{-0.01}))
			return e
		}(), "widen the interval"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, c.err, c.want)
		}
	}
}

func ExampleNewBSplines() {
	k1, _ := kernels.New("matern52", 1, kernels.Options{})
	k2, _ := kernels.New("matern52", 1, kernels.Options{})
	sep, _ := NewSeparable(k1, k2)
	x := mat.NewDense(3, 2, []float64{0, 0, 0.5, 1, 1, 2})
	box, _ := PaddedIntervals(x, 0.1) // [min − 0.1, max + 0.1] per dimension
	f, _ := NewBSplines(sep, box, 10, Kronecker)
	phi, _ := f.Phi(x)
	fmt.Println(f.Name(), f.M(), mat.Sum(phi.ColView(0)))
	// Output: bspline(kronecker) 100 1
}
