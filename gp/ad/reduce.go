package ad

import (
	"gonum.org/v1/gonum/mat"
)

// Sum returns Σ a_ij as a 1×1 node.
func Sum(a *Node) *Node {
	return Custom(a.tape.scalar(sumOf(a.val)), func(g *mat.Dense) []*mat.Dense {
		r, c := a.Dims()
		return []*mat.Dense{filled(a.tape, r, c, g.At(0, 0))}
	}, a)
}

// RowSums returns the R×1 column of row sums of a.
func RowSums(a *Node) *Node {
	r, c := a.Dims()
	v := a.tape.NewDenseNonZeroed(r, 1)
	n, row := rowsOf(a.val)
	for i := 0; i < n; i++ {
		var s float64
		for _, x := range row(i) {
			s += x
		}
		v.Set(i, 0, s)
	}
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDenseNonZeroed(r, c)
		d := ga.RawMatrix().Data
		for i := 0; i < r; i++ {
			gi := g.At(i, 0)
			for j := range d[i*c : (i+1)*c] {
				d[i*c+j] = gi
			}
		}
		return []*mat.Dense{ga}
	}, a)
}

// ColSums returns the 1×C row of column sums of a.
func ColSums(a *Node) *Node {
	r, c := a.Dims()
	sm := a.tape.NewDense(1, c)
	s := sm.RawMatrix().Data
	n, row := rowsOf(a.val)
	for i := 0; i < n; i++ {
		for j, x := range row(i) {
			s[j] += x
		}
	}
	return Custom(sm, func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDenseNonZeroed(r, c)
		d := ga.RawMatrix().Data
		gr := g.RawRowView(0)
		for i := 0; i < r; i++ {
			copy(d[i*c:(i+1)*c], gr)
		}
		return []*mat.Dense{ga}
	}, a)
}

// ColSqNorms returns the C×1 column of the squared column norms
// Σ_i a_ij² of a: T(ColSums(Square(a))) with the same bits, without the
// squared matrix or the broadcast gradient (ā_ij = 2 ḡ_j a_ij), on every
// core for a large a (each column summed by one goroutine, in row order).
func ColSqNorms(a *Node) *Node {
	r, c := a.Dims()
	sm := a.tape.NewDense(c, 1)
	s := sm.RawMatrix().Data // a column of a fresh matrix: stride 1
	n, row := rowsOf(a.val)
	byRows(c, r, func(j0, j1 int) { // column blocks
		for i := 0; i < n; i++ {
			for j, x := range row(i)[j0:j1] {
				s[j0+j] += x * x
			}
		}
	})
	return Custom(sm, func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDenseNonZeroed(r, c)
		d := ga.RawMatrix().Data
		gr := g.RawMatrix()
		byRows(r, c, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				di := d[i*c : (i+1)*c]
				for j, x := range row(i) {
					di[j] = 2 * gr.Data[j*gr.Stride] * x
				}
			}
		})
		return []*mat.Dense{ga}
	}, a)
}

// SumSquares returns Σ a_ij² as a 1×1 node: Sum(Square(a)) with the same
// bits, without the squared matrix or the broadcast gradient
// (ā_ij = 2ḡ a_ij, on every core for a large a), as a whitened KL's
// tr(SSᵀ) = ‖S‖²_F needs.
func SumSquares(a *Node) *Node {
	return Custom(a.tape.scalar(dotOf(a.val, a.val)), func(g *mat.Dense) []*mat.Dense {
		r, c := a.Dims()
		ga := a.tape.NewDenseNonZeroed(r, c)
		d := ga.RawMatrix().Data
		s := 2 * g.At(0, 0) // Square's backward: (2ḡ) a_ij
		_, row := rowsOf(a.val)
		byRows(r, c, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				di := d[i*c : (i+1)*c]
				for j, x := range row(i) {
					di[j] = s * x
				}
			}
		})
		return []*mat.Dense{ga}
	}, a)
}

// Dot returns Σ a_ij b_ij as a 1×1 node.
func Dot(a, b *Node) *Node {
	sameShape("Dot", a, b)
	return Custom(a.tape.scalar(dotOf(a.val, b.val)), func(g *mat.Dense) []*mat.Dense {
		s := g.At(0, 0)
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = unary(a.tape, b.val, func(x float64) float64 { return s * x })
		}
		if b.needsGrad {
			gb = unary(a.tape, a.val, func(x float64) float64 { return s * x })
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// Trace returns Σ a_ii of a square a as a 1×1 node.
func Trace(a *Node) *Node {
	n := mustSquare("Trace", a)
	var s float64
	for i := 0; i < n; i++ {
		s += a.val.At(i, i)
	}
	return Custom(a.tape.scalar(s), func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDense(n, n)
		for i := 0; i < n; i++ {
			ga.Set(i, i, g.At(0, 0))
		}
		return []*mat.Dense{ga}
	}, a)
}

// Diag returns the diagonal of a square a as an R×1 column.
func Diag(a *Node) *Node {
	n := mustSquare("Diag", a)
	v := a.tape.NewDenseNonZeroed(n, 1)
	for i := 0; i < n; i++ {
		v.Set(i, 0, a.val.At(i, i))
	}
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDense(n, n)
		for i := 0; i < n; i++ {
			ga.Set(i, i, g.At(i, 0))
		}
		return []*mat.Dense{ga}
	}, a)
}

// filled returns an r×c matrix with every entry v.
func filled(t *Tape, r, c int, v float64) *mat.Dense {
	m := t.NewDenseNonZeroed(r, c)
	d := m.RawMatrix().Data
	for i := range d {
		d[i] = v
	}
	return m
}
