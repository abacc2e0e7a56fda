package inference

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/linalg"
)

// gramVec records G = a aᵀ and a v for a wide a (M×N) and a constant v
// (length N): the O(NM²) step of the collapsed bound and its O(NM)
// companion, in one pass over a on every core (see linalg.GramVec). When l
// (a lower-triangular M×M node) is not nil, it records A Aᵀ and A v for
// A = L⁻¹a instead (see whitenedGram). They share one node,
// [G | a v] (M×(M+1)), so that the backward pass forms the N×M gradient
// once, ā = (Ḡ + Ḡᵀ) a + (a v)‾ vᵀ (linalg.GramAdjoint), instead of two
// N×M gradients that the tape then adds.
func gramVec(a *ad.Node, v []float64, l *ad.Node) (g, av *ad.Node) {
	aval := a.Value()
	m, _ := aval.Dims()
	wg := newWhitenedGram(a.Tape(), l, m)
	wg.add(aval, v)
	inputs := []*ad.Node{a}
	if l != nil {
		inputs = append(inputs, l)
	}
	node := ad.Custom(wg.finish(), func(gbar *mat.Dense) []*mat.Dense {
		adj := wg.adjoint(gbar)
		grads := []*mat.Dense{nil, adj.lbar}[:len(inputs)]
		if a.NeedsGrad() {
			grads[0] = adj.kuf(aval, v)
		}
		return grads
	}, inputs...)
	return ad.Slice(node, 0, m, 0, m), ad.Slice(node, 0, m, m, m+1)
}

// whitenedGram accumulates, over blocks of columns of Kuf (M×N), either
// G = Kuf Kfu and Kuf y (l nil: "G-first") or A Aᵀ and A y for A = L⁻¹Kuf
// with Kuu = LLᵀ ("A-first", the default of the collapsed bound).
//
// A-first is the accurate order: whitening G afterwards (L⁻¹GL⁻ᵀ) amplifies
// the rounding of G by about cond(Kuu), whitening Kuf first only by about
// √cond(Kuu) (on a 1-D SE problem with cond(Kuu) ≈ 7e10 the bound moves
// from 5e-5 to below 1e-7 absolute). It costs one triangular solve per
// block forward and one backward (A again): 5·N·M² flops against 3·N·M²
// for G-first. With S = C̄ + C̄ᵀ,
//
//	K̄uf = L⁻ᵀ (S A + ū yᵀ) = (L⁻ᵀS) A + (L⁻ᵀū) yᵀ,
//	L̄   = −tril(L⁻ᵀ Ā Aᵀ) = −tril(L⁻ᵀ (S·AAᵀ + ū (Ay)ᵀ)),
//
// where C̄ and ū are the gradients with respect to A Aᵀ and A y: L̄ needs
// only the M×M sums, not another pass over the data.
type whitenedGram struct {
	t    *ad.Tape   // owns both and the adjoint's matrices
	l    *mat.Dense // value of L (lower triangle), nil for G-first
	m    int
	both *mat.Dense // [G | v], M×(M+1)
	g    *mat.Dense // view of both's first M columns
	v    []float64
	sum  *linalg.GramSum // accumulates into g and v
}

func newWhitenedGram(t *ad.Tape, l *ad.Node, m int) *whitenedGram {
	w := &whitenedGram{t: t, m: m, both: t.NewDense(m, m+1), v: t.NewDense(m, 1).RawMatrix().Data}
	w.g = w.both.Slice(0, m, 0, m).(*mat.Dense)
	if l != nil {
		w.l = l.Value()
	}
	w.sum = linalg.NewGramSum(w.g, w.v, w.l)
	return w
}

// add accumulates the block kv (M×n) of Kuf with its targets y (length n).
func (w *whitenedGram) add(kv *mat.Dense, y []float64) {
	w.sum.Add(kv, y)
}

// finish returns [G | v] with G made exactly symmetric.
func (w *whitenedGram) finish() *mat.Dense {
	w.sum.Finish()
	linalg.MirrorUpper(w.g)
	w.both.SetCol(w.m, w.v)
	return w.both
}

