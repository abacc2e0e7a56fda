package inference

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/internal/vec"
	"sgplab/gp/internal/workers"
	"sgplab/gp/kernels"
)

// Posterior is a Gaussian posterior over f expressed through the
// covariances k(x) (M×1) between f(x) and M basis variables:
//
//	mean(x) = k(x)ᵀ α,   var(x) = k(x, x) − ‖A k(x)‖² + ‖B k(x)‖².
//
// Writing the variance as a difference of two squared norms (rather than
// through one M×M matrix) keeps each term non-negative and well conditioned.
type Posterior struct {
	Alpha *mat.Dense // M×1
	A     *mat.Dense // M×M; nil drops the term
	B     *mat.Dense // R×M; nil drops the term
}

// Marginals returns the mean and variance of f at the inputs whose
// covariances with the basis variables are the columns of kux (M×n) and
// whose prior variances are kdiag (length n). The columns are taken in
// fixed chunks of PredictChunk spread over the cores (see Predict), so the
// result is bitwise the same on any number of cores and the same as
// Predict's for the same columns.
func (p *Posterior) Marginals(kux *mat.Dense, kdiag []float64) (mean, variance []float64, err error) {
	m, n := kux.Dims()
	if len(kdiag) != n {
		return nil, nil, fmt.Errorf("inference: Kux has %d columns but %d prior variances were given", n, len(kdiag))
	}
	op, err := p.operator(m)
	if err != nil {
		return nil, nil, err
	}
	mean = make([]float64, n)
	variance = append([]float64(nil), kdiag...)
	forChunks(n, func(lo, hi int, s *chunkScratch) {
		op.marginals(kux.Slice(0, m, lo, hi).(*mat.Dense), mean[lo:hi], variance[lo:hi], s)
	})
	return mean, variance, nil
}

// Binder records the kernel and the basis feature on a tape, for Predict.
type Binder func(t *ad.Tape) (kernels.Bound, features.Bound)

// PredictChunk is the number of test inputs Predict handles at a time.
const PredictChunk = 2048

