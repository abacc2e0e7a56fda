package ad

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Add returns a + b.
func Add(a, b *Node) *Node {
	sameShape("Add", a, b)
	v := binary(a.tape, a.val, b.val, func(x, y float64) float64 { return x + y })
	return Custom(v, func(g *mat.Dense) []*mat.Dense { return []*mat.Dense{g, g} }, a, b)
}

// Sub returns a − b.
func Sub(a, b *Node) *Node {
	sameShape("Sub", a, b)
	v := binary(a.tape, a.val, b.val, func(x, y float64) float64 { return x - y })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var gb *mat.Dense
		if b.needsGrad {
			gb = unary(a.tape, g, func(x float64) float64 { return -x })
		}
		return []*mat.Dense{g, gb}
	}, a, b)
}

// Mul returns the elementwise product a ∘ b.
func Mul(a, b *Node) *Node {
	sameShape("Mul", a, b)
	v := binary(a.tape, a.val, b.val, func(x, y float64) float64 { return x * y })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = binary(a.tape, g, b.val, func(x, y float64) float64 { return x * y })
		}
		if b.needsGrad {
			gb = binary(a.tape, g, a.val, func(x, y float64) float64 { return x * y })
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// Div returns the elementwise quotient a / b.
func Div(a, b *Node) *Node {
	sameShape("Div", a, b)
	v := binary(a.tape, a.val, b.val, func(x, y float64) float64 { return x / y })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var ga, gb *mat.Dense
		if a.needsGrad {
			ga = binary(a.tape, g, b.val, func(x, y float64) float64 { return x / y })
		}
		if b.needsGrad {
			// d(a/b)/db = −(a/b)/b.
			gb = ternary(a.tape, g, v, b.val, func(x, q, y float64) float64 { return -x * q / y })
		}
		return []*mat.Dense{ga, gb}
	}, a, b)
}

// Neg returns −a.
func Neg(a *Node) *Node { return Scale(-1, a) }

// Scale returns c·a for a constant c.
func Scale(c float64, a *Node) *Node {
	v := unary(a.tape, a.val, func(x float64) float64 { return c * x })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{unary(a.tape, g, func(x float64) float64 { return c * x })}
	}, a)
}

// AddConst returns a + c elementwise for a constant c.
func AddConst(a *Node, c float64) *Node {
	v := unary(a.tape, a.val, func(x float64) float64 { return x + c })
	return Custom(v, func(g *mat.Dense) []*mat.Dense { return []*mat.Dense{g} }, a)
}

// MulScalar returns s·a for a 1×1 node s.
func MulScalar(a, s *Node) *Node {
	mustScalar("MulScalar", a, s)
	sv := s.Scalar()
	v := unary(a.tape, a.val, func(x float64) float64 { return sv * x })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var ga, gs *mat.Dense
		if a.needsGrad {
			ga = unary(a.tape, g, func(x float64) float64 { return sv * x })
		}
		if s.needsGrad {
			gs = a.tape.scalar(dotOf(g, a.val))
		}
		return []*mat.Dense{ga, gs}
	}, a, s)
}

// DivScalar returns a / s for a 1×1 node s.
func DivScalar(a, s *Node) *Node {
	mustScalar("DivScalar", a, s)
	sv := s.Scalar()
	v := unary(a.tape, a.val, func(x float64) float64 { return x / sv })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var ga, gs *mat.Dense
		if a.needsGrad {
			ga = unary(a.tape, g, func(x float64) float64 { return x / sv })
		}
		if s.needsGrad {
			gs = a.tape.scalar(-dotOf(g, v) / sv)
		}
		return []*mat.Dense{ga, gs}
	}, a, s)
}

// AddScalar returns a + s elementwise for a 1×1 node s.
func AddScalar(a, s *Node) *Node {
	mustScalar("AddScalar", a, s)
	sv := s.Scalar()
	v := unary(a.tape, a.val, func(x float64) float64 { return x + sv })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		var gs *mat.Dense
		if s.needsGrad {
			gs = a.tape.scalar(sumOf(g))
		}
		return []*mat.Dense{g, gs}
	}, a, s)
}