// gramAdjoint maps the gradient of the bound with respect to [G | v] to
// the gradients with respect to the blocks of Kuf and to L.
type gramAdjoint struct {
	t    *ad.Tape
	l    *mat.Dense // nil for G-first
	cbar *mat.Dense // G-first: S = C̄ + C̄ᵀ for the gradient C̄ with respect to G; A-first: T = L⁻ᵀS
	u    []float64  // G-first: ū, the gradient with respect to v; A-first: L⁻ᵀū
	lbar *mat.Dense // nil for G-first
}

func (w *whitenedGram) adjoint(gbar *mat.Dense) gramAdjoint {
	m, t := w.m, w.t
	// S = C̄ + C̄ᵀ (G-first's adjoint takes S, see linalg.SymAdjointTo).
	s := t.NewDenseNonZeroed(m, m)
	cbar := gbar.Slice(0, m, 0, m)
	s.Add(cbar, cbar.T())
	u := t.NewDenseNonZeroed(m, 1)
	u.Copy(gbar.Slice(0, m, m, m+1))
	adj := gramAdjoint{t: t, l: w.l, cbar: s, u: u.RawMatrix().Data}
	if w.l == nil {
		return adj
	}
	// L̄ = −tril(L⁻ᵀ (S G + ū vᵀ)).
	p := t.NewDenseNonZeroed(m, m)
	p.Mul(s, w.g)
	p.RankOne(p, 1, mat.NewVecDense(m, adj.u), mat.NewVecDense(m, w.v))
	linalg.SolveLowerTInPlace(w.l, p)
	adj.lbar = p
	for i := 0; i < m; i++ {
		row := adj.lbar.RawRowView(i)
		for j := range row[:i+1] {
			row[j] = -row[j]
		}
		clear(row[i+1:])
	}
	linalg.SolveLowerTInPlace(w.l, s)
	linalg.SolveLowerTInPlace(w.l, u)
	return adj
}

// kuf returns the gradient with respect to one block kv of Kuf: for
// G-first (C̄ + C̄ᵀ) Kuf + ū yᵀ, for A-first T A + (L⁻ᵀū) yᵀ with
// T = L⁻ᵀ(C̄ + C̄ᵀ) formed once and A = L⁻¹Kuf formed again block by block.
// (Folding the solve of A into T, as L⁻ᵀ(C̄ + C̄ᵀ)L⁻¹ Kuf, would save it
// but brings back the cond(Kuu) amplification: 40× larger gradient errors
// on the 1-D SE case of TestSGPRHighPrecision.)
func (a gramAdjoint) kuf(kv *mat.Dense, y []float64) *mat.Dense {
	r, c := kv.Dims()
	out := a.t.NewDenseNonZeroed(r, c)
	if a.l == nil {
		linalg.SymAdjointTo(out, a.cbar, kv, a.u, y)
	} else {
		linalg.WhitenedAdjointTo(out, a.cbar, a.l, kv, a.u, y)
	}
	return out
}

// congruence records C = L⁻¹ G L⁻ᵀ for a lower-triangular L and a symmetric
// G (such as gramVec's G), exactly symmetric. As one node it costs two
// triangular solves forward and two solves and one product backward, all
// split over the cores (linalg.Congruence), where two SolveLower nodes and
// a symmetrisation cost two more M³ products and several M×M copies.
func congruence(l, g *ad.Node) *ad.Node {
	lv, t := l.Value(), l.Tape()
	n, _ := lv.Dims()
	c, h := t.NewDenseNonZeroed(n, n), t.NewDenseNonZeroed(n, n)
	linalg.CongruenceTo(c, h, lv, g.Value())
	return ad.Custom(c, func(cbar *mat.Dense) []*mat.Dense {
		gbar, lbar := t.NewDenseNonZeroed(n, n), t.NewDenseNonZeroed(n, n)
		linalg.CongruenceAdjointTo(gbar, lbar, lv, h, cbar)
		if !l.NeedsGrad() {
			t.Recycle(lbar)
			lbar = nil
		}
		return []*mat.Dense{lbar, gbar}
	}, l, g)
}
