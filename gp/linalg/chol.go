package linalg

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// ErrNotPositiveDefinite is wrapped by every Cholesky failure, so callers can
// tell a data-dependent failure (record the run as failed) from a bug.
var ErrNotPositiveDefinite = errors.New("not positive definite")

// Cholesky returns the lower-triangular L with L Lᵀ = ½(A + Aᵀ), as a dense
// matrix with zeros above the diagonal. Symmetrising first makes the factor
// (and its gradient in package ad) independent of round-off asymmetry in A.
// A non-square A panics; a matrix that is not positive definite (or holds
// NaN/Inf) returns an error wrapping ErrNotPositiveDefinite.
func Cholesky(a mat.Matrix) (*mat.Dense, error) {
	return choleskyShift(a, 0)
}

// choleskyShift factorises ½(A + Aᵀ) + shift·I.
func choleskyShift(a mat.Matrix, shift float64) (*mat.Dense, error) {
	n, c := a.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.Cholesky: matrix is %d×%d, want square", n, c))
	}
	l := mat.NewDense(n, n, nil)
	if err := choleskyShiftTo(l, a, shift); err != nil {
		return nil, err
	}
	return l, nil
}

// CholeskyTo is Cholesky writing the factor into dst (n×n, overwritten;
// dst must not share memory with a). On error dst holds no factor.
func CholeskyTo(dst *mat.Dense, a mat.Matrix) error {
	return choleskyShiftTo(dst, a, 0)
}

// choleskyShiftTo factorises ½(A + Aᵀ) + shift·I into dst (n×n, its
// strict upper triangle zeroed).
func choleskyShiftTo(l *mat.Dense, a mat.Matrix, shift float64) error {
	n, c := a.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.Cholesky: matrix is %d×%d, want square", n, c))
	}
	if lr, lc := l.Dims(); lr != n || lc != n {
		panic(fmt.Sprintf("linalg.Cholesky: destination is %d×%d, want %d×%d", lr, lc, n, n))
	}
	raw := l.RawMatrix()
	finite := true
	if ad, ok := a.(*mat.Dense); ok {
		// Row blocks of equal area over the cores (row i costs i): a
		// serial pass was ~0.4% of an SVGP step's CPU (M = 500), on one
		// core. Each entry is computed alone, so the split changes no bit.
		ar := ad.RawMatrix()
		blocks := 1
		if n*n >= symSplitElems {
			blocks = symBlocks
		}
		var bad atomic.Bool
		forBlocks(blocks, 1, func(b int) {
			i0, i1 := lowerRowBounds(b, blocks, n)
			for i := i0; i < i1; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+n]
				arow := ar.Data[i*ar.Stride : i*ar.Stride+n]
				for j := 0; j < i; j++ {
					row[j] = 0.5 * (arow[j] + ar.Data[j*ar.Stride+i])
				}
				row[i] = arow[i] + shift
				clear(row[i+1:])
				if !allFinite(row[:i+1]) {
					bad.Store(true)
				}
			}
		})
		finite = !bad.Load()
	} else {
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+n]
			for j := 0; j < i; j++ {
				row[j] = 0.5 * (a.At(i, j) + a.At(j, i))
			}
			row[i] = a.At(i, i) + shift
			clear(row[i+1:])
			finite = finite && allFinite(row[:i+1])
		}
	}
	if !finite {
		return fmt.Errorf("linalg.Cholesky: matrix %d×%d holds NaN or Inf: %w", n, n, ErrNotPositiveDefinite)
	}
	diag := getBuf(n)
	defer putBuf(diag)
	for i := range *diag {
		(*diag)[i] = raw.Data[i*raw.Stride+i]
	}
	if !potrf(raw) {
		return fmt.Errorf("linalg.Cholesky: matrix %d×%d %w", n, n, ErrNotPositiveDefinite)
	}
	// Potrf leaves the strict upper triangle untouched; it holds zeros.
	return numericallySingular(raw, *diag)
}

// symSplitElems is the order² from which choleskyShiftTo forms
// ½(A + Aᵀ) in symBlocks row blocks over the cores.
const (
	symSplitElems = 1 << 16
	symBlocks     = 8
)

// lowerRowBounds is row block b of the n blocks of a lower triangle of
// order m that hold about the same number of entries.
func lowerRowBounds(b, n, m int) (lo, hi int) {
	at := func(k int) int { return int(float64(m) * math.Sqrt(float64(k)/float64(n))) }
	lo, hi = at(b), at(b+1)
	if b == n-1 {
		hi = m
	}
	return lo, hi
}

