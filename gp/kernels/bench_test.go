package kernels

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/internal/testhelp"
)

// BenchmarkK is K(X, Z) for N = 10⁴, M = 500, D = 8 with ARD
// hyperparameters and Z trainable, forward and backward.
func BenchmarkK(b *testing.B) {
	for _, name := range []string{"se", "matern32", "periodic", "arccos1"} {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			x, z := testhelp.RandMat(rng, 10000, 8, 1), testhelp.RandMat(rng, 500, 8, 1)
			w := testhelp.RandMat(rng, 10000, 500, 1)
			k := mustNew(b, name, 8, Options{ARD: true})
			s := declared(b, k)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := ad.NewTape()
				bk := k.Bind(s.Bind(t), "kern.")
				out := weighted(bk.K(t.Const(x), t.Var(z)), w)
				t.Backward(out)
			}
		})
	}
}

// BenchmarkKForward is the forward pass alone (prediction, Matrix).
func BenchmarkKForward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, z := testhelp.RandMat(rng, 10000, 8, 1), testhelp.RandMat(rng, 500, 8, 1)
	k := mustNew(b, "matern32", 8, Options{ARD: true})
	s := declared(b, k)
	var m *mat.Dense
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m = Matrix(k, s, "kern.", x, z)
	}
	_ = m
}
