package ad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/linalg"
)

// TestCholBackwardBlockedMatchesUnblocked compares the blocked Cholesky
// adjoint with the one-shot formula sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹) at sizes below,
// at and across several panel boundaries.
func TestCholBackwardBlockedMatchesUnblocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, size := range []int{1, 5, cholBlock, cholBlock + 1, 2*cholBlock + 37, 3 * cholBlock} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			l, err := linalg.Cholesky(draw(rng, pd(size)))
			if err != nil {
				t.Fatal(err)
			}
			g := draw(rng, n(size, size)) // upper triangle must be ignored
			tp := NewTape()
			got := cholBackward(tp, l, g)
			// One-shot: Φ(S + Sᵀ) is the lower-triangle gradient; its
			// symmetric version is ½ of it off the diagonal.
			want := tril(mat.DenseCopyOf(g))
			cholRevUnblocked(tp, l, want)
			for i := 0; i < size; i++ {
				for j := 0; j < i; j++ {
					want.Set(i, j, 0.5*want.At(i, j))
					want.Set(j, i, want.At(i, j))
				}
			}
			if !mat.EqualApprox(got, want, 1e-9*max(1, mat.Norm(want, 1))) {
				var d mat.Dense
				d.Sub(got, want)
				t.Errorf("blocked adjoint differs from the unblocked one by %.3g (max norm)", mat.Norm(&d, math.Inf(1)))
			}
		})
	}
}
