package inference

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/linalg"
)

// gramVec records G = a aᵀ and a v for a wide a (M×N) and a constant v
// (length N): the O(NM²) step of the collapsed bound and its O(NM)
// companion, in one pass over a on every core (see linalg.GramVec). They
// share one node, [G | a v] (M×(M+1)), so that the backward pass forms the
// N×M gradient once, ā = (Ḡ + Ḡᵀ) a + (a v)‾ vᵀ (linalg.GramAdjoint),
// instead of two N×M gradients that the tape then adds.
func gramVec(a *ad.Node, v []float64) (g, av *ad.Node) {
	aval := a.Value()
	m, _ := aval.Dims()
	gv, avv := linalg.GramVec(aval, v)
	both := mat.NewDense(m, m+1, nil)
	both.Slice(0, m, 0, m).(*mat.Dense).Copy(gv)
	both.SetCol(m, avv)
	node := ad.Custom(both, func(gbar *mat.Dense) []*mat.Dense {
		gg := gbar.Slice(0, m, 0, m).(*mat.Dense)
		u := mat.Col(nil, m, gbar)
		return []*mat.Dense{linalg.GramAdjoint(gg, aval, u, v)}
	}, a)
	return ad.Slice(node, 0, m, 0, m), ad.Slice(node, 0, m, m, m+1)
}

// congruence records C = L⁻¹ G L⁻ᵀ for a lower-triangular L and a symmetric
// G (such as gramVec's G), exactly symmetric. As one node it costs two
// triangular solves forward and two solves and one product backward, all
// split over the cores (linalg.Congruence), where two SolveLower nodes and
// a symmetrisation cost two more M³ products and several M×M copies.
func congruence(l, g *ad.Node) *ad.Node {
	lv := l.Value()
	c, h := linalg.Congruence(lv, g.Value())
	return ad.Custom(c, func(cbar *mat.Dense) []*mat.Dense {
		gbar, lbar := linalg.CongruenceAdjoint(lv, h, cbar)
		if !l.NeedsGrad() {
			lbar = nil
		}
		return []*mat.Dense{lbar, gbar}
	}, l, g)
}
