package kernels

import (
	"runtime"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/internal/workers"
	"sgplab/gp/linalg"
)

// chunkRows is the number of rows filled per task: small enough that a
// chunk of the output stays in cache between its matrix product and its
// elementwise pass, and that the last task of a Kuf chunk (M = 500 rows,
// 4194 columns) leaves the other core idle only briefly (64 rather than
// 128: 3% off the SGPR recipe step).
const chunkRows = 64

// parallelRows calls fn on the consecutive row ranges of chunkRows rows
// covering [0, n), on up to GOMAXPROCS goroutines when the work (n·cols)
// is large enough to pay. The ranges are the same on any number of cores
// (even on one), so every matrix product inside fn is the same call and
// gives the same bits whichever goroutine runs it.
func parallelRows(n, cols int, fn func(r0, r1 int)) {
	chunks := rowChunks(n, cols)
	if chunks == 1 {
		fn(0, n)
		return
	}
	workers.Run(chunks, runtime.GOMAXPROCS(0), func(c int) {
		r0 := c * chunkRows
		fn(r0, min(r0+chunkRows, n))
	})
}

// rowChunks is the number of row ranges parallelRows hands to fn (the
// range [r0, r1) is number r0/chunkRows).
func rowChunks(n, cols int) int {
	if n*cols < 1<<14 || n <= chunkRows {
		return 1
	}
	return (n + chunkRows - 1) / chunkRows
}

// expand returns the entries of a 1×1 or 1×D parameter as D values.
func expand(n *ad.Node, dim int) []float64 {
	v := n.Value()
	r, c := v.Dims()
	out := make([]float64, dim)
	switch {
	case r == 1 && c == 1:
		for i := range out {
			out[i] = v.At(0, 0)
		}
	case r == 1 && c == dim:
		copy(out, v.RawRowView(0)[:dim])
	default:
		panic("kernels: parameter of shape " + shape(r, c) + " for dimension " + itoa(dim))
	}
	return out
}

// collapse shapes per-dimension gradients like the parameter n (summing
// them for a 1×1 parameter).
func collapse(g []float64, n *ad.Node) *mat.Dense {
	if _, c := n.Dims(); c == 1 && len(g) != 1 {
		s := 0.0
		for _, v := range g {
			s += v
		}
		return mat.NewDense(1, 1, []float64{s})
	}
	return mat.NewDense(1, len(g), g)
}

func shape(r, c int) string { return itoa(r) + "×" + itoa(c) }

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// scaleCols returns x with column d multiplied by s[d].
func scaleCols(t *ad.Tape, x *mat.Dense, s []float64) *mat.Dense {
	r, c := x.Dims()
	out := t.NewDenseNonZeroed(r, c)
	od := out.RawMatrix().Data
	for i := 0; i < r; i++ {
		xi := x.RawRowView(i)
		o := od[i*c : (i+1)*c]
		for j := range o {
			o[j] = xi[j] * s[j]
		}
	}
	return out
}

// centredScaled returns (x − c) with column d multiplied by s[d].
func centredScaled(t *ad.Tape, x *mat.Dense, c, s []float64) *mat.Dense {
	r, nc := x.Dims()
	out := t.NewDenseNonZeroed(r, nc)
	od := out.RawMatrix().Data
	for i := 0; i < r; i++ {
		xi := x.RawRowView(i)
		o := od[i*nc : (i+1)*nc]
		for j := range o {
			o[j] = (xi[j] - c[j]) * s[j]
		}
	}
	return out
}

// colMeans returns the mean of each column (zeros for no rows).
func colMeans(x *mat.Dense) []float64 {
	r, _ := x.Dims()
	out := colSums(x)
	for j := range out {
		out[j] /= float64(max(r, 1))
	}
	return out
}

// rowSqNorms returns Σ_d x_nd² for each row (in a tape-owned buffer).
func rowSqNorms(t *ad.Tape, x *mat.Dense) []float64 {
	r, _ := x.Dims()
	if r == 0 {
		return nil
	}
	out := t.NewDenseNonZeroed(r, 1).RawMatrix().Data
	for i := range out {
		s := 0.0
		for _, v := range x.RawRowView(i) {
			s += v * v
		}
		out[i] = s
	}
	return out
}

// rowSums and colSums of a matrix.
func rowSums(a *mat.Dense) []float64 {
	r, _ := a.Dims()
	return rowSumsTo(make([]float64, r), a)
}

