package kernels_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// TestDiagSum: Σ_n k(x_n, x_n) from DiagSum equals the sum of Diag for
// every kernel, with the O(1) form for constant diagonals and the general
// sum for the others (arc-cosine), value and gradient.
func TestDiagSum(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{0.1, -0.3, 1.2, 0.4, -0.7, 2.1, 0.05, 0.9, 3, -1})
	for _, tc := range []struct {
		name     string
		constant bool
	}{
		{"se", true}, {"matern32", true}, {"periodic", true},
		{"sum(se,matern12)", true}, {"product(se,periodic)", true}, {"additive(matern52)", true},
		{"arccos1", false}, {"sum(se,arccos0)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := kernels.New(tc.name, 2, kernels.Options{Variance: 1.7, Lengthscales: []float64{0.5, 2}, ARD: true})
			if err != nil {
				t.Fatal(err)
			}
			s := param.NewSet()
			if err := k.Declare(s, "k."); err != nil {
				t.Fatal(err)
			}
			grads := map[bool][]float64{}
			vals := map[bool]float64{}
			for _, fast := range []bool{true, false} {
				tape := ad.NewTape()
				b := s.Bind(tape)
				kb := k.Bind(b, "k.")
				var out *ad.Node
				if fast {
					out = kernels.DiagSum(tape, kb, x)
				} else {
					out = ad.Sum(kb.Diag(tape.Const(x)))
				}
				tape.Backward(out)
				vals[fast], grads[fast] = out.Scalar(), b.Gradient()
			}
			if d := math.Abs(vals[true] - vals[false]); d > 1e-13*math.Abs(vals[false]) {
				t.Errorf("DiagSum %.17g, Σ Diag %.17g", vals[true], vals[false])
			}
			for i := range grads[true] {
				if d := math.Abs(grads[true][i] - grads[false][i]); d > 1e-12*math.Max(1, math.Abs(grads[false][i])) {
					t.Errorf("gradient[%d]: DiagSum %.17g, Σ Diag %.17g", i, grads[true][i], grads[false][i])
				}
			}
			kb := k.Bind(s.Bind(ad.NewTape()), "k.")
			c, ok := kb.(kernels.ConstantDiag)
			if got := ok && c.KAtSelf() != nil; got != tc.constant {
				t.Errorf("constant diagonal reported %v, want %v", got, tc.constant)
			}
		})
	}
}
