package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// lowerOf views the lower triangle of the square dense l as a BLAS
// triangular matrix without copying.
func lowerOf(op string, l *mat.Dense, b mat.Matrix) blas64.Triangular {
	n, c := l.Dims()
	br, bc := b.Dims()
	if n != c || br != n {
		panic(fmt.Sprintf("linalg.%s: factor %d×%d and right-hand side %d×%d do not match", op, n, c, br, bc))
	}
	raw := l.RawMatrix()
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: max(1, raw.Stride), Data: raw.Data}
}

// byColumns calls f on column blocks of x, concurrently when it pays. The
// columns of a left-side triangular solve or multiply are independent, so
// the blocks go to as many goroutines as cores one dtrsm call leaves idle
// (all of them for gonum's serial dtrsm or single-threaded OpenBLAS, none
// when OpenBLAS already threads the call). When src is not nil (and not
// x), each block first copies its columns of src (shaped as x) into x, on
// the goroutine that then works on them, so the copy runs on every core
// and leaves the block in cache.
func byColumns(x, src *mat.Dense, f func(b blas64.General)) {
	raw := x.RawMatrix()
	var sr blas64.General
	if src != nil && src != x {
		if r, c := src.Dims(); r != raw.Rows || c != raw.Cols {
			panic(fmt.Sprintf("linalg: source %d×%d for a %d×%d destination", r, c, raw.Rows, raw.Cols))
		}
		sr = src.RawMatrix()
	}
	if raw.Cols == 0 {
		f(raw)
		return
	}
	n := triBlocks(raw.Rows, raw.Cols)
	forBlocks(n, trsmThreads(), func(b int) {
		lo, hi := blockBounds(b, n, raw.Cols)
		if sr.Data != nil {
			for i := 0; i < raw.Rows; i++ {
				copy(raw.Data[i*raw.Stride+lo:i*raw.Stride+hi], sr.Data[i*sr.Stride+lo:i*sr.Stride+hi])
			}
		}
		f(blas64.General{Rows: raw.Rows, Cols: hi - lo, Stride: raw.Stride, Data: raw.Data[lo:]})
	})
}

// triCols is the narrowest column block of a triangular solve or
// multiply: the recursion's dtrsm, dtrmm and dgemm calls run well below
// their full rate on narrower blocks (M = 500: 57 against 62 GFLOP/s for
// L⁻¹B on two cores with 250-column blocks rather than 125).
const triCols = 240

// triBlocks is the number of column blocks of an r×c right-hand side:
// blocks at least triCols wide, an even number of them when there are
// more than two (three blocks on two cores leave one core idle for a
// third of the time), and at most gramChunk columns each. It depends only
// on the shape.
func triBlocks(r, c int) int {
	if float64(r)*float64(r)*float64(c) < minSplitFlops {
		return 1
	}
	n := max(1, min(maxBlocks, c/triCols))
	if n > 2 {
		n &^= 1
	}
	return max(n, (c+gramChunk-1)/gramChunk)
}

func trsm(t blas.Transpose, tri blas64.Triangular, x *mat.Dense) *mat.Dense {
	return trsmFrom(t, tri, x, nil)
}

// trsmFrom sets x = op(L)⁻¹src (src nil: in place).
func trsmFrom(t blas.Transpose, tri blas64.Triangular, x, src *mat.Dense) *mat.Dense {
	byColumns(x, src, func(b blas64.General) { trsmRec(t, tri, b) })
	return x
}

// triBase is the order up to which trsmRec and trmmRec call dtrsm and
// dtrmm directly; once they have split, they split down to triLeaf (a
// property of the BLAS's kernels, set beside each backend).
const triBase = 64

// halves splits a lower-triangular L of order n > triLeaf into
// L = [L₁₁ 0; L₂₁ L₂₂] at h (a multiple of 8 near n/2, fixed by n) and b
// into its rows [0, h) and [h, n).
func halves(l blas64.Triangular, b blas64.General) (l11, l22 blas64.Triangular, l21, b1, b2 blas64.General) {
	n := l.N
	h := (n/2 + 7) &^ 7
	l11 = blas64.Triangular{Uplo: blas.Lower, Diag: l.Diag, N: h, Stride: l.Stride, Data: l.Data}
	l22 = blas64.Triangular{Uplo: blas.Lower, Diag: l.Diag, N: n - h, Stride: l.Stride, Data: l.Data[h*l.Stride+h:]}
	l21 = blas64.General{Rows: n - h, Cols: h, Stride: l.Stride, Data: l.Data[h*l.Stride:]}
	b1 = blas64.General{Rows: h, Cols: b.Cols, Stride: b.Stride, Data: b.Data}
	b2 = blas64.General{Rows: n - h, Cols: b.Cols, Stride: b.Stride, Data: b.Data[h*b.Stride:]}
	return
}

// trsmRec overwrites b with op(L)⁻¹b for lower-triangular L by recursive
// halving, so that most of the flops run in dgemm, which reaches a higher
// rate than dtrsm (CPU profiles: dtrsm took 1.35× dgemm's time per flop
// on the SGPR recipe, M = 500, and 2× on the SVGP recipe's 125-column
// blocks):
//
//	L⁻¹:  X₁ = L₁₁⁻¹B₁,  B₂ −= L₂₁X₁,  X₂ = L₂₂⁻¹B₂
//	L⁻ᵀ:  X₂ = L₂₂⁻ᵀB₂,  B₁ −= L₂₁ᵀX₂, X₁ = L₁₁⁻ᵀB₁.
//
// The split depends only on the order.
func trsmRec(t blas.Transpose, l blas64.Triangular, b blas64.General) {
	trsmSplit(t, l, b, triBase)
}

