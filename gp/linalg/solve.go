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
// when OpenBLAS already threads the call).
func byColumns(x *mat.Dense, f func(b blas64.General)) {
	raw := x.RawMatrix()
	if raw.Cols == 0 {
		f(raw)
		return
	}
	forColBlocks(raw.Rows, raw.Cols, minBlockCols, trsmThreads(), func(lo, hi int) {
		f(blas64.General{Rows: raw.Rows, Cols: hi - lo, Stride: raw.Stride, Data: raw.Data[lo:]})
	})
}

func trsm(t blas.Transpose, tri blas64.Triangular, x *mat.Dense) *mat.Dense {
	byColumns(x, func(b blas64.General) { blas64.Trsm(blas.Left, t, 1, tri, b) })
	return x
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
func MulLowerTInPlace(l, b *mat.Dense) {
	tri := lowerOf("MulLowerT", l, b)
	byColumns(b, func(blk blas64.General) { blas64.Trmm(blas.Left, blas.Trans, 1, tri, blk) })
}

// MulLowerInPlace overwrites B with LB for lower-triangular L.
func MulLowerInPlace(l, b *mat.Dense) {
	tri := lowerOf("MulLower", l, b)
	byColumns(b, func(blk blas64.General) { blas64.Trmm(blas.Left, blas.NoTrans, 1, tri, blk) })
}

// SolveLowerInPlace overwrites B with L⁻¹B for lower-triangular L (only its
// lower triangle is read), column blocks of B on every core.
func SolveLowerInPlace(l, b *mat.Dense) {
	trsm(blas.NoTrans, lowerOf("SolveLowerInPlace", l, b), b)
}

// SolveLowerTInPlace overwrites B with L⁻ᵀB for lower-triangular L.
func SolveLowerTInPlace(l, b *mat.Dense) {
	trsm(blas.Trans, lowerOf("SolveLowerTInPlace", l, b), b)
}

// MulLower returns LB for lower-triangular L (only its lower triangle is
// read) as a new matrix, with half the work of a general product.
func MulLower(l *mat.Dense, b mat.Matrix) *mat.Dense {
	x := mat.DenseCopyOf(b)
	MulLowerInPlace(l, x)
	return x
}