// Predict returns the latent mean and variance at the rows of x. It works in
// chunks of PredictChunk rows spread over the cores, each goroutine with
// its own tape and buffers reused from chunk to chunk, so memory is
// O(M·PredictChunk) per core whatever the number of rows. Every chunk
// computes the same thing wherever it runs and writes its own rows of the
// result: the result is bitwise the same on any number of cores.
func (p *Posterior) Predict(x *mat.Dense, bind Binder) (mean, variance []float64, err error) {
	n, d := x.Dims()
	mean = make([]float64, n)
	variance = make([]float64, n)
	op, err := p.operator(p.Alpha.RawMatrix().Rows)
	if err != nil {
		return nil, nil, err
	}
	errs := make([]error, (n+PredictChunk-1)/PredictChunk)
	forChunks(n, func(lo, hi int, s *chunkScratch) {
		t := s.tape
		t.Reset()
		xc := s.rows(hi-lo, d)
		xc.Copy(x.Slice(lo, hi, 0, d))
		k, f := bind(t)
		xn := t.Const(xc)
		kux := f.Kuf(k, xn).Value()
		if r, c := kux.Dims(); r != op.m || c != hi-lo {
			errs[lo/PredictChunk] = fmt.Errorf("inference: posterior has %d basis variables but Kux has %d rows (for %d inputs: %d columns)", op.m, r, hi-lo, c)
			return
		}
		kd := k.Diag(xn).Value()
		for i := range hi - lo {
			variance[lo+i] = kd.At(i, 0)
		}
		op.marginals(kux, mean[lo:hi], variance[lo:hi], s)
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return mean, variance, nil
}

// marginalOp is a Posterior prepared for the chunks of Marginals and
// Predict. A diagonal A (a diagonal Kuu, as for spherical harmonics) is
// taken out of the matrix products as the scaling it is: the product's
// entry is the one term a_ii·k_i that is not an exact zero, so ‖A k‖² is
// bitwise that of the product (for finite Kux) at M·n flops instead of
// 2M²·n. A dense A and B each take one product per chunk, as before:
// stacking them into one [A; B]·Kux gives the same sums in exact
// arithmetic, but OpenBLAS's kernels then round a few entries differently
// (measured: last-bit changes in the variance), which would change every
// stored result of SGPR and SVGP.
type marginalOp struct {
	m     int
	alpha blas64.Vector
	diagA []float64 // A's diagonal when A is diagonal (then not in terms)
	terms []normTerm
	rows  int // the most rows of a term: the product buffer's height
}

// normTerm is a matrix whose squared column norms of F·Kux are subtracted
// from the variance with sign (+1 for A, −1 for B).
type normTerm struct {
	f    blas64.General
	sign float64
}

// operator checks the posterior against m basis variables and prepares it.
func (p *Posterior) operator(m int) (*marginalOp, error) {
	if ar, _ := p.Alpha.Dims(); ar != m {
		return nil, fmt.Errorf("inference: posterior has %d basis variables but Kux has %d rows", ar, m)
	}
	alpha := p.Alpha.RawMatrix()
	op := &marginalOp{m: m, alpha: blas64.Vector{N: m, Inc: alpha.Stride, Data: alpha.Data}}
	for _, t := range []struct {
		name string
		f    *mat.Dense
		sign float64
	}{{"A", p.A, 1}, {"B", p.B, -1}} {
		if t.f == nil {
			continue
		}
		r, c := t.f.Dims()
		if c != m {
			return nil, fmt.Errorf("inference: posterior's %s has %d columns for %d basis variables", t.name, c, m)
		}
		if t.name == "A" {
			if d, ok := diagonalOf(t.f); ok {
				op.diagA = d
				continue
			}
		}
		op.terms = append(op.terms, normTerm{f: t.f.RawMatrix(), sign: t.sign})
		op.rows = max(op.rows, r)
	}
	return op, nil
}

// diagonalOf returns the diagonal of a square a whose off-diagonal
// entries are all zero.
func diagonalOf(a *mat.Dense) ([]float64, bool) {
	r, c := a.Dims()
	if r != c {
		return nil, false
	}
	d := make([]float64, r)
	for i := range r {
		for j, v := range a.RawRowView(i) {
			if j != i && v != 0 {
				return nil, false
			}
		}
		d[i] = a.At(i, i)
	}
	return d, true
}

// marginals sets mean = kuxᵀα and subtracts ‖A kux‖² from, and adds
// ‖B kux‖² to, the prior variances in variance, for one chunk kux (M×n,
// n ≤ PredictChunk): the same BLAS calls on the same operands as the
// serial loop this replaces, the terms added row by row of A then of B.
func (op *marginalOp) marginals(kux *mat.Dense, mean, variance []float64, s *chunkScratch) {
	_, n := kux.Dims()
	kr := kux.RawMatrix()
	blas64.Gemv(blas.Trans, 1, kr, op.alpha, 0, blas64.Vector{N: n, Inc: 1, Data: mean})
	for i, a := range op.diagA {
		vec.SubScaledSquares(variance[:n], kr.Data[i*kr.Stride:i*kr.Stride+n], a)
	}
	if len(op.terms) == 0 {
		return
	}
	buf := s.product(op.rows * n)
	for _, t := range op.terms {
		prod := blas64.General{Rows: t.f.Rows, Cols: n, Stride: n, Data: buf}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, t.f, kr, 0, prod)
		for i := range prod.Rows {
			vec.SubSignedSquares(variance[:n], prod.Data[i*n:(i+1)*n], t.sign)
		}
	}
}

// chunkScratch is one goroutine's buffers, reused from chunk to chunk: a
// tape for the chunk's covariances, a copy of its rows and the product.
type chunkScratch struct {
	tape *ad.Tape
	x    []float64
	prod []float64
}

// rows returns an r×c matrix on the scratch's row buffer.
func (s *chunkScratch) rows(r, c int) *mat.Dense {
	if cap(s.x) < r*c {
		s.x = make([]float64, PredictChunk*c)
	}
	return mat.NewDense(r, c, s.x[:r*c])
}

// product returns the product buffer with n entries.
func (s *chunkScratch) product(n int) []float64 {
	if cap(s.prod) < n {
		s.prod = make([]float64, n)
	}
	return s.prod[:n]
}

// forChunks calls f on the chunks [lo, hi) of PredictChunk of [0, n) (the
// last one shorter), spread over the cores by the worker pool. A chunk
// gets the scratch of no other chunk running at the same time: at most one
// per goroutine is ever made. A panic in f is raised again on the caller
// (workers.Run).
func forChunks(n int, f func(lo, hi int, s *chunkScratch)) {
	chunks := (n + PredictChunk - 1) / PredictChunk
	g := min(runtime.GOMAXPROCS(0), chunks)
	free := make(chan *chunkScratch, g)
	workers.Run(chunks, g, func(c int) {
		var s *chunkScratch
		select {
		case s = <-free:
		default:
			s = &chunkScratch{tape: ad.NewTape()}
		}
		defer func() { free <- s }()
		lo := c * PredictChunk
		f(lo, min(lo+PredictChunk, n), s)
	})
}

// solveLower returns L⁻¹B (or L⁻ᵀB when trans) for lower-triangular L.
func solveLower(l, b *mat.Dense, trans bool) *mat.Dense {
	n, _ := l.Dims()
	x := mat.DenseCopyOf(b)
	tA := blas.NoTrans
	if trans {
		tA = blas.Trans
	}
	lr := l.RawMatrix()
	blas64.Trsm(blas.Left, tA, 1,
		blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: lr.Stride, Data: lr.Data},
		x.RawMatrix())
	return x
}

// invLower returns L⁻¹ for lower-triangular L.
func invLower(l *mat.Dense) *mat.Dense {
	n, _ := l.Dims()
	id := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		id.Set(i, i, 1)
	}
	return solveLower(l, id, false)
}
