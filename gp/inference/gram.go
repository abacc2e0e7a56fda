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
	m, n := aval.Dims()
	wg := newWhitenedGram(l, m, n)
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
// block (N·M² more flops forward); the backward pass costs the same as
// G-first, one product per block, because with S = C̄ + C̄ᵀ and
// W = L⁻ᵀ S L⁻¹ (M×M, once)
//
//	K̄uf = L⁻ᵀ (S A + ū yᵀ) = W Kuf + (L⁻ᵀ ū) yᵀ,
//	L̄   = −tril(L⁻ᵀ Ā Aᵀ) = −tril(L⁻ᵀ (S·AAᵀ + ū (Ay)ᵀ)),
//
// where C̄ and ū are the gradients with respect to A Aᵀ and A y: L̄ needs
// only the M×M sums, not another pass over the data.
type whitenedGram struct {
	l    *mat.Dense // value of L (lower triangle), nil for G-first
	m    int
	both *mat.Dense // [G | v], M×(M+1)
	g    *mat.Dense // view of both's first M columns
	v    []float64
	buf  []float64 // A of one block
}

func newWhitenedGram(l *ad.Node, m, maxCols int) *whitenedGram {
	w := &whitenedGram{m: m, both: mat.NewDense(m, m+1, nil), v: make([]float64, m)}
	w.g = w.both.Slice(0, m, 0, m).(*mat.Dense)
	if l != nil {
		w.l = l.Value()
		w.buf = make([]float64, m*maxCols)
	}
	return w
}

// add accumulates the block kv (M×n) of Kuf with its targets y (length n).
func (w *whitenedGram) add(kv *mat.Dense, y []float64) {
	a := kv
	if w.l != nil {
		_, n := kv.Dims()
		a = mat.NewDense(w.m, n, w.buf[:w.m*n])
		a.Copy(kv)
		linalg.SolveLowerInPlace(w.l, a)
	}
	linalg.AddGramVec(w.g, w.v, a, y)
}

// finish returns [G | v] with G made exactly symmetric.
func (w *whitenedGram) finish() *mat.Dense {
	linalg.MirrorUpper(w.g)
	w.both.SetCol(w.m, w.v)
	w.buf = nil
	return w.both
}

// gramAdjoint maps the gradient of the bound with respect to [G | v] to
// the gradients with respect to the blocks of Kuf and to L.
type gramAdjoint struct {
	gh   *mat.Dense // K̄uf = (gh + ghᵀ) Kuf + u yᵀ
	u    []float64
	lbar *mat.Dense // nil for G-first
}

func (w *whitenedGram) adjoint(gbar *mat.Dense) gramAdjoint {
	m := w.m
	cbar := mat.DenseCopyOf(gbar.Slice(0, m, 0, m))
	u := mat.Col(nil, m, gbar)
	if w.l == nil {
		return gramAdjoint{gh: cbar, u: u}
	}
	// L̄ = −tril(L⁻ᵀ (S G + u vᵀ)).
	s := mat.NewDense(m, m, nil)
	s.Add(cbar, cbar.T())
	p := mat.NewDense(m, m, nil)
	p.Mul(s, w.g)
	p.RankOne(p, 1, mat.NewVecDense(m, u), mat.NewVecDense(m, w.v))
	lbar := linalg.SolveLowerT(w.l, p)
	for i := 0; i < m; i++ {
		row := lbar.RawRowView(i)
		for j := range row[:i+1] {
			row[j] = -row[j]
		}
		clear(row[i+1:])
	}
	// gh = L⁻ᵀ C̄ L⁻¹, so gh + ghᵀ = W; ū → L⁻ᵀ ū.
	x := linalg.SolveLowerT(w.l, cbar)
	gh := linalg.SolveLowerT(w.l, x.T())
	lu := linalg.SolveLowerT(w.l, mat.NewDense(m, 1, u))
	return gramAdjoint{gh: mat.DenseCopyOf(gh.T()), u: lu.RawMatrix().Data, lbar: lbar}
}

// kuf returns the gradient with respect to one block kv of Kuf.
func (a gramAdjoint) kuf(kv *mat.Dense, y []float64) *mat.Dense {
	return linalg.GramAdjoint(a.gh, kv, a.u, y)
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
