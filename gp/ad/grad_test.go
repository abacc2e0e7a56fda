package ad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gen describes how to draw one input matrix.
type gen struct {
	r, c int
	kind int // normal, positive, lowerFactor, spd
}

const (
	normal   = iota
	positive // uniform in [0.5, 2)
	lowerF   // lower triangular with diagonal in [1, 2): a well-conditioned Cholesky factor
	spd      // symmetric positive definite, condition number of order 10
)

func draw(rng *rand.Rand, g gen) *mat.Dense {
	m := mat.NewDense(g.r, g.c, nil)
	switch g.kind {
	case normal:
		for i := 0; i < g.r; i++ {
			for j := 0; j < g.c; j++ {
				m.Set(i, j, rng.NormFloat64())
			}
		}
	case positive:
		for i := 0; i < g.r; i++ {
			for j := 0; j < g.c; j++ {
				m.Set(i, j, 0.5+1.5*rng.Float64())
			}
		}
	case lowerF:
		for i := 0; i < g.r; i++ {
			for j := 0; j < i; j++ {
				m.Set(i, j, 0.5*rng.NormFloat64())
			}
			m.Set(i, i, 1+rng.Float64())
		}
	case spd:
		x := draw(rng, gen{r: g.r, c: g.r + 2})
		m.Mul(x, x.T())
		for i := 0; i < g.r; i++ {
			m.Set(i, i, m.At(i, i)+float64(g.r))
		}
	}
	return m
}

func n(r, c int) gen     { return gen{r, c, normal} }
func p(r, c int) gen     { return gen{r, c, positive} }
func lf(r int) gen       { return gen{r, r, lowerF} }
func pd(r int) gen       { return gen{r, r, spd} }
func sc() gen            { return gen{1, 1, normal} }
func psc() gen           { return gen{1, 1, positive} }
func sq(r int) gen       { return gen{r, r, normal} }
func col(r int) gen      { return gen{r, 1, normal} }
func row(c int) gen      { return gen{1, c, normal} }
func lg(g gen) []gen     { return []gen{g} }
func two(a, b gen) []gen { return []gen{a, b} }

type opCase struct {
	name   string
	f      func(xs []*Node) *Node
	inputs [][]gen // one entry per shape tried
}

// elementwise shapes: 1×1, tall, wide.
var ewShapes = [][2]int{{1, 1}, {4, 3}, {2, 5}}

func ew1(kind int) [][]gen {
	var out [][]gen
	for _, s := range ewShapes {
		out = append(out, lg(gen{s[0], s[1], kind}))
	}
	return out
}

func ew2(kb int) [][]gen {
	var out [][]gen
	for _, s := range ewShapes {
		out = append(out, two(n(s[0], s[1]), gen{s[0], s[1], kb}))
	}
	return out
}

func withScalar(kind int) [][]gen {
	var out [][]gen
	for _, s := range ewShapes {
		out = append(out, two(n(s[0], s[1]), gen{1, 1, kind}))
	}
	return out
}

func mustChol(a *Node) *Node {
	l, err := Cholesky(a)
	if err != nil {
		panic(err)
	}
	return l
}

