package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// lowerRows is the height of the row blocks of LowerMulTTo: the diagonal
// block of each computes its (unused) upper triangle too, a fraction
// lowerRows/(2n) of the work. 64 rather than 128 halves that and, at
// n = 500, splits the triangle into 8 blocks instead of 4, so both cores
// finish together (SVGP recipe step 1.7% faster, median of 5).
const lowerRows = 64

// LowerMulTTo sets the lower triangle of the n×n dst to
//
//	α·tril(A Bᵀ) + β·tril(dst)
//
// for n×k A and B, and zeroes its strict upper triangle. It is the
// gradient of a triangular factor in a triangular solve or multiply
// (L̄ = −tril(B̄ Xᵀ) for X = L⁻¹B), and costs n²k flops, half of the full
// product: row block [r0, r1) of the result needs only the columns
// [0, r1). The blocks are fixed by n (the last, largest first) and shared
// out over the cores, so the result is bitwise the same on any number of
// cores. dst must not share memory with A or B.
func LowerMulTTo(dst *mat.Dense, alpha float64, a, b *mat.Dense, beta float64) {
	n, k := a.Dims()
	br, bc := b.Dims()
	dr, dc := dst.Dims()
	if br != n || bc != k || dr != n || dc != n {
		panic(fmt.Sprintf("linalg.LowerMulTTo: A %d×%d, B %d×%d, destination %d×%d; want A and B n×k, destination n×n",
			n, k, br, bc, dr, dc))
	}
	if n == 0 {
		return
	}
	ar, bw, d := a.RawMatrix(), b.RawMatrix(), dst.RawMatrix()
	rows := func(m blas64.General, r0, r1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: m.Cols, Stride: m.Stride, Data: m.Data[r0*m.Stride:]}
	}
	blocks := (n + lowerRows - 1) / lowerRows
	threads := gemmThreads()
	if float64(n)*float64(n)*float64(k) < minSplitFlops {
		threads = procs() // one goroutine: too small to share out
	}
	forBlocks(blocks, threads, func(i int) {
		i = blocks - 1 - i
		r0, r1 := i*lowerRows, min((i+1)*lowerRows, n)
		c := blas64.General{Rows: r1 - r0, Cols: r1, Stride: d.Stride, Data: d.Data[r0*d.Stride:]}
		if k == 0 {
			scaleGeneral(beta, c)
		} else {
			blas64.Gemm(blas.NoTrans, blas.Trans, alpha, rows(ar, r0, r1), rows(bw, 0, r1), beta, c)
		}
		for r := r0; r < r1; r++ {
			clear(d.Data[r*d.Stride+r+1 : r*d.Stride+n])
		}
	})
}

// scaleGeneral multiplies m by s (s = 0 sets it to zero, whatever it held).
func scaleGeneral(s float64, m blas64.General) {
	for i := 0; i < m.Rows; i++ {
		row := m.Data[i*m.Stride : i*m.Stride+m.Cols]
		if s == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= s
		}
	}
}

// MulTo sets dst = op(A)·op(B), where A and B are each a *mat.Dense or the
// transpose of one (mat.Transpose or the result of T()). A product large
// enough to pay is split into fixed blocks of the larger output dimension,
// one dgemm each, shared out over the cores that one dgemm call leaves
// idle (with single-threaded OpenBLAS, all of them; gonum's dgemm spreads
// each block over the cores itself). The blocks depend only on the shapes,
// never on the cores, so dst is bitwise the same on any number of cores.
// Other operands fall back to dst.Mul. dst must be r×c and must not share memory
// with A or B.
func MulTo(dst *mat.Dense, a, b mat.Matrix) {
	r, k := a.Dims()
	kb, c := b.Dims()
	if dr, dc := dst.Dims(); kb != k || dr != r || dc != c {
		panic(fmt.Sprintf("linalg.MulTo: %d×%d times %d×%d into %d×%d", r, k, kb, c, dr, dc))
	}
	ga, ta, okA := rawOperand(a)
	gb, tb, okB := rawOperand(b)
	if !okA || !okB || k == 0 || !worthSplitting(r, c, k) {
		dst.Mul(a, b)
		return
	}
	gemmSplit(ta, tb, 1, ga, gb, 0, dst.RawMatrix())
}

// Gemm sets C = α·op(A)·op(B) + β·C on BLAS matrices (C must not share
// memory with A or B), split like MulTo into fixed blocks of the longer
// dimension of C shared out over the cores. The blocks depend only on the
// shapes.
func Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	n := GemmBlocks(tA, a, c)
	forBlocks(n, gemmThreads(), func(blk int) { GemmBlock(blk, n, tA, tB, alpha, a, b, beta, c) })
}

// GemmBlocks is the number of fixed blocks in which Gemm computes C from
// op(A) (1 when the product is too small to share out): a caller that
// runs them itself with GemmBlock, beside other independent work (the
// blocked Cholesky adjoint's panel tasks), gets Gemm's bits.
func GemmBlocks(tA blas.Transpose, a, c blas64.General) int {
	k := a.Cols
	if tA == blas.Trans {
		k = a.Rows
	}
	if k == 0 || !worthSplitting(c.Rows, c.Cols, k) {
		return 1
	}
	return max(1, min(maxBlocks, max(c.Rows, c.Cols)/minBlockCols))
}

