package ad

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/internal/workers"
)

// shapeOf formats a node's shape for panic messages.
func shapeOf(n *Node) string {
	r, c := n.Dims()
	return fmt.Sprintf("%d×%d", r, c)
}

// sameShape panics unless a and b have the same shape.
func sameShape(op string, a, b *Node) {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		panic(fmt.Sprintf("ad.%s: shapes %s and %s do not match", op, shapeOf(a), shapeOf(b)))
	}
}

// mustScalar panics unless s is 1×1.
func mustScalar(op string, a, s *Node) {
	if r, c := s.Dims(); r != 1 || c != 1 {
		panic(fmt.Sprintf("ad.%s: scalar operand is %s (matrix operand %s); want 1×1", op, shapeOf(s), shapeOf(a)))
	}
}

// mustSquare panics unless a is square.
func mustSquare(op string, a *Node) int {
	r, c := a.Dims()
	if r != c {
		panic(fmt.Sprintf("ad.%s: matrix is %s, want square", op, shapeOf(a)))
	}
	return r
}

// rowsOf returns the row count of m and a function giving its raw row i,
// so views whose stride differs from the column count are handled.
func rowsOf(m *mat.Dense) (r int, row func(i int) []float64) {
	raw := m.RawMatrix()
	return raw.Rows, func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] }
}

// parallelElems is the element count above which elementwise loops are
// split over goroutines; below it the goroutine start-up costs more.
const parallelElems = 1 << 16

// byRows calls f on row ranges covering [0, r), concurrently when the
// matrix has more than parallelElems entries. Each row is handled by exactly
// one call, so results do not depend on the split. The ranges, four per
// core, are taken from a shared counter: the rows of a triangular factor
// cost from 1 to n, and with one range per core the core holding the long
// rows finished last (0.3–0.4 ms alone per such pass at M = 500).
func byRows(r, c int, f func(i0, i1 int)) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 || r < 2 || r*c < parallelElems {
		f(0, r)
		return
	}
	ranges := min(r, 4*procs)
	workers.Run(ranges, procs, func(k int) { f(k*r/ranges, (k+1)*r/ranges) })
}

// unary returns f applied elementwise to a as a new matrix.
func unary(t *Tape, a *mat.Dense, f func(x float64) float64) *mat.Dense {
	r, c := a.Dims()
	out := t.NewDenseNonZeroed(r, c)
	od := out.RawMatrix().Data
	_, row := rowsOf(a)
	byRows(r, c, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			o := od[i*c : (i+1)*c]
			for j, x := range row(i) {
				o[j] = f(x)
			}
		}
	})
	return out
}

// binary returns f applied elementwise to a and b (same shape) as a new
// matrix.
func binary(t *Tape, a, b *mat.Dense, f func(x, y float64) float64) *mat.Dense {
	r, c := a.Dims()
	out := t.NewDenseNonZeroed(r, c)
	od := out.RawMatrix().Data
	_, arow := rowsOf(a)
	_, brow := rowsOf(b)
	byRows(r, c, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			o := od[i*c : (i+1)*c]
			bi := brow(i)
			for j, x := range arow(i) {
				o[j] = f(x, bi[j])
			}
		}
	})
	return out
}

// ternary returns f applied elementwise to a, b and c as a new matrix.
func ternary(t *Tape, a, b, c *mat.Dense, f func(x, y, z float64) float64) *mat.Dense {
	r, nc := a.Dims()
	out := t.NewDenseNonZeroed(r, nc)
	od := out.RawMatrix().Data
	_, arow := rowsOf(a)
	_, brow := rowsOf(b)
	_, crow := rowsOf(c)
	byRows(r, nc, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			o := od[i*nc : (i+1)*nc]
			bi, ci := brow(i), crow(i)
			for j, x := range arow(i) {
				o[j] = f(x, bi[j], ci[j])
			}
		}
	})
	return out
}

// sumOf returns Σ m_ij.
func sumOf(m *mat.Dense) float64 {
	var s float64
	n, row := rowsOf(m)
	for i := 0; i < n; i++ {
		for _, x := range row(i) {
			s += x
		}
	}
	return s
}

// dotOf returns Σ a_ij b_ij.
func dotOf(a, b *mat.Dense) float64 {
	var s float64
	n, arow := rowsOf(a)
	_, brow := rowsOf(b)
	for i := 0; i < n; i++ {
		bi := brow(i)
		for j, x := range arow(i) {
			s += x * bi[j]
		}
	}
	return s
}

// scalar returns a new 1×1 matrix.
func (t *Tape) scalar(v float64) *mat.Dense {
	m := t.NewDenseNonZeroed(1, 1)
	m.Set(0, 0, v)
	return m
}

// tril zeroes the strict upper triangle of m in place and returns it.
func tril(m *mat.Dense) *mat.Dense {
	n, row := rowsOf(m)
	for i := 0; i < n; i++ {
		r := row(i)
		for j := i + 1; j < len(r); j++ {
			r[j] = 0
		}
	}
	return m
}
