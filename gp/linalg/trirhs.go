package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Triangular right-hand sides. When B is lower triangular as well as L,
// column block [c₀, c₁) of L⁻¹B and of LᵀB's lower triangle involves only
// rows c₀… of B and the trailing block L[c₀:, c₀:]:
//
//	(L⁻¹B)[c₀:, c₀:c₁] = L[c₀:, c₀:]⁻¹ B[c₀:, c₀:c₁]   (rows above c₀ are zero),
//	(LᵀB)[c₀:, c₀:c₁]  = L[c₀:, c₀:]ᵀ B[c₀:, c₀:c₁],
//
// so the blocks cost Σ w(n − c₀)² flops, ≈ 0.4n³ over eight blocks instead
// of n³ for the general routines. The blocks depend only on n and are
// independent, so the result is bitwise the same on any number of cores.

// triRHSBlocks is the number of column blocks of an n×n triangular
// right-hand side: about 64 columns each, at most eight.
func triRHSBlocks(n int) int {
	if float64(n)*float64(n)*float64(n) < minSplitFlops {
		return 1
	}
	return min(8, max(1, n/64))
}

func squareLowerOf(op string, l, b *mat.Dense) (blas64.Triangular, blas64.General) {
	tri := lowerOf(op, l, b)
	if r, c := b.Dims(); r != c {
		panic(fmt.Sprintf("linalg.%s: right-hand side %d×%d is not square", op, r, c))
	}
	return tri, b.RawMatrix()
}

// trailing returns L[c0:, c0:] and the columns [c0, c1) of x from row c0.
func trailing(tri blas64.Triangular, x blas64.General, c0, c1 int) (blas64.Triangular, blas64.General) {
	return blas64.Triangular{Uplo: blas.Lower, Diag: tri.Diag, N: tri.N - c0, Stride: tri.Stride, Data: tri.Data[c0*tri.Stride+c0:]},
		blas64.General{Rows: x.Rows - c0, Cols: c1 - c0, Stride: x.Stride, Data: x.Data[c0*x.Stride+c0:]}
}

// SolveLowerLowerInPlace overwrites the square B with L⁻¹B for
// lower-triangular L and B: only their lower triangles are read, and B's
// strict upper triangle is set to zero, as it is in L⁻¹B.
func SolveLowerLowerInPlace(l, b *mat.Dense) {
	tri, raw := squareLowerOf("SolveLowerLowerInPlace", l, b)
	n := raw.Rows
	nb := triRHSBlocks(n)
	forBlocks(nb, trsmThreads(), func(k int) {
		c0, c1 := blockBounds(k, nb, n)
		for i := 0; i < c1-1; i++ { // strict upper triangle of these columns
			clear(raw.Data[i*raw.Stride+max(c0, i+1) : i*raw.Stride+c1])
		}
		sub, blk := trailing(tri, raw, c0, c1)
		trsmRec(blas.NoTrans, sub, blk)
	})
}

// MulLowerTLowerTo sets the lower triangle of dst to that of LᵀB for
// lower-triangular L and B (only their lower triangles are read; dst must
// share no memory with B). Of dst's strict upper triangle, the entries in
// rows from each column block's first column on are those of LᵀB, the
// others are left as they were.
func MulLowerTLowerTo(dst, l, b *mat.Dense) {
	tri, raw := squareLowerOf("MulLowerTLowerTo", l, dst)
	src := b.RawMatrix()
	if src.Rows != raw.Rows || src.Cols != raw.Cols {
		panic(fmt.Sprintf("linalg.MulLowerTLowerTo: source %d×%d for a %d×%d destination", src.Rows, src.Cols, raw.Rows, raw.Cols))
	}
	n := raw.Rows
	nb := triRHSBlocks(n)
	forBlocks(nb, trsmThreads(), func(k int) {
		c0, c1 := blockBounds(k, nb, n)
		sub, blk := trailing(tri, raw, c0, c1)
		for i := c0; i < n; i++ {
			row := raw.Data[i*raw.Stride+c0 : i*raw.Stride+c1]
			copy(row, src.Data[i*src.Stride+c0:i*src.Stride+c1])
			if i < c1 { // B's strict upper triangle is not read: zero
				clear(row[i-c0+1:])
			}
		}
		trmmRec(blas.Trans, sub, blk)
	})
}
