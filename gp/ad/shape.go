package ad

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// T returns the transpose of a.
func T(a *Node) *Node {
	return Custom(a.tape.copyOf(a.val.T()), func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{a.tape.copyOf(g.T())}
	}, a)
}

func shapesOf(ns []*Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = shapeOf(n)
	}
	return strings.Join(s, ", ")
}

// HCat concatenates nodes with equal row counts side by side.
func HCat(a ...*Node) *Node {
	if len(a) == 0 {
		panic("ad.HCat: no inputs")
	}
	r, _ := a[0].Dims()
	offs := make([]int, len(a)+1)
	for k, n := range a {
		nr, nc := n.Dims()
		if nr != r {
			panic(fmt.Sprintf("ad.HCat: row counts differ: shapes %s", shapesOf(a)))
		}
		offs[k+1] = offs[k] + nc
	}
	v := a[0].tape.NewDenseNonZeroed(r, offs[len(a)])
	for k, n := range a {
		v.Slice(0, r, offs[k], offs[k+1]).(*mat.Dense).Copy(n.val)
	}
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		gs := make([]*mat.Dense, len(a))
		for k, n := range a {
			if n.needsGrad {
				gs[k] = n.tape.copyOf(g.Slice(0, r, offs[k], offs[k+1]))
			}
		}
		return gs
	}, a...)
}

// VCat stacks nodes with equal column counts on top of each other.
func VCat(a ...*Node) *Node {
	if len(a) == 0 {
		panic("ad.VCat: no inputs")
	}
	_, c := a[0].Dims()
	offs := make([]int, len(a)+1)
	for k, n := range a {
		nr, nc := n.Dims()
		if nc != c {
			panic(fmt.Sprintf("ad.VCat: column counts differ: shapes %s", shapesOf(a)))
		}
		offs[k+1] = offs[k] + nr
	}
	v := a[0].tape.NewDenseNonZeroed(offs[len(a)], c)
	for k, n := range a {
		v.Slice(offs[k], offs[k+1], 0, c).(*mat.Dense).Copy(n.val)
	}
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		gs := make([]*mat.Dense, len(a))
		for k, n := range a {
			if n.needsGrad {
				gs[k] = n.tape.copyOf(g.Slice(offs[k], offs[k+1], 0, c))
			}
		}
		return gs
	}, a...)
}

// Slice returns a copy of rows r0..r1-1 and columns c0..c1-1 of a.
func Slice(a *Node, r0, r1, c0, c1 int) *Node {
	r, c := a.Dims()
	if r0 < 0 || r1 > r || r0 >= r1 || c0 < 0 || c1 > c || c0 >= c1 {
		panic(fmt.Sprintf("ad.Slice: rows [%d,%d) columns [%d,%d) out of range or empty for a %s matrix", r0, r1, c0, c1, shapeOf(a)))
	}
	v := a.tape.copyOf(a.val.Slice(r0, r1, c0, c1))
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		ga := a.tape.NewDense(r, c)
		ga.Slice(r0, r1, c0, c1).(*mat.Dense).Copy(g)
		return []*mat.Dense{ga}
	}, a)
}

// DiagMat returns the R×R diagonal matrix with the R×1 column v on its
// diagonal.
func DiagMat(v *Node) *Node {
	n, c := v.Dims()
	if c != 1 {
		panic(fmt.Sprintf("ad.DiagMat: vector is %s, want a column (R×1)", shapeOf(v)))
	}
	m := v.tape.NewDense(n, n)
	for i := 0; i < n; i++ {
		m.Set(i, i, v.val.At(i, 0))
	}
	return Custom(m, func(g *mat.Dense) []*mat.Dense {
		gv := v.tape.NewDenseNonZeroed(n, 1)
		for i := 0; i < n; i++ {
			gv.Set(i, 0, g.At(i, i))
		}
		return []*mat.Dense{gv}
	}, v)
}

// AddDiag returns a + diag(v) for a square a and v either R×1 or 1×1 (the
// same value added to every diagonal entry).
func AddDiag(a, v *Node) *Node {
	n := mustSquare("AddDiag", a)
	vr, vc := v.Dims()
	broadcast := vr == 1 && vc == 1
	if !broadcast && (vr != n || vc != 1) {
		panic(fmt.Sprintf("ad.AddDiag: matrix %s and diagonal %s do not match; want %d×1 or 1×1", shapeOf(a), shapeOf(v), n))
	}
	m := a.tape.copyOf(a.val)
	for i := 0; i < n; i++ {
		if broadcast {
			m.Set(i, i, m.At(i, i)+v.val.At(0, 0))
		} else {
			m.Set(i, i, m.At(i, i)+v.val.At(i, 0))
		}
	}
	return Custom(m, func(g *mat.Dense) []*mat.Dense {
		var gv *mat.Dense
		if v.needsGrad {
			if broadcast {
				var s float64
				for i := 0; i < n; i++ {
					s += g.At(i, i)
				}
				gv = a.tape.scalar(s)
			} else {
				gv = a.tape.NewDenseNonZeroed(n, 1)
				for i := 0; i < n; i++ {
					gv.Set(i, 0, g.At(i, i))
				}
			}
		}
		return []*mat.Dense{g, gv}
	}, a, v)
}

// Tril returns the lower triangle of a, diagonal included, with zeros above.
// a need not be square.
func Tril(a *Node) *Node {
	return Custom(tril(a.tape.copyOf(a.val)), func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{tril(a.tape.copyOf(g))}
	}, a)
}