func rowSumsTo(out []float64, a *mat.Dense) []float64 {
	for i := range out {
		s := 0.0
		for _, v := range a.RawRowView(i) {
			s += v
		}
		out[i] = s
	}
	return out
}

func colSums(a *mat.Dense) []float64 {
	_, c := a.Dims()
	return colSumsTo(make([]float64, c), a)
}

func colSumsTo(out []float64, a *mat.Dense) []float64 {
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		for j, v := range a.RawRowView(i) {
			out[j] += v
		}
	}
	return out
}

// pairwiseGrad returns 2(diag(w)·x − A·z), the gradient of Σ A_nm r²_nm
// with respect to the rows of x, where w = rowSums(A) and r²_nm = ‖x_n − z_m‖².
func pairwiseGrad(t *ad.Tape, a mat.Matrix, w []float64, x, z *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	g := t.NewDenseNonZeroed(r, c)
	linalg.MulTo(g, a, z) // split over the cores by rows of g
	gd := g.RawMatrix().Data
	for i := 0; i < r; i++ {
		xi := x.RawRowView(i)
		gi := gd[i*c : (i+1)*c]
		for j := range gi {
			gi[j] = 2 * (w[i]*xi[j] - gi[j])
		}
	}
	return g
}

// constColumn records the N×1 node s·1 for a 1×1 node s (a stationary
// kernel's diagonal), in a tape-owned matrix.
func constColumn(t *ad.Tape, s *ad.Node, n int) *ad.Node {
	sv := s.Scalar()
	out := t.NewDenseNonZeroed(n, 1)
	d := out.RawMatrix().Data
	for i := range d {
		d[i] = sv
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		tot := 0.0
		for i := 0; i < n; i++ {
			tot += g.At(i, 0)
		}
		gs := t.NewDenseNonZeroed(1, 1)
		gs.Set(0, 0, tot)
		return []*mat.Dense{gs}
	}, s)
}

// scaledColumn records the N×1 node s·c for a 1×1 node s and constants c.
func scaledColumn(s *ad.Node, c []float64) *ad.Node {
	sv := s.Scalar()
	out := mat.NewDense(len(c), 1, nil)
	for i, ci := range c {
		out.Set(i, 0, sv*ci)
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		t := 0.0
		for i, ci := range c {
			t += g.At(i, 0) * ci
		}
		return []*mat.Dense{mat.NewDense(1, 1, []float64{t})}
	}, s)
}

// sumNodes records Σ_i ns[i] (all of one shape).
func sumNodes(ns []*ad.Node) *ad.Node {
	out := mat.DenseCopyOf(ns[0].Value())
	for _, n := range ns[1:] {
		out.Add(out, n.Value())
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gs := make([]*mat.Dense, len(ns))
		for i := range gs {
			gs[i] = g
		}
		return gs
	}, ns...)
}

// productNodes records the elementwise product Π_i ns[i].
func productNodes(ns []*ad.Node) *ad.Node {
	out := mat.DenseCopyOf(ns[0].Value())
	for _, n := range ns[1:] {
		out.MulElem(out, n.Value())
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gs := make([]*mat.Dense, len(ns))
		for i := range ns {
			if !ns[i].NeedsGrad() {
				continue
			}
			// Product of the others, not out/ns[i]: factors may be zero.
			p := mat.DenseCopyOf(g)
			for j, n := range ns {
				if j != i {
					p.MulElem(p, n.Value())
				}
			}
			gs[i] = p
		}
		return gs
	}, ns...)
}

// column records column d of x as an N×1 node.
func column(x *ad.Node, d int) *ad.Node {
	xv := x.Value()
	r, c := xv.Dims()
	out := mat.NewDense(r, 1, mat.Col(nil, d, xv))
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gx := mat.NewDense(r, c, nil)
		for i := 0; i < r; i++ {
			gx.Set(i, d, g.At(i, 0))
		}
		return []*mat.Dense{gx}
	}, x)
}

// broadcastRow records a 1×1 or 1×D parameter as 1×D.
func broadcastRow(n *ad.Node, dim int) *ad.Node {
	if _, c := n.Dims(); c == dim {
		return n
	}
	return ad.Custom(row(expand(n, dim)), func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{collapse(mat.Row(nil, 0, g), n)}
	}, n)
}

// dotAll is Σ a∘b, without allocating.
func dotAll(a, b *mat.Dense) float64 {
	r, _ := a.Dims()
	s := 0.0
	for i := 0; i < r; i++ {
		bi := b.RawRowView(i)
		for j, v := range a.RawRowView(i) {
			s += v * bi[j]
		}
	}
	return s
}