// MulColVec returns a with row i multiplied by v_i, for v of shape R×1.
func MulColVec(a, v *Node) *Node {
	r, _ := a.Dims()
	if vr, vc := v.Dims(); vr != r || vc != 1 {
		panic(fmt.Sprintf("ad.MulColVec: matrix %s and vector %s do not match; want %d×1", shapeOf(a), shapeOf(v), r))
	}
	vd := a.tape.vectorOf(v.val)
	out := scaleRows(a.tape, a.val, vd)
	return Custom(out, func(g *mat.Dense) []*mat.Dense {
		var ga, gv *mat.Dense
		if a.needsGrad {
			ga = scaleRows(a.tape, g, vd)
		}
		if v.needsGrad {
			gv = a.tape.NewDenseNonZeroed(r, 1)
			n, grow := rowsOf(g)
			_, arow := rowsOf(a.val)
			for i := 0; i < n; i++ {
				var s float64
				ai := arow(i)
				for j, x := range grow(i) {
					s += x * ai[j]
				}
				gv.Set(i, 0, s)
			}
		}
		return []*mat.Dense{ga, gv}
	}, a, v)
}

// MulRowVec returns a with column j multiplied by v_j, for v of shape 1×C.
func MulRowVec(a, v *Node) *Node {
	_, c := a.Dims()
	if vr, vc := v.Dims(); vr != 1 || vc != c {
		panic(fmt.Sprintf("ad.MulRowVec: matrix %s and vector %s do not match; want 1×%d", shapeOf(a), shapeOf(v), c))
	}
	vd := a.tape.vectorOf(v.val)
	out := scaleCols(a.tape, a.val, vd)
	return Custom(out, func(g *mat.Dense) []*mat.Dense {
		var ga, gv *mat.Dense
		if a.needsGrad {
			ga = scaleCols(a.tape, g, vd)
		}
		if v.needsGrad {
			gv = a.tape.NewDense(1, c)
			s := gv.RawMatrix().Data
			n, grow := rowsOf(g)
			_, arow := rowsOf(a.val)
			for i := 0; i < n; i++ {
				ai := arow(i)
				for j, x := range grow(i) {
					s[j] += x * ai[j]
				}
			}
		}
		return []*mat.Dense{ga, gv}
	}, a, v)
}

// vectorOf returns the entries of the row or column vector v, copied onto
// the tape's arena (a chunked loop that resets its tape reuses them).
func (t *Tape) vectorOf(v *mat.Dense) []float64 {
	r, c := v.Dims()
	out := t.NewDenseNonZeroed(r, c).RawMatrix().Data
	if c == 1 {
		return mat.Col(out, 0, v)
	}
	return mat.Row(out, 0, v)
}

func scaleRows(t *Tape, a *mat.Dense, v []float64) *mat.Dense {
	r, c := a.Dims()
	out := t.NewDenseNonZeroed(r, c)
	od := out.RawMatrix().Data
	_, row := rowsOf(a)
	for i := 0; i < r; i++ {
		o := od[i*c : (i+1)*c]
		for j, x := range row(i) {
			o[j] = x * v[i]
		}
	}
	return out
}

func scaleCols(t *Tape, a *mat.Dense, v []float64) *mat.Dense {
	r, c := a.Dims()
	out := t.NewDenseNonZeroed(r, c)
	od := out.RawMatrix().Data
	_, row := rowsOf(a)
	for i := 0; i < r; i++ {
		o := od[i*c : (i+1)*c]
		for j, x := range row(i) {
			o[j] = x * v[j]
		}
	}
	return out
}

// Exp returns exp(a) elementwise.
func Exp(a *Node) *Node {
	v := unary(a.tape, a.val, math.Exp)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, v, func(x, y float64) float64 { return x * y })}
	}, a)
}

// Log returns the natural logarithm of a elementwise.
func Log(a *Node) *Node {
	v := unary(a.tape, a.val, math.Log)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return x / y })}
	}, a)
}

// Sqrt returns √a elementwise.
func Sqrt(a *Node) *Node {
	v := unary(a.tape, a.val, math.Sqrt)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, v, func(x, y float64) float64 { return x / (2 * y) })}
	}, a)
}

// Square returns a² elementwise.
func Square(a *Node) *Node {
	v := unary(a.tape, a.val, func(x float64) float64 { return x * x })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return 2 * x * y })}
	}, a)
}

// Softplus returns log(1 + exp(a)) elementwise, computed without overflow.
func Softplus(a *Node) *Node {
	v := unary(a.tape, a.val, softplus)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return x * sigmoid(y) })}
	}, a)
}

func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Sin returns sin(a) elementwise.
func Sin(a *Node) *Node {
	v := unary(a.tape, a.val, math.Sin)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return x * math.Cos(y) })}
	}, a)
}

// Cos returns cos(a) elementwise.
func Cos(a *Node) *Node {
	v := unary(a.tape, a.val, math.Cos)
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return -x * math.Sin(y) })}
	}, a)
}

// Pow returns a^p elementwise for a constant exponent p.
func Pow(a *Node, p float64) *Node {
	v := unary(a.tape, a.val, func(x float64) float64 { return math.Pow(x, p) })
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return x * p * math.Pow(y, p-1) })}
	}, a)
}