var opCases = []opCase{
	{"Add", func(x []*Node) *Node { return Add(x[0], x[1]) }, ew2(normal)},
	{"Sub", func(x []*Node) *Node { return Sub(x[0], x[1]) }, ew2(normal)},
	{"Mul", func(x []*Node) *Node { return Mul(x[0], x[1]) }, ew2(normal)},
	{"Div", func(x []*Node) *Node { return Div(x[0], x[1]) }, ew2(positive)},
	{"Neg", func(x []*Node) *Node { return Neg(x[0]) }, ew1(normal)},
	{"Scale", func(x []*Node) *Node { return Scale(-2.5, x[0]) }, ew1(normal)},
	{"AddConst", func(x []*Node) *Node { return AddConst(x[0], 1.25) }, ew1(normal)},
	{"MulScalar", func(x []*Node) *Node { return MulScalar(x[0], x[1]) }, withScalar(normal)},
	{"DivScalar", func(x []*Node) *Node { return DivScalar(x[0], x[1]) }, withScalar(positive)},
	{"AddScalar", func(x []*Node) *Node { return AddScalar(x[0], x[1]) }, withScalar(normal)},
	{"MulColVec", func(x []*Node) *Node { return MulColVec(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(4, 3), col(4)), two(n(2, 5), col(2))}},
	{"MulRowVec", func(x []*Node) *Node { return MulRowVec(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(4, 3), row(3)), two(n(2, 5), row(5))}},
	{"Exp", func(x []*Node) *Node { return Exp(x[0]) }, ew1(normal)},
	{"Log", func(x []*Node) *Node { return Log(x[0]) }, ew1(positive)},
	{"Sqrt", func(x []*Node) *Node { return Sqrt(x[0]) }, ew1(positive)},
	{"Square", func(x []*Node) *Node { return Square(x[0]) }, ew1(normal)},
	{"Softplus", func(x []*Node) *Node { return Softplus(x[0]) }, ew1(normal)},
	{"Sin", func(x []*Node) *Node { return Sin(x[0]) }, ew1(normal)},
	{"Cos", func(x []*Node) *Node { return Cos(x[0]) }, ew1(normal)},
	{"Pow1.7", func(x []*Node) *Node { return Pow(x[0], 1.7) }, ew1(positive)},
	{"Pow-0.5", func(x []*Node) *Node { return Pow(x[0], -0.5) }, ew1(positive)},
	{"Sum", func(x []*Node) *Node { return Sum(x[0]) }, ew1(normal)},
	{"RowSums", func(x []*Node) *Node { return RowSums(x[0]) }, ew1(normal)},
	{"ColSums", func(x []*Node) *Node { return ColSums(x[0]) }, ew1(normal)},
	{"ColSqNorms", func(x []*Node) *Node { return ColSqNorms(x[0]) }, ew1(normal)},
	{"SumSquares", func(x []*Node) *Node { return SumSquares(x[0]) }, ew1(normal)},
	{"Dot", func(x []*Node) *Node { return Dot(x[0], x[1]) }, ew2(normal)},
	{"T", func(x []*Node) *Node { return T(x[0]) }, ew1(normal)},
	{"Tril", func(x []*Node) *Node { return Tril(x[0]) }, [][]gen{lg(sc()), lg(sq(4)), lg(n(4, 2)), lg(n(2, 5))}},
	{"Trace", func(x []*Node) *Node { return Trace(x[0]) }, [][]gen{lg(sc()), lg(sq(4))}},
	{"Diag", func(x []*Node) *Node { return Diag(x[0]) }, [][]gen{lg(sc()), lg(sq(4))}},
	{"DiagMat", func(x []*Node) *Node { return DiagMat(x[0]) }, [][]gen{lg(sc()), lg(col(4))}},
	{"AddDiag", func(x []*Node) *Node { return AddDiag(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(sq(4), col(4)), two(sq(3), sc())}},
	{"HCat", func(x []*Node) *Node { return HCat(x...) },
		[][]gen{two(sc(), sc()), {n(3, 2), n(3, 1), n(3, 4)}}},
	{"VCat", func(x []*Node) *Node { return VCat(x...) },
		[][]gen{two(sc(), sc()), {n(2, 3), n(1, 3), n(4, 3)}}},
	{"Slice", func(x []*Node) *Node { r, c := x[0].Dims(); return Slice(x[0], r/2, r, 0, (c+1)/2) },
		[][]gen{lg(sc()), lg(n(4, 3)), lg(n(2, 5))}},
	{"MatMul", func(x []*Node) *Node { return MatMul(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(4, 3), n(3, 2)), two(n(1, 5), n(5, 1)), two(n(3, 1), n(1, 4))}},
	{"MatMulTA", func(x []*Node) *Node { return MatMulTA(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(3, 4), n(3, 2)), two(n(5, 1), n(5, 2))}},
	{"MatMulTB", func(x []*Node) *Node { return MatMulTB(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(4, 3), n(2, 3)), two(n(1, 5), n(3, 5))}},
	{"MatMulTA(a,a)", func(x []*Node) *Node { return MatMulTA(x[0], x[0]) }, [][]gen{lg(sc()), lg(n(4, 3)), lg(n(2, 5))}},
	{"MatMulTB(a,a)", func(x []*Node) *Node { return MatMulTB(x[0], x[0]) }, [][]gen{lg(sc()), lg(n(4, 3)), lg(n(2, 5))}},
	{"SqDist", func(x []*Node) *Node { return SqDist(x[0], x[1]) },
		[][]gen{two(sc(), sc()), two(n(5, 3), n(4, 3)), two(n(1, 2), n(6, 2))}},
	{"SqDist(x,x)", func(x []*Node) *Node { return SqDist(x[0], x[0]) }, [][]gen{lg(n(5, 3)), lg(n(3, 1))}},
	{"Cholesky", func(x []*Node) *Node { return mustChol(x[0]) }, [][]gen{lg(psc()), lg(pd(2)), lg(pd(6))}},
	{"CholeskyJitter", func(x []*Node) *Node {
		l, _, err := CholeskyJitter(x[0], 3)
		if err != nil {
			panic(err)
		}
		return l
	}, [][]gen{lg(pd(5))}},
	{"SolveLower", func(x []*Node) *Node { return SolveLower(x[0], x[1]) },
		[][]gen{two(lf(1), sc()), two(lf(4), n(4, 3)), two(lf(5), col(5))}},
	{"SolveLowerT", func(x []*Node) *Node { return SolveLowerT(x[0], x[1]) },
		[][]gen{two(lf(1), sc()), two(lf(4), n(4, 3)), two(lf(5), col(5))}},
	{"CholSolve", func(x []*Node) *Node { return CholSolve(x[0], x[1]) },
		[][]gen{two(lf(1), sc()), two(lf(4), n(4, 3)), two(lf(5), col(5))}},
	{"MulLowerT", func(x []*Node) *Node { return MulLowerT(x[0], x[1]) },
		[][]gen{two(lf(1), sc()), two(lf(4), n(4, 3)), two(n(5, 5), col(5))}},
	{"LogDetChol", func(x []*Node) *Node { return LogDetChol(x[0]) }, [][]gen{lg(lf(1)), lg(lf(5))}},
}

// TestOpGradients checks every op against central finite differences on
// seeded random inputs of several shapes, through CheckGradient's random
// projection Σ W∘op(x).
func TestOpGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range opCases {
		for _, shapes := range tc.inputs {
			ins := make([]*mat.Dense, len(shapes))
			desc := ""
			for k, g := range shapes {
				ins[k] = draw(rng, g)
				desc += fmt.Sprintf("_%dx%d", g.r, g.c)
			}
			t.Run(tc.name+desc, func(t *testing.T) {
				err := CheckGradient(func(_ *Tape, xs []*Node) *Node { return tc.f(xs) }, ins, 1e-6, 1e-7)
				if err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestConstantsRecordNoBackward checks that an op on constants carries no
// backward work, and that with one constant input the variable's gradient is
// the same as when all inputs are variables.
func TestConstantsRecordNoBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range opCases {
		shapes := tc.inputs[len(tc.inputs)-1]
		ins := make([]*mat.Dense, len(shapes))
		for k, g := range shapes {
			ins[k] = draw(rng, g)
		}
		t.Run(tc.name, func(t *testing.T) {
			tape := NewTape()
			xs := make([]*Node, len(ins))
			for k, m := range ins {
				xs[k] = tape.Const(m)
			}
			out := tc.f(xs)
			if out.NeedsGrad() || out.backward != nil || out.inputs != nil {
				t.Fatalf("op on constants records backward work")
			}
			if len(ins) < 2 {
				return
			}
			// All variables.
			all := NewTape()
			for k, m := range ins {
				xs[k] = all.Var(m)
			}
			o := tc.f(xs)
			all.Backward(Dot(o, all.Const(projection(o.Dims()))))
			want := mat.DenseCopyOf(xs[0].Grad())
			// Only the first is a variable.
			mixed := NewTape()
			for k, m := range ins {
				if k == 0 {
					xs[k] = mixed.Var(m)
				} else {
					xs[k] = mixed.Const(m)
				}
			}
			o = tc.f(xs)
			mixed.Backward(Dot(o, mixed.Const(projection(o.Dims()))))
			if !mat.EqualApprox(xs[0].Grad(), want, 1e-12) {
				t.Errorf("gradient with constant partners differs:\n%v\nwant\n%v", mat.Formatted(xs[0].Grad()), mat.Formatted(want))
			}
			for _, x := range xs[1:] {
				if x.NeedsGrad() || mat.Norm(x.Grad(), 1) != 0 {
					t.Errorf("constant input received a gradient")
				}
			}
		})
	}
}

// TestGradientAccumulates checks nodes used more than once.
func TestGradientAccumulates(t *testing.T) {
	x0 := mat.NewDense(2, 2, []float64{1, -2, 3, 0.5})
	tests := []struct {
		name string
		f    func(x *Node) *Node
		want func(i, j int) float64 // d out / d x_ij
	}{
		{"Mul(x,x)", func(x *Node) *Node { return Sum(Mul(x, x)) }, func(i, j int) float64 { return 2 * x0.At(i, j) }},
		{"Add(x,x)", func(x *Node) *Node { return Sum(Add(x, x)) }, func(i, j int) float64 { return 2 }},
		{"Sum(x)+Sum(3x)", func(x *Node) *Node { return Add(Sum(x), Sum(Scale(3, x))) }, func(i, j int) float64 { return 4 }},
		{"Dot(x,x)", func(x *Node) *Node { return Dot(x, x) }, func(i, j int) float64 { return 2 * x0.At(i, j) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tape := NewTape()
			x := tape.Var(x0)
			tape.Backward(tt.f(x))
			for i := 0; i < 2; i++ {
				for j := 0; j < 2; j++ {
					if g := x.Grad().At(i, j); g != tt.want(i, j) {
						t.Errorf("grad(%d,%d) = %v, want %v", i, j, g, tt.want(i, j))
					}
				}
			}
		})
	}
}

// TestCheckGradientDetectsError makes sure the checker is able to fail: an
// op with a deliberately wrong backward pass must be reported.
func TestCheckGradientDetectsError(t *testing.T) {
	wrongSquare := func(a *Node) *Node {
		v := unary(a.tape, a.val, func(x float64) float64 { return x * x })
		return Custom(v, func(g *mat.Dense) []*mat.Dense {
			return []*mat.Dense{binary(a.tape, g, a.val, func(x, y float64) float64 { return 2.01 * x * y })}
		}, a)
	}
	in := []*mat.Dense{mat.NewDense(2, 3, []float64{1, 2, 3, -1, -2, 4})}
	err := CheckGradient(func(_ *Tape, x []*Node) *Node { return wrongSquare(x[0]) }, in, 0, 0)
	if err == nil {
		t.Fatal("CheckGradient accepted a wrong gradient")
	}
	t.Log(err)
	if err := CheckGradient(func(_ *Tape, x []*Node) *Node { return Square(x[0]) }, in, 0, 0); err != nil {
		t.Errorf("CheckGradient rejected a correct gradient: %v", err)
	}
	if in[0].At(0, 0) != 1 || in[0].At(1, 2) != 4 {
		t.Error("CheckGradient modified its inputs")
	}
}

// TestCheckGradientRejectsNonFinite checks that a NaN objective is an error,
// not a silent pass.
func TestCheckGradientRejectsNonFinite(t *testing.T) {
	in := []*mat.Dense{mat.NewDense(1, 2, []float64{-1, 2})}
	err := CheckGradient(func(_ *Tape, x []*Node) *Node { return Sum(Log(x[0])) }, in, 0, 0)
	if err == nil {
		t.Fatal("CheckGradient accepted a NaN objective")
	}
}

// TestLargeDirectionalDerivatives checks ops at sizes where the blocked
// Cholesky, its parallel adjoint and the parallel triangular solves take over, too large for a
// full finite-difference gradient: ⟨∇f, V⟩ must match the central
// difference of f along a random direction V.
func TestLargeDirectionalDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	const size = 200
	tests := []struct {
		name string
		f    func(x []*Node) *Node
		in   []gen
	}{
		{"Cholesky", func(x []*Node) *Node { return mustChol(x[0]) }, lg(pd(size))},
		// Blocked forward factorisation (n ≥ 256) and an adjoint whose panels
		// split into several blocks, with a partial last panel.
		{"Cholesky/300", func(x []*Node) *Node { return mustChol(x[0]) }, lg(pd(300))},
		{"CholSolve", func(x []*Node) *Node { return CholSolve(x[0], x[1]) }, two(lf(size), n(size, 150))},
		{"SolveLowerT", func(x []*Node) *Node { return SolveLowerT(x[0], x[1]) }, two(lf(size), n(size, 150))},
		{"MulLowerT", func(x []*Node) *Node { return MulLowerT(x[0], x[1]) }, two(lf(size), n(size, 150))},
		{"SqDist", func(x []*Node) *Node { return SqDist(x[0], x[1]) }, two(n(300, 4), n(250, 4))},
		{"Exp·MatMulTB", func(x []*Node) *Node { return Exp(Scale(0.1, MatMulTB(x[0], x[1]))) }, two(n(300, 5), n(260, 5))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins := make([]*mat.Dense, len(tt.in))
			dirs := make([]*mat.Dense, len(tt.in))
			for k, g := range tt.in {
				ins[k] = draw(rng, g)
				dirs[k] = draw(rng, n(g.r, g.c))
				if g.kind == lowerF {
					tril(dirs[k])
				}
			}
			eval := func(h float64, vars bool) (float64, []*Node) {
				tape := NewTape()
				xs := make([]*Node, len(ins))
				for k := range ins {
					m := mat.DenseCopyOf(ins[k])
					m.Add(m, scaled(h, dirs[k]))
					if vars {
						xs[k] = tape.Var(m)
					} else {
						xs[k] = tape.Const(m)
					}
				}
				o := tt.f(xs)
				out := Dot(o, tape.Const(projection(o.Dims())))
				if vars {
					tape.Backward(out)
				}
				return out.Scalar(), xs
			}
			_, xs := eval(0, true)
			var analytic float64
			for k, x := range xs {
				analytic += mat.Dot(vecOf(x.Grad()), vecOf(dirs[k]))
			}
			const h = 1e-5
			fp, _ := eval(h, false)
			fm, _ := eval(-h, false)
			numeric := (fp - fm) / (2 * h)
			if d := math.Abs(analytic-numeric) / math.Max(1, math.Abs(numeric)); d > 1e-6 {
				t.Errorf("directional derivative %.12g, finite difference %.12g (rel %.2g)", analytic, numeric, d)
			}
		})
	}
}

func scaled(h float64, m *mat.Dense) *mat.Dense {
	var s mat.Dense
	s.Scale(h, m)
	return &s
}

func vecOf(m *mat.Dense) *mat.VecDense {
	r, c := m.Dims()
	return mat.NewVecDense(r*c, mat.DenseCopyOf(m).RawMatrix().Data)
}
