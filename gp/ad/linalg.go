package ad

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/internal/workers"
	"sgplab/gp/linalg"
)

// Cholesky returns the lower-triangular factor L of the symmetric positive
// definite a (L Lᵀ = ½(a + aᵀ); zeros above the diagonal). A matrix that is
// not positive definite returns an error wrapping
// linalg.ErrNotPositiveDefinite. The gradient with respect to a is
// symmetric.
func Cholesky(a *Node) (*Node, error) {
	n := mustSquare("Cholesky", a)
	l := a.tape.NewDenseNonZeroed(n, n)
	if err := linalg.CholeskyTo(l, a.val); err != nil {
		a.tape.Recycle(l)
		return nil, err
	}
	return cholNode(l, a), nil
}

// CholeskyJitter is Cholesky with escalating diagonal jitter on failure: it
// tries the plain factorisation, then adds 1e-8·mean(diag a) to the
// diagonal, multiplying by ten on each of at most maxTries retries. It
// returns the factor and the jitter added. The jitter is treated as a
// constant in the backward pass.
func CholeskyJitter(a *Node, maxTries int) (*Node, float64, error) {
	n := mustSquare("CholeskyJitter", a)
	l := a.tape.NewDenseNonZeroed(n, n)
	jitter, err := linalg.CholeskyJitterTo(l, a.val, maxTries)
	if err != nil {
		a.tape.Recycle(l)
		return nil, 0, err
	}
	return cholNode(l, a), jitter, nil
}

// cholNode records L = chol(A) with the symmetric backward pass of Murray
// (2016), blocked so that almost all of its work is dgemm on large panels.
func cholNode(l *mat.Dense, a *Node) *Node {
	return Custom(l, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{cholBackward(a.tape, l, g)}
	}, a)
}

// cholBlock is the panel width of the blocked Cholesky adjoint.
const cholBlock = 64

