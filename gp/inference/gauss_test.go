package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/internal/testhelp"
)

// TestGaussianLogDensity checks the fused log N(y | 0, K) node against an
// explicit inverse and determinant, and its adjoint against central finite
// differences through K = A Aᵀ + I (so K stays positive definite under
// perturbation), with and without jitter.
func TestGaussianLogDensity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		jitter float64
	}{
		{"n=1", 1, 0},
		{"n=7", 7, 0},
		{"n=20 jitter", 20, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.n)))
			a := testhelp.RandMat(rng, tc.n, tc.n+2, 1)
			y := make([]float64, tc.n)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			opt := Options{Jitter: tc.jitter}
			f := func(_ *ad.Tape, xs []*ad.Node) *ad.Node {
				k := ad.MatMulTB(xs[0], xs[0]) // K = A Aᵀ
				k = ad.AddDiag(k, xs[0].Tape().Scalar(1))
				e, err := gaussianLogDensity("K", k, y, opt)
				if err != nil {
					t.Fatal(err)
				}
				return e.lml
			}
			if err := ad.CheckGradient(f, []*mat.Dense{a}, 1e-6, 1e-6); err != nil {
				t.Error(err)
			}

			// Value against the naive formula.
			k := mat.NewDense(tc.n, tc.n, nil)
			k.Mul(a, a.T())
			for i := 0; i < tc.n; i++ {
				k.Set(i, i, k.At(i, i)+1+tc.jitter)
			}
			var kinv mat.Dense
			if err := kinv.Inverse(k); err != nil {
				t.Fatal(err)
			}
			yv := mat.NewVecDense(tc.n, y)
			var al mat.VecDense
			al.MulVec(&kinv, yv)
			logDet, _ := mat.LogDet(k)
			want := -0.5*mat.Dot(yv, &al) - 0.5*logDet - 0.5*float64(tc.n)*math.Log(2*math.Pi)
			got := f(nil, []*ad.Node{ad.NewTape().Const(a)}).Scalar()
			if e := testhelp.RelErr(got, want); e > 1e-11 {
				t.Errorf("log density %.14g, naive %.14g (rel %.2g)", got, want, e)
			}
		})
	}
}

func TestGaussianLogDensityErrors(t *testing.T) {
	tp := ad.NewTape()
	for _, tc := range []struct {
		name string
		k    *mat.Dense
		y    []float64
	}{
		{"not square", mat.NewDense(2, 3, nil), []float64{1, 2}},
		{"wrong y", mat.NewDense(2, 2, []float64{1, 0, 0, 1}), []float64{1}},
		{"NaN", mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1}), []float64{1, 2}},
		{"indefinite", mat.NewDense(2, 2, []float64{-1, 0, 0, -1}), []float64{1, 2}},
	} {
		if _, err := gaussianLogDensity("K", tp.Var(tc.k), tc.y, Options{MaxTries: 1}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
