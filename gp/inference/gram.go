package inference

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/linalg"
)

// gram records G = a aᵀ for a wide a (M×N), the O(NM²) step of the
// collapsed bound (see linalg.Gram for how the forward pass uses the BLAS).
// The adjoint is ā = (Ḡ + Ḡᵀ) a, one product instead of the two a generic
// a·bᵀ needs.
func gram(a *ad.Node) *ad.Node {
	av := a.Value()
	m, n := av.Dims()
	return ad.Custom(linalg.Gram(av), func(gbar *mat.Dense) []*mat.Dense {
		s := mat.NewDense(m, m, nil)
		s.Add(gbar, gbar.T())
		out := mat.NewDense(m, n, nil)
		out.Mul(s, av)
		return []*mat.Dense{out}
	}, a)
}