// cholBackward returns the symmetric Ā for L = chol(A) given L̄. It runs
// the blocked forward factorisation backwards (Murray 2016, "blocked
// reverse"): for the panels [R D; B C] of L at block column k:j, in
// reverse order,
//
//	C̄ ← C̄ D⁻¹,  B̄ −= C̄ R,  D̄ −= tril(C̄ᵀ C),  D̄ ← chol_rev(D, D̄),
//	R̄ −= C̄ᵀ B,  R̄ −= (D̄ + D̄ᵀ) R,
//
// where Ā holds the gradient with respect to the lower triangle of A; the
// symmetric gradient is ½(Ā + Āᵀ).
//
// Only the D̄ chain is serial, so each panel runs in two loops over the
// cores: the row blocks of C̄ D⁻¹; then the D̄ chain beside the blocks of
// R̄ −= C̄ᵀ B and B̄ −= C̄ R (neither reads D̄ nor what the other writes),
// and the blocks of R̄ −= (D̄ + D̄ᵀ) R once the chain and R̄ −= C̄ᵀ B are
// done, beside what is left of B̄'s. The blocks are those in which
// linalg.SolveRightLower and linalg.Gemm split each operation, fixed by
// the shapes, and each entry of Ā sees its updates in the order above, so
// Ā is bitwise the same on any number of cores and as the one computed by
// those calls one after the other.
func cholBackward(t *Tape, l, g *mat.Dense) *mat.Dense {
	n, _ := l.Dims()
	abar := tril(t.copyOf(g)) // only the lower triangle of L̄ is real
	lr, ar := l.RawMatrix(), abar.RawMatrix()
	tmp := t.NewDense(min(n, cholBlock), min(n, cholBlock))
	defer t.Recycle(tmp)
	procs := runtime.GOMAXPROCS(0)
	for k := ((n - 1) / cholBlock) * cholBlock; k >= 0; k -= cholBlock {
		j := min(k+cholBlock, n)
		nb := j - k
		d := l.Slice(k, j, k, j).(*mat.Dense)
		db := abar.Slice(k, j, k, j).(*mat.Dense)
		draw := d.RawMatrix()
		dtri := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: nb, Stride: draw.Stride, Data: draw.Data}
		td := tmp.Slice(0, nb, 0, nb).(*mat.Dense)
		tdr := td.RawMatrix()
		cb, rb := blockView(ar, j, n, k, j), blockView(ar, k, j, 0, k) // C̄, R̄
		bb := blockView(ar, j, n, 0, k)                                // B̄
		r, b, c := blockView(lr, k, j, 0, k), blockView(lr, j, n, 0, k), blockView(lr, j, n, k, j)
		// The blocks of each operation (0 for an operation with nothing
		// to do).
		var nC, nB, nRB, nRD int
		if j < n {
			nC = linalg.SolveRightLowerBlocks(dtri, cb)
			if k > 0 {
				nB = linalg.GemmBlocks(blas.NoTrans, cb, bb)
				nRB = linalg.GemmBlocks(blas.Trans, cb, rb)
			}
		}
		if k > 0 {
			nRD = linalg.GemmBlocks(blas.NoTrans, tdr, rb)
		}
		workers.Run(nC, procs, func(i int) { linalg.SolveRightLowerBlock(i, nC, dtri, cb) })
		// One loop for the rest of the panel, its tasks handed out in this
		// order: the D̄ chain, the blocks of R̄ −= C̄ᵀB, of B̄ −= C̄R, and of
		// R̄ −= (D̄ + D̄ᵀ)R, which wait (asleep: a spinning wait took a
		// tenth of the step's CPU on a busy machine) for the first 1 + nRB,
		// all taken before them, so running or done; they overlap B̄'s.
		var pending atomic.Int64 // chain and R̄ −= C̄ᵀB blocks not done
		pending.Store(int64(1 + nRB))
		deps := make(chan struct{})
		// Deferred, so that a panic wakes the waiting tasks too.
		depDone := func() {
			if pending.Add(-1) == 0 {
				close(deps)
			}
		}
		workers.Run(1+nRB+nB+nRD, procs, func(i int) {
			switch {
			case i == 0:
				defer depDone()
				if j < n {
					blas64.Gemm(blas.Trans, blas.NoTrans, 1, cb, c, 0, tdr)
					db.Sub(db, tril(td))
				}
				cholRevUnblocked(t, d, db)
				if k > 0 {
					td.Add(db, db.T())
				}
			case i <= nRB:
				defer depDone()
				linalg.GemmBlock(i-1, nRB, blas.Trans, blas.NoTrans, -1, cb, b, 1, rb)
			case i <= nRB+nB:
				linalg.GemmBlock(i-1-nRB, nB, blas.NoTrans, blas.NoTrans, -1, cb, r, 1, bb)
			default:
				<-deps
				linalg.GemmBlock(i-1-nRB-nB, nRD, blas.NoTrans, blas.NoTrans, -1, tdr, r, 1, rb)
			}
		})
	}
	// Symmetrise: ½(Ā + Āᵀ) keeps the diagonal and halves the rest (row
	// i is the only one to touch (i, c) and (c, i) for c < i).
	byRows(n, n, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			for c := 0; c < i; c++ {
				v := 0.5 * ar.Data[i*ar.Stride+c]
				ar.Data[i*ar.Stride+c] = v
				ar.Data[c*ar.Stride+i] = v
			}
		}
	})
	return abar
}

// cholRevUnblocked overwrites the lower-triangular L̄ with the
// lower-triangle gradient Φ(S + Sᵀ), S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (Murray 2016,
// eq. 10), for a small factor L.
func cholRevUnblocked(t *Tape, l, lbar *mat.Dense) {
	n, _ := l.Dims()
	p := t.copyOf(lbar)
	defer t.Recycle(p)
	linalg.MulLowerTInPlace(l, p)
	phi(p)
	// S = L⁻ᵀ P L⁻¹; both solves act on columns: Sᵀ = L⁻ᵀ (L⁻ᵀ P)ᵀ.
	linalg.SolveLowerTInPlace(l, p)
	st := t.copyOf(p.T())
	defer t.Recycle(st)
	linalg.SolveLowerTInPlace(l, st)
	lr, sr := lbar.RawMatrix(), st.RawMatrix()
	for i := 0; i < n; i++ {
		row, si := lr.Data[i*lr.Stride:i*lr.Stride+i+1], sr.Data[i*sr.Stride:]
		for j := range row {
			row[j] = si[j] + sr.Data[j*sr.Stride+i]
		}
	}
	phi(lbar)
}

// phi keeps the lower triangle of the square m and halves its diagonal, in
// place.
func phi(m *mat.Dense) {
	tril(m)
	n, _ := m.Dims()
	for i := 0; i < n; i++ {
		m.Set(i, i, 0.5*m.At(i, i))
	}
}

func solveShapes(op string, l, b *Node) {
	n, c := l.Dims()
	br, _ := b.Dims()
	if n != c || br != n {
		panic(fmt.Sprintf("ad.%s: factor %s and right-hand side %s do not match", op, shapeOf(l), shapeOf(b)))
	}
}

