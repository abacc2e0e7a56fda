package param

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

func TestPositiveRoundTrip(t *testing.T) {
	for _, v := range []float64{1e-5, 1e-3, 0.5, 1, 7.3, 45, 1e4} {
		u, err := DefaultPositive.Inverse(v)
		if err != nil {
			t.Fatalf("Inverse(%v): %v", v, err)
		}
		if got := DefaultPositive.Forward(u); math.Abs(got-v) > 1e-12*math.Max(1, v) {
			t.Errorf("Forward(Inverse(%v)) = %v", v, got)
		}
	}
	for _, v := range []float64{0, -1, 1e-7, math.NaN(), math.Inf(1)} {
		if _, err := DefaultPositive.Inverse(v); err == nil {
			t.Errorf("Inverse(%v) succeeded; want a range error", v)
		}
	}
}

func TestTransformDeriv(t *testing.T) {
	for _, tr := range []Transform{Identity{}, DefaultPositive, Positive{Lower: 0.1}} {
		for _, u := range []float64{-40, -3, -0.2, 0, 0.7, 5, 40} {
			want := fd.Derivative(tr.Forward, u, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			if got := tr.Deriv(u); math.Abs(got-want) > 1e-7 {
				t.Errorf("%s: Deriv(%v) = %v, finite difference %v", tr.Name(), u, got, want)
			}
		}
	}
}

func newTestSet(t *testing.T) *Set {
	t.Helper()
	s := NewSet()
	if err := s.AddScalar("variance", 2.5, DefaultPositive); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("lengthscales", mat.NewDense(1, 3, []float64{0.3, 1, 4}), DefaultPositive); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("z", mat.NewDense(2, 2, []float64{-1, 0.5, 2, -3}), nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSetVectorLayoutAndFixing(t *testing.T) {
	s := newTestSet(t)
	if got := s.Len(); got != 8 {
		t.Fatalf("Len = %d, want 8", got)
	}
	if err := s.AddScalar("variance", 1, nil); err == nil {
		t.Error("duplicate Add succeeded")
	}
	s.SetTrainable(false, "lengthscales")
	if got := s.Len(); got != 5 {
		t.Fatalf("Len with lengthscales fixed = %d, want 5", got)
	}
	x := s.Vector()
	// z is identity-transformed and last, so its raw values are the tail of the vector.
	if want := []float64{-1, 0.5, 2, -3}; !equal(x[1:], want) {
		t.Errorf("vector tail = %v, want %v", x[1:], want)
	}
	x[1] = 10
	s.SetVector(x)
	if got := s.Value("z").At(0, 0); got != 10 {
		t.Errorf("z[0,0] after SetVector = %v, want 10", got)
	}
	if got := s.Value("lengthscales").At(0, 2); math.Abs(got-4) > 1e-12 {
		t.Errorf("fixed lengthscale changed to %v", got)
	}
	snap := s.Snapshot()
	s.SetAllTrainable(true)
	s.SetVector(make([]float64, s.Len()))
	s.Restore(snap)
	if got := s.Scalar("variance"); math.Abs(got-2.5) > 1e-12 {
		t.Errorf("variance after Restore = %v, want 2.5", got)
	}
}

// TestBoundGradient checks Bound.Gradient against finite differences of an
// objective written in natural units, through the transforms.
func TestBoundGradient(t *testing.T) {
	s := newTestSet(t)
	s.SetTrainable(false, "z")
	objective := func(x []float64) (float64, []float64) {
		s.SetVector(x)
		tp := ad.NewTape()
		b := s.Bind(tp)
		v := b.Get("variance").Value().At(0, 0)
		ls := b.Get("lengthscales").Value()
		// f = variance² · Σ log ℓ_j — formed with Custom so the test does not depend on other ops.
		var sumLog float64
		for j := 0; j < 3; j++ {
			sumLog += math.Log(ls.At(0, j))
		}
		f := ad.Custom(mat.NewDense(1, 1, []float64{v * v * sumLog}), func(g *mat.Dense) []*mat.Dense {
			gv := mat.NewDense(1, 1, []float64{2 * v * sumLog * g.At(0, 0)})
			gl := mat.NewDense(1, 3, nil)
			for j := 0; j < 3; j++ {
				gl.Set(0, j, v*v/ls.At(0, j)*g.At(0, 0))
			}
			return []*mat.Dense{gv, gl}
		}, b.Get("variance"), b.Get("lengthscales"))
		tp.Backward(f)
		return f.Scalar(), b.Gradient()
	}
	x0 := s.Vector()
	_, got := objective(x0)
	want := make([]float64, len(x0))
	fd.Gradient(want, func(x []float64) float64 { f, _ := objective(x); return f }, x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Errorf("gradient[%d] = %v, finite difference %v", i, got[i], want[i])
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