// allFinite reports whether no entry of v is NaN or ±Inf.
func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// numericallySingular rejects a factor with a pivot L_ii² at or below
// n·ε·a_ii. The pivot is a_ii − Σ_k L_ik², whose rounding error is up to
// about n·ε·a_ii (Σ_k L_ik² ≤ a_ii), so a smaller pivot is zero to working
// precision: whether it came out positive or negative (and so whether
// dpotrf failed) is an accident of rounding, as for a Kuu with two equal
// inducing inputs. Accepting it would give a factor with a 1/√ε-sized
// entry; rejecting it lets CholeskyJitter add jitter, on every platform
// alike.
func numericallySingular(l blas64.General, diag []float64) error {
	n := l.Rows
	tol := float64(n) * 0x1p-52
	for i, a := range diag {
		if p := l.Data[i*l.Stride+i]; p*p <= tol*a {
			return fmt.Errorf("linalg.Cholesky: matrix %d×%d is numerically singular (pivot %d is %.3g of its diagonal %.3g, below n·ε): %w",
				n, n, i, p*p, a, ErrNotPositiveDefinite)
		}
	}
	return nil
}

// Factorisations of at least cholSplitMin rows are blocked by this package
// (right-looking, panels of cholPanel columns) so that the panel solve and
// the trailing update, where almost all the work is, are split into fixed
// row blocks shared out over the cores: a single dpotrf runs on one core
// (sgplab keeps OpenBLAS single-threaded). The blocks are cholRows rows
// from cholRowsMin rows on, half that below, so that the few trailing rows
// of a moderate n (an SVGP Kuu with M = 500) still make several blocks.
// The split depends only on n, so the factor is bitwise the same on any
// number of cores.
const (
	cholSplitMin = 256
	cholPanel    = 128
	cholRows     = 256
	cholRowsMin  = 1024
)

// cholRowsFor is the height of the row blocks for order n.
func cholRowsFor(n int) int {
	if n < cholRowsMin {
		return cholRows / 2
	}
	return cholRows
}

// potrf overwrites the lower triangle of the square a with its Cholesky
// factor and reports whether a was positive definite.
//
// Each panel's diagonal block is factored by one serial dpotrf. All but the
// first run beside the trailing update of the panel before: the update's
// first row block holds the next diagonal block and needs only a dsyrk,
// so the goroutine that takes it first factors that block right after,
// while the other cores update the rest. Every block sees the same BLAS
// calls in the same order, so the factor is bitwise that of updating and
// factoring one after the other.
func potrf(a blas64.General) bool {
	n := a.Rows
	sym := func(k0, k1 int) blas64.Symmetric {
		return blas64.Symmetric{Uplo: blas.Lower, N: k1 - k0, Stride: a.Stride, Data: a.Data[k0*a.Stride+k0:]}
	}
	if n < cholSplitMin {
		_, ok := lapack64.Potrf(sym(0, n))
		return ok
	}
	view := func(r0, r1, c0, c1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: a.Stride, Data: a.Data[r0*a.Stride+c0:]}
	}
	h := cholRowsFor(n)
	if _, ok := lapack64.Potrf(sym(0, cholPanel)); !ok {
		return false
	}
	for k0 := 0; k0+cholPanel < n; k0 += cholPanel {
		k1 := k0 + cholPanel
		k2 := min(k1+cholPanel, n) // the next panel
		d := sym(k0, k1)
		tri := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: d.N, Stride: d.Stride, Data: d.Data}
		// Row blocks of the trailing rows [k1, n); block 0 starts at k1
		// and holds the next panel's diagonal block (h ≥ cholPanel).
		rows := (n - k1 + h - 1) / h
		block := func(b int) (i0, i1 int) { return k1 + b*h, min(k1+(b+1)*h, n) }
		// Panel: A[i0:i1, k0:k1] ← A[i0:i1, k0:k1] L_kk⁻ᵀ, the last
		// (largest update) first.
		forBlocks(rows, trsmThreads(), func(b int) {
			i0, i1 := block(rows - 1 - b)
			blas64.Trsm(blas.Right, blas.Trans, 1, tri, view(i0, i1, k0, k1))
		})
		// Trailing update of the lower triangle, row block by row block:
		// A[i0:i1, k1:i1] −= P[i0:i1] P[k1:i1]ᵀ for the panel P; block 0
		// (with the next dpotrf) first, then the last ones first.
		next := false
		forBlocks(rows, gemmThreads(), func(b int) {
			if b > 0 {
				b = rows - b
			}
			i0, i1 := block(b)
			if i0 > k1 {
				blas64.Gemm(blas.NoTrans, blas.Trans, -1, view(i0, i1, k0, k1), view(k1, i0, k0, k1), 1, view(i0, i1, k1, i0))
			}
			blas64.Syrk(blas.NoTrans, -1, view(i0, i1, k0, k1), 1, sym(i0, i1))
			if b == 0 {
				_, next = lapack64.Potrf(sym(k1, k2))
			}
		})
		if !next {
			return false
		}
	}
	return true
}

// CholeskyJitter factorises A like Cholesky. If that fails it retries with
// jitter 1e-8·mean(diag A) added to the diagonal, multiplying the jitter by
// ten on each of at most maxTries retries. It returns the factor and the
// jitter that was added (0 when none was needed). The error names the
// matrix shape and the range of jitters tried.
func CholeskyJitter(a mat.Matrix, maxTries int) (*mat.Dense, float64, error) {
	n, c := a.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.CholeskyJitter: matrix is %d×%d, want square", n, c))
	}
	l := mat.NewDense(n, n, nil)
	jitter, err := CholeskyJitterTo(l, a, maxTries)
	if err != nil {
		return nil, 0, err
	}
	return l, jitter, nil
}