// GemmBlock computes block blk of the n = GemmBlocks(tA, a, c) blocks of
// Gemm(tA, tB, alpha, a, b, beta, c) on the calling goroutine: rows of C
// (and of op(A)) when C has at least as many rows as columns, else
// columns of C (and of op(B)).
func GemmBlock(blk, n int, tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	if n == 1 {
		blas64.Gemm(tA, tB, alpha, a, b, beta, c)
		return
	}
	r, cols := c.Rows, c.Cols
	lo, hi := blockBounds(blk, n, max(r, cols))
	if r >= cols { // rows [lo, hi) of op(A) and of C
		sub := opRows(a, tA, lo, hi)
		out := blas64.General{Rows: hi - lo, Cols: cols, Stride: c.Stride, Data: c.Data[lo*c.Stride:]}
		blas64.Gemm(tA, tB, alpha, sub, b, beta, out)
		return
	}
	// columns [lo, hi) of op(B) and of C
	blas64.Gemm(tA, tB, alpha, a, opCols(b, tB, lo, hi), beta, colView(c, lo, hi))
}

// worthSplitting reports whether an r×c product with inner dimension k is
// worth sharing out over the cores: enough flops, or enough memory to
// read and write that moving it is the cost, as for the thin products of
// an SVGP step (the outer product m·μ̄ᵀ writes 500×1000, Aᵀm reads it:
// 0.3–0.5 ms each on one core).
func worthSplitting(r, c, k int) bool {
	if max(r, c) < 2*minBlockCols {
		return false
	}
	return float64(r)*float64(c)*float64(k) >= minSplitFlops || r*c+r*k+k*c >= minSplitElems
}

// minSplitElems is the number of entries of the three operands from which
// a product is split whatever its inner dimension.
const minSplitElems = 1 << 17

// gemmSplit is Gemm on at most maxBlocks blocks of C's longer dimension.
func gemmSplit(ta, tb blas.Transpose, alpha float64, ga, gb blas64.General, beta float64, d blas64.General) {
	n := max(1, min(maxBlocks, max(d.Rows, d.Cols)/minBlockCols))
	forBlocks(n, gemmThreads(), func(blk int) { GemmBlock(blk, n, ta, tb, alpha, ga, gb, beta, d) })
}

// SolveRightLower overwrites B with B·L⁻¹ for the lower-triangular L, in
// fixed blocks of rows of B (rows are independent) shared out over the
// cores.
func SolveRightLower(l blas64.Triangular, b blas64.General) {
	n := SolveRightLowerBlocks(l, b)
	forBlocks(n, trsmThreads(), func(blk int) { SolveRightLowerBlock(blk, n, l, b) })
}

// SolveRightLowerBlocks is the number of fixed row blocks in which
// SolveRightLower solves (1 when too small to share out); see GemmBlocks.
func SolveRightLowerBlocks(l blas64.Triangular, b blas64.General) int {
	if b.Rows == 0 || float64(b.Rows)*float64(l.N)*float64(l.N) < minSplitFlops || b.Rows < 2*minBlockCols {
		return 1
	}
	return max(1, min(maxBlocks, b.Rows/minBlockCols))
}

// SolveRightLowerBlock solves row block blk of the n =
// SolveRightLowerBlocks(l, b) blocks of SolveRightLower(l, b) on the
// calling goroutine.
func SolveRightLowerBlock(blk, n int, l blas64.Triangular, b blas64.General) {
	if n == 1 {
		blas64.Trsm(blas.Right, blas.NoTrans, 1, l, b)
		return
	}
	lo, hi := blockBounds(blk, n, b.Rows)
	blas64.Trsm(blas.Right, blas.NoTrans, 1, l, blas64.General{Rows: hi - lo, Cols: b.Cols, Stride: b.Stride, Data: b.Data[lo*b.Stride:]})
}

// rawOperand returns the storage of a *mat.Dense, or of the *mat.Dense
// under a transpose, with the BLAS flag that reads it as m.
func rawOperand(m mat.Matrix) (blas64.General, blas.Transpose, bool) {
	switch v := m.(type) {
	case *mat.Dense:
		return v.RawMatrix(), blas.NoTrans, true
	case mat.Transpose:
		if d, ok := v.Matrix.(*mat.Dense); ok {
			return d.RawMatrix(), blas.Trans, true
		}
	}
	return blas64.General{}, blas.NoTrans, false
}

// opRows is rows [lo, hi) of op(G): rows of G, or columns of a transposed G.
func opRows(g blas64.General, t blas.Transpose, lo, hi int) blas64.General {
	if t == blas.NoTrans {
		return blas64.General{Rows: hi - lo, Cols: g.Cols, Stride: g.Stride, Data: g.Data[lo*g.Stride:]}
	}
	return colView(g, lo, hi)
}

// opCols is columns [lo, hi) of op(G): columns of G, or rows of a
// transposed G.
func opCols(g blas64.General, t blas.Transpose, lo, hi int) blas64.General {
	if t == blas.NoTrans {
		return colView(g, lo, hi)
	}
	return blas64.General{Rows: hi - lo, Cols: g.Cols, Stride: g.Stride, Data: g.Data[lo*g.Stride:]}
}
