package features_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

func TestInducingPoints(t *testing.T) {
	z := mat.NewDense(3, 2, []float64{0, 0, 1, 0.5, -1, 2})
	x := mat.NewDense(4, 2, []float64{0.1, 0.2, 0.3, -0.4, 2, 1, -1, -1})
	for _, tc := range []struct {
		name  string
		fixed bool
	}{{"trainable", false}, {"fixed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := kernels.New("se", 2, kernels.Options{Variance: 1.7, Lengthscales: []float64{0.8, 1.3}, ARD: true})
			if err != nil {
				t.Fatal(err)
			}
			s := param.NewSet()
			if err := k.Declare(s, "kern."); err != nil {
				t.Fatal(err)
			}
			f := &features.InducingPoints{Z: z, Fixed: tc.fixed}
			if err := f.Declare(s, "feat."); err != nil {
				t.Fatal(err)
			}
			if got := s.Trainable("feat.z"); got == tc.fixed {
				t.Errorf("feat.z trainable = %v with Fixed = %v", got, tc.fixed)
			}
			tape := ad.NewTape()
			b := s.Bind(tape)
			fb := f.Bind(b, "feat.")
			kb := k.Bind(b, "kern.")
			if fb.M() != 3 {
				t.Errorf("M = %d, want 3", fb.M())
			}
			assertClose(t, "Kuu", fb.Kuu(kb).Value(), kernels.Matrix(k, s, "kern.", z, z))
			assertClose(t, "Kuf", fb.Kuf(kb, tape.Const(x)).Value(), kernels.Matrix(k, s, "kern.", z, x))
			if _, ok := fb.(features.DiagonalKuu); ok {
				t.Error("inducing points claim a diagonal Kuu")
			}
		})
	}
}

func TestInducingPointsErrors(t *testing.T) {
	s := param.NewSet()
	if err := (&features.InducingPoints{}).Declare(s, ""); err == nil {
		t.Error("nil Z accepted")
	}
	f := features.NewInducingPoints(mat.NewDense(2, 1, []float64{0, 1}))
	if err := f.Declare(s, "a."); err != nil {
		t.Fatal(err)
	}
	if err := f.Declare(s, "a."); err == nil {
		t.Error("declaring twice under one prefix accepted")
	}
}

func assertClose(t *testing.T, name string, got, want *mat.Dense) {
	t.Helper()
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("%s is %d×%d, want %d×%d", name, gr, gc, r, c)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if math.Abs(got.At(i, j)-want.At(i, j)) > 1e-12 {
				t.Errorf("%s[%d,%d] = %v, want %v", name, i, j, got.At(i, j), want.At(i, j))
			}
		}
	}
}
