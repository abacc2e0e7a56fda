package linalg

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
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

// parallelFlops is the work (n²·k) above which column blocks are handed to
// separate goroutines. gonum's own dtrsm and dtrmm are serial; OpenBLAS
// threads internally, so there the split is skipped.
const parallelFlops = 1 << 22

// byColumns calls f on column blocks of x, concurrently when it pays. The
// columns of a left-side triangular solve or multiply are independent.
func byColumns(x *mat.Dense, f func(b blas64.General)) {
	raw := x.RawMatrix()
	workers := runtime.GOMAXPROCS(0)
	_, native := blas64.Implementation().(gonum.Implementation)
	if !native || workers < 2 || raw.Cols < 2*workers || raw.Rows*raw.Rows*raw.Cols < parallelFlops {
		f(raw)
		return
	}
	var wg sync.WaitGroup
	chunk := (raw.Cols + workers - 1) / workers
	for c0 := 0; c0 < raw.Cols; c0 += chunk {
		c1 := min(c0+chunk, raw.Cols)
		blk := blas64.General{Rows: raw.Rows, Cols: c1 - c0, Stride: raw.Stride, Data: raw.Data[c0:]}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(blk)
		}()
	}
	wg.Wait()
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
	tri := lowerOf("MulLowerT", l, b)
	x := mat.DenseCopyOf(b)
	byColumns(x, func(blk blas64.General) { blas64.Trmm(blas.Left, blas.Trans, 1, tri, blk) })
	return x
}
