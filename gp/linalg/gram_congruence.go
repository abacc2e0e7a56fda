package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Congruence returns C = L⁻¹ G L⁻ᵀ (exactly symmetric) for a symmetric G
// and lower-triangular L (only its lower triangle is read), and the
// intermediate H = L⁻¹ G that CongruenceAdjoint needs. Both triangular
// solves are split into column blocks over the cores (see splitCols).
func Congruence(l, g *mat.Dense) (c, h *mat.Dense) {
	n, _ := l.Dims()
	if n == 0 {
		CongruenceTo(&mat.Dense{}, &mat.Dense{}, l, g)
		return &mat.Dense{}, &mat.Dense{}
	}
	c, h = mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	CongruenceTo(c, h, l, g)
	return c, h
}

// CongruenceTo is Congruence writing C and H into c and h (n×n,
// overwritten, sharing no memory with each other, l or g).
func CongruenceTo(c, h, l, g *mat.Dense) {
	n, nc := l.Dims()
	if gr, gc := g.Dims(); nc != n || gr != n || gc != n {
		panic(fmt.Sprintf("linalg.Congruence: L is %d×%d, G is %d×%d", n, nc, gr, gc))
	}
	if n == 0 {
		return
	}
	tri := lowerOf("Congruence", l, g)
	h.Copy(g)
	solveSplit(blas.NoTrans, tri, h)
	// G is symmetric, so L⁻¹ Hᵀ = L⁻¹ G L⁻ᵀ.
	c.Copy(h.T())
	solveSplit(blas.NoTrans, tri, c)
	symmetrise(c)
}

// CongruenceAdjoint returns the gradients of a function of C = L⁻¹ G L⁻ᵀ
// with respect to G and L, given C̄ and H = L⁻¹ G from Congruence. With
// S = C̄ + C̄ᵀ and W = L⁻ᵀ S L⁻¹,
//
//	Ḡ = W/2 (the symmetric part of L⁻ᵀ C̄ L⁻¹, which is all that matters
//	for a symmetric G),   L̄ = −tril(L⁻ᵀ S C) = −tril(W Hᵀ).
//
// That is two triangular solves and one product, all split over the cores.
func CongruenceAdjoint(l, h, cbar *mat.Dense) (gbar, lbar *mat.Dense) {
	n, _ := l.Dims()
	if n == 0 {
		CongruenceAdjointTo(&mat.Dense{}, &mat.Dense{}, l, h, cbar)
		return &mat.Dense{}, &mat.Dense{}
	}
	gbar, lbar = mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	CongruenceAdjointTo(gbar, lbar, l, h, cbar)
	return gbar, lbar
}

// CongruenceAdjointTo is CongruenceAdjoint writing Ḡ and L̄ into gbar and
// lbar (n×n, overwritten, sharing no memory with each other or the
// inputs).
func CongruenceAdjointTo(gbar, lbar, l, h, cbar *mat.Dense) {
	n, _ := l.Dims()
	if hr, hc := h.Dims(); hr != n || hc != n {
		panic(fmt.Sprintf("linalg.CongruenceAdjoint: L is %d×%d, H is %d×%d", n, n, hr, hc))
	}
	if cr, cc := cbar.Dims(); cr != n || cc != n {
		panic(fmt.Sprintf("linalg.CongruenceAdjoint: L is %d×%d, C̄ is %d×%d", n, n, cr, cc))
	}
	if n == 0 {
		return
	}
	tri := lowerOf("CongruenceAdjoint", l, h)
	// W = L⁻ᵀ S L⁻¹, built in lbar (L⁻ᵀ S in gbar first), then kept in gbar.
	gbar.Add(cbar, cbar.T())
	solveSplit(blas.Trans, tri, gbar) // L⁻ᵀ S
	lbar.Copy(gbar.T())               // S L⁻¹ (S is symmetric)
	solveSplit(blas.Trans, tri, lbar) // L⁻ᵀ S L⁻¹
	symmetrise(lbar)
	gbar.Copy(lbar)
	wr, hr, lr := gbar.RawMatrix(), h.RawMatrix(), lbar.RawMatrix()
	forColBlocks(n, n, minBlockCols, gemmThreads(), func(lo, hi int) {
		// Columns [lo, hi) of W Hᵀ are W times rows [lo, hi) of H, transposed.
		rows := blas64.General{Rows: hi - lo, Cols: n, Stride: hr.Stride, Data: hr.Data[lo*hr.Stride:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, -1, wr, rows, 0, colView(lr, lo, hi))
	})
	for i := 0; i < n; i++ {
		clear(lbar.RawRowView(i)[i+1:])
		row := gbar.RawRowView(i)
		for j := range row {
			row[j] *= 0.5
		}
	}
}

// solveSplit overwrites x with op(L)⁻¹ x, column blocks of x on every core
// that a single dtrsm call leaves idle.
func solveSplit(t blas.Transpose, tri blas64.Triangular, x *mat.Dense) {
	raw := x.RawMatrix()
	if raw.Rows == 0 || raw.Cols == 0 {
		return
	}
	forColBlocks(raw.Rows, raw.Cols, minBlockCols, trsmThreads(), func(lo, hi int) {
		trsmRec(t, tri, colView(raw, lo, hi))
	})
}

// symmetrise replaces the square a by (a + aᵀ)/2, exactly symmetric.
func symmetrise(a *mat.Dense) {
	raw := a.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+i]
		for j, v := range row {
			v = (v + raw.Data[j*raw.Stride+i]) / 2
			row[j] = v
			raw.Data[j*raw.Stride+i] = v
		}
	}
}