// CholeskyJitterTo is CholeskyJitter writing the factor into dst (n×n,
// overwritten; dst must not share memory with a).
func CholeskyJitterTo(l *mat.Dense, a mat.Matrix, maxTries int) (float64, error) {
	n, c := a.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.CholeskyJitter: matrix is %d×%d, want square", n, c))
	}
	err := choleskyShiftTo(l, a, 0)
	if err == nil {
		return 0, nil
	}
	if maxTries <= 0 {
		return 0, err
	}
	var mean float64
	for i := 0; i < n; i++ {
		mean += a.At(i, i)
	}
	mean /= float64(n)
	if !(mean > 0) || math.IsInf(mean, 0) {
		return 0, fmt.Errorf("linalg.CholeskyJitter: matrix %d×%d has mean diagonal %g, so no jitter can help: %w",
			n, n, mean, ErrNotPositiveDefinite)
	}
	jitter := 1e-8 * mean
	tried := make([]string, 0, maxTries)
	for try := 0; try < maxTries; try++ {
		if err := choleskyShiftTo(l, a, jitter); err == nil {
			return jitter, nil
		}
		tried = append(tried, fmt.Sprintf("%.3g", jitter))
		jitter *= 10
	}
	span, rel := tried[0], "1e-8"
	if len(tried) > 1 {
		span = tried[0] + " … " + tried[len(tried)-1]
		rel = fmt.Sprintf("1e-8 … 1e%d", maxTries-9)
	}
	return 0, fmt.Errorf("linalg.CholeskyJitter: matrix %d×%d %w after jitter %s (relative %s of mean diagonal %.3g; tried %s)",
		n, n, ErrNotPositiveDefinite, span, rel, mean, strings.Join(tried, ", "))
}

// LogDetChol returns log det(L Lᵀ) = 2 Σ log L_ii for a Cholesky factor L.
func LogDetChol(l mat.Matrix) float64 {
	n, c := l.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.LogDetChol: factor is %d×%d, want square", n, c))
	}
	var s float64
	for i := 0; i < n; i++ {
		s += math.Log(l.At(i, i))
	}
	return 2 * s
}

// InverseChol returns (L Lᵀ)⁻¹ as a full symmetric matrix for a Cholesky
// factor L (only its lower triangle is read). See InverseCholTo.
func InverseChol(l *mat.Dense) (*mat.Dense, error) {
	n, c := l.Dims()
	if n != c {
		panic(fmt.Sprintf("linalg.InverseChol: factor is %d×%d, want square", n, c))
	}
	out := mat.NewDense(n, n, nil)
	if err := InverseCholTo(out, l); err != nil {
		return nil, err
	}
	return out, nil
}

// invBlock is the width of the column blocks of InverseCholTo.
const invBlock = 128

// InverseCholTo is InverseChol writing into dst (n×n, overwritten; dst
// must not share memory with l). Column block [j0, j1) of the inverse
// below row j0 depends only on the trailing factor L₂ = L[j0:, j0:]:
// it is L₂⁻ᵀ L₂⁻¹ applied to the identity's columns, two triangular solves
// costing 2(n − j0)²(j1 − j0) flops, so the whole lower triangle costs
// 2n³/3 flops like dpotri (dtrtri + dlauum) but in independent blocks,
// shared out over the cores (largest first). The blocks depend only on
// n, so the result is bitwise the same on any number of cores; the upper
// triangle is mirrored from the lower.
func InverseCholTo(out, l *mat.Dense) error {
	n, c := l.Dims()
	if r, oc := out.Dims(); n != c || r != n || oc != n {
		panic(fmt.Sprintf("linalg.InverseChol: factor is %d×%d, destination %d×%d", n, c, r, oc))
	}
	lr, raw := l.RawMatrix(), out.RawMatrix()
	for i := 0; i < n; i++ {
		if lr.Data[i*lr.Stride+i] == 0 {
			return fmt.Errorf("linalg.InverseChol: factor %d×%d has a zero on its diagonal: %w", n, n, ErrNotPositiveDefinite)
		}
	}
	blocks := (n + invBlock - 1) / invBlock
	forBlocks(blocks, trsmThreads(), func(b int) {
		j0, j1 := b*invBlock, min((b+1)*invBlock, n)
		blk := blas64.General{Rows: n - j0, Cols: j1 - j0, Stride: raw.Stride, Data: raw.Data[j0*raw.Stride+j0:]}
		for i := 0; i < blk.Rows; i++ {
			row := blk.Data[i*blk.Stride : i*blk.Stride+blk.Cols]
			clear(row)
			if i < blk.Cols {
				row[i] = 1
			}
		}
		tri := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n - j0, Stride: lr.Stride, Data: lr.Data[j0*lr.Stride+j0:]}
		trsmRec(blas.NoTrans, tri, blk)
		trsmRec(blas.Trans, tri, blk)
	})
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			raw.Data[j*raw.Stride+i] = raw.Data[i*raw.Stride+j]
		}
	}
	return nil
}