// SolveLower returns L⁻¹B for lower-triangular L (only its lower triangle
// is read), by forward substitution.
func SolveLower(l, b *Node) *Node {
	solveShapes("SolveLower", l, b)
	t := l.tape
	x := t.denseOf(b.val)
	linalg.SolveLowerTo(x, l.val, b.val)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// B̄ = L⁻ᵀ X̄, L̄ = −tril(B̄ Xᵀ).
		gb := t.denseOf(g)
		linalg.SolveLowerTTo(gb, l.val, g)
		var gl *mat.Dense
		if l.needsGrad {
			gl = squareOf(t, l)
			linalg.LowerMulTTo(gl, -1, gb, x, 0)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// SolveLowerT returns L⁻ᵀB for lower-triangular L, by back substitution.
func SolveLowerT(l, b *Node) *Node {
	solveShapes("SolveLowerT", l, b)
	t := l.tape
	x := t.denseOf(b.val)
	linalg.SolveLowerTTo(x, l.val, b.val)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// B̄ = L⁻¹ X̄, L̄ = −tril(X B̄ᵀ).
		gb := t.denseOf(g)
		linalg.SolveLowerTo(gb, l.val, g)
		var gl *mat.Dense
		if l.needsGrad {
			gl = squareOf(t, l)
			linalg.LowerMulTTo(gl, -1, x, gb, 0)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// MulLowerT returns LᵀB for lower-triangular L (only its lower triangle is
// read) with triangular multiplies, half the flops of MatMulTA(L, B) both
// ways: B̄ = L X̄ (another triangular multiply), L̄ = tril(B X̄ᵀ).
func MulLowerT(l, b *Node) *Node {
	solveShapes("MulLowerT", l, b)
	t := l.tape
	x := t.denseOf(b.val)
	linalg.MulLowerTTo(x, l.val, b.val)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		var gl, gb *mat.Dense
		if b.needsGrad {
			gb = t.denseOf(g)
			linalg.MulLowerTo(gb, l.val, g)
		}
		if l.needsGrad {
			gl = squareOf(t, l)
			linalg.LowerMulTTo(gl, 1, b.val, g, 0)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// CholSolve returns (L Lᵀ)⁻¹B for a Cholesky factor L.
func CholSolve(l, b *Node) *Node {
	solveShapes("CholSolve", l, b)
	t := l.tape
	y := t.denseOf(b.val)
	linalg.SolveLowerTo(y, l.val, b.val)
	x := t.denseOf(y)
	linalg.SolveLowerTTo(x, l.val, y)
	return Custom(x, func(g *mat.Dense) []*mat.Dense {
		// With Y = L⁻¹B and X = L⁻ᵀY: Ȳ = L⁻¹X̄, B̄ = L⁻ᵀȲ,
		// L̄ = −tril(X Ȳᵀ + B̄ Yᵀ).
		gy := t.denseOf(g)
		linalg.SolveLowerTo(gy, l.val, g)
		gb := t.denseOf(gy)
		linalg.SolveLowerTTo(gb, l.val, gy)
		var gl *mat.Dense
		if l.needsGrad {
			gl = squareOf(t, l)
			linalg.LowerMulTTo(gl, -1, x, gy, 0)
			linalg.LowerMulTTo(gl, -1, gb, y, 1)
		}
		return []*mat.Dense{gl, gb}
	}, l, b)
}

// LogDetChol returns log det(L Lᵀ) = 2 Σ log L_ii for a Cholesky factor L
// as a 1×1 node.
func LogDetChol(l *Node) *Node {
	n := mustSquare("LogDetChol", l)
	return Custom(l.tape.scalar(linalg.LogDetChol(l.val)), func(g *mat.Dense) []*mat.Dense {
		gl := l.tape.NewDense(n, n)
		s := 2 * g.At(0, 0)
		for i := 0; i < n; i++ {
			gl.Set(i, i, s/l.val.At(i, i))
		}
		return []*mat.Dense{gl}
	}, l)
}

// squareOf is a new matrix of l's (square) shape, for its gradient.
func squareOf(t *Tape, l *Node) *mat.Dense {
	n, _ := l.Dims()
	return t.NewDenseNonZeroed(n, n)
}

// blockView is rows r0:r1, columns c0:c1 of raw (an empty view keeps no
// data, so a block at the matrix's edge does not slice past its end).
func blockView(raw blas64.General, r0, r1, c0, c1 int) blas64.General {
	if r0 == r1 || c0 == c1 {
		return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: raw.Stride}
	}
	return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: raw.Stride, Data: raw.Data[r0*raw.Stride+c0:]}
}