// trsmSplit is trsmRec calling dtrsm directly up to order base.
func trsmSplit(t blas.Transpose, l blas64.Triangular, b blas64.General, base int) {
	if l.N <= base || b.Cols == 0 {
		blas64.Trsm(blas.Left, t, 1, l, b)
		return
	}
	l11, l22, l21, b1, b2 := halves(l, b)
	if t == blas.NoTrans {
		trsmSplit(t, l11, b1, triLeaf)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, l21, b1, 1, b2)
		trsmSplit(t, l22, b2, triLeaf)
		return
	}
	trsmSplit(t, l22, b2, triLeaf)
	blas64.Gemm(blas.Trans, blas.NoTrans, -1, l21, b2, 1, b1)
	trsmSplit(t, l11, b1, triLeaf)
}

// trmmRec overwrites b with op(L)·b for lower-triangular L by recursive
// halving (see trsmRec):
//
//	L:   X₂ = L₂₂B₂ + L₂₁B₁,   then X₁ = L₁₁B₁
//	Lᵀ:  X₁ = L₁₁ᵀB₁ + L₂₁ᵀB₂, then X₂ = L₂₂ᵀB₂.
func trmmRec(t blas.Transpose, l blas64.Triangular, b blas64.General) {
	trmmSplit(t, l, b, triBase)
}

// trmmSplit is trmmRec calling dtrmm directly up to order base.
func trmmSplit(t blas.Transpose, l blas64.Triangular, b blas64.General, base int) {
	if l.N <= base || b.Cols == 0 {
		blas64.Trmm(blas.Left, t, 1, l, b)
		return
	}
	l11, l22, l21, b1, b2 := halves(l, b)
	if t == blas.NoTrans {
		trmmSplit(t, l22, b2, triLeaf)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, l21, b1, 1, b2)
		trmmSplit(t, l11, b1, triLeaf)
		return
	}
	trmmSplit(t, l11, b1, triLeaf)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, l21, b2, 1, b1)
	trmmSplit(t, l22, b2, triLeaf)
}

// SolveLower returns L⁻¹B for lower-triangular L (only its lower triangle
// is read) as a new matrix.
func SolveLower(l *mat.Dense, b mat.Matrix) *mat.Dense {
	return trsm(blas.NoTrans, lowerOf("SolveLower", l, b), mat.DenseCopyOf(b))
}

// SolveLowerT returns L⁻ᵀB for lower-triangular L as a new matrix.
func SolveLowerT(l *mat.Dense, b mat.Matrix) *mat.Dense {
	return trsm(blas.Trans, lowerOf("SolveLowerT", l, b), mat.DenseCopyOf(b))
}

// CholSolve returns (L Lᵀ)⁻¹B for a Cholesky factor L as a new matrix.
func CholSolve(l *mat.Dense, b mat.Matrix) *mat.Dense {
	tri := lowerOf("CholSolve", l, b)
	return trsm(blas.Trans, tri, trsm(blas.NoTrans, tri, mat.DenseCopyOf(b)))
}

// MulLowerT returns LᵀB for lower-triangular L (only its lower triangle is
// read) as a new matrix, with half the work of a general product.
func MulLowerT(l *mat.Dense, b mat.Matrix) *mat.Dense {
	x := mat.DenseCopyOf(b)
	MulLowerTInPlace(l, x)
	return x
}

// MulLowerTInPlace overwrites B with LᵀB for lower-triangular L.
func MulLowerTInPlace(l, b *mat.Dense) { MulLowerTTo(b, l, b) }

// MulLowerInPlace overwrites B with LB for lower-triangular L.
func MulLowerInPlace(l, b *mat.Dense) { MulLowerTo(b, l, b) }

// SolveLowerInPlace overwrites B with L⁻¹B for lower-triangular L (only its
// lower triangle is read), column blocks of B on every core.
func SolveLowerInPlace(l, b *mat.Dense) { SolveLowerTo(b, l, b) }

// SolveLowerTInPlace overwrites B with L⁻ᵀB for lower-triangular L.
func SolveLowerTInPlace(l, b *mat.Dense) { SolveLowerTTo(b, l, b) }

// SolveLowerTo sets dst = L⁻¹B for lower-triangular L (only its lower
// triangle is read). dst must be shaped as B and either be B (in place) or
// share no memory with it; each column block of B is copied and solved on
// the same core, so no separate copying pass is needed.
func SolveLowerTo(dst, l, b *mat.Dense) {
	trsmFrom(blas.NoTrans, lowerOf("SolveLowerTo", l, dst), dst, b)
}

// SolveLowerTTo sets dst = L⁻ᵀB (see SolveLowerTo).
func SolveLowerTTo(dst, l, b *mat.Dense) {
	trsmFrom(blas.Trans, lowerOf("SolveLowerTTo", l, dst), dst, b)
}

// MulLowerTo sets dst = LB for lower-triangular L (see SolveLowerTo).
func MulLowerTo(dst, l, b *mat.Dense) {
	tri := lowerOf("MulLowerTo", l, dst)
	byColumns(dst, b, func(blk blas64.General) { trmmRec(blas.NoTrans, tri, blk) })
}

// MulLowerTTo sets dst = LᵀB for lower-triangular L (see SolveLowerTo).
func MulLowerTTo(dst, l, b *mat.Dense) {
	tri := lowerOf("MulLowerTTo", l, dst)
	byColumns(dst, b, func(blk blas64.General) { trmmRec(blas.Trans, tri, blk) })
}

// MulLower returns LB for lower-triangular L (only its lower triangle is
// read) as a new matrix, with half the work of a general product.
func MulLower(l *mat.Dense, b mat.Matrix) *mat.Dense {
	x := mat.DenseCopyOf(b)
	MulLowerInPlace(l, x)
	return x
}
