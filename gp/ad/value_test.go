package ad

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/linalg"
)

// TestElementwiseValues compares forward values with the scalar formulas.
func TestElementwiseValues(t *testing.T) {
	a := mat.NewDense(2, 3, []float64{0.5, 1, 2, 3, 0.25, 40})
	b := mat.NewDense(2, 3, []float64{1.5, -1, 2, 0.5, 4, -3})
	s := 1.75
	tests := []struct {
		name string
		f    func(a, b, s *Node) *Node
		want func(x, y float64) float64
	}{
		{"Add", func(a, b, _ *Node) *Node { return Add(a, b) }, func(x, y float64) float64 { return x + y }},
		{"Sub", func(a, b, _ *Node) *Node { return Sub(a, b) }, func(x, y float64) float64 { return x - y }},
		{"Mul", func(a, b, _ *Node) *Node { return Mul(a, b) }, func(x, y float64) float64 { return x * y }},
		{"Div", func(a, b, _ *Node) *Node { return Div(a, b) }, func(x, y float64) float64 { return x / y }},
		{"Neg", func(a, _, _ *Node) *Node { return Neg(a) }, func(x, _ float64) float64 { return -x }},
		{"Scale", func(a, _, _ *Node) *Node { return Scale(3, a) }, func(x, _ float64) float64 { return 3 * x }},
		{"AddConst", func(a, _, _ *Node) *Node { return AddConst(a, -2) }, func(x, _ float64) float64 { return x - 2 }},
		{"MulScalar", func(a, _, s *Node) *Node { return MulScalar(a, s) }, func(x, _ float64) float64 { return x * s }},
		{"DivScalar", func(a, _, s *Node) *Node { return DivScalar(a, s) }, func(x, _ float64) float64 { return x / s }},
		{"AddScalar", func(a, _, s *Node) *Node { return AddScalar(a, s) }, func(x, _ float64) float64 { return x + s }},
		{"Exp", func(a, _, _ *Node) *Node { return Exp(a) }, func(x, _ float64) float64 { return math.Exp(x) }},
		{"Log", func(a, _, _ *Node) *Node { return Log(a) }, func(x, _ float64) float64 { return math.Log(x) }},
		{"Sqrt", func(a, _, _ *Node) *Node { return Sqrt(a) }, func(x, _ float64) float64 { return math.Sqrt(x) }},
		{"Square", func(a, _, _ *Node) *Node { return Square(a) }, func(x, _ float64) float64 { return x * x }},
		{"Softplus", func(a, _, _ *Node) *Node { return Softplus(a) }, func(x, _ float64) float64 { return math.Log(1 + math.Exp(x)) }},
		{"Sin", func(a, _, _ *Node) *Node { return Sin(a) }, func(x, _ float64) float64 { return math.Sin(x) }},
		{"Cos", func(a, _, _ *Node) *Node { return Cos(a) }, func(x, _ float64) float64 { return math.Cos(x) }},
		{"Pow", func(a, _, _ *Node) *Node { return Pow(a, 2.5) }, func(x, _ float64) float64 { return math.Pow(x, 2.5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tape := NewTape()
			got := tt.f(tape.Const(a), tape.Const(b), tape.Scalar(s)).Value()
			for i := 0; i < 2; i++ {
				for j := 0; j < 3; j++ {
					want := tt.want(a.At(i, j), b.At(i, j))
					if d := math.Abs(got.At(i, j) - want); d > 1e-14*math.Max(1, math.Abs(want)) {
						t.Errorf("(%d,%d) = %v, want %v", i, j, got.At(i, j), want)
					}
				}
			}
		})
	}
}

// TestSoftplusExtremes checks the stable formulation does not overflow and
// its gradient saturates correctly.
func TestSoftplusExtremes(t *testing.T) {
	tape := NewTape()
	x := tape.Var(mat.NewDense(1, 4, []float64{-800, -40, 40, 800}))
	y := Softplus(x)
	tape.Backward(Sum(y))
	wantV := []float64{0, math.Exp(-40), 40 + math.Exp(-40), 800}
	wantG := []float64{0, math.Exp(-40), 1, 1}
	for j := range wantV {
		if v := y.Value().At(0, j); math.Abs(v-wantV[j]) > 1e-15*math.Max(1, wantV[j]) {
			t.Errorf("softplus(%v) = %v, want %v", x.Value().At(0, j), v, wantV[j])
		}
		if g := x.Grad().At(0, j); math.Abs(g-wantG[j]) > 1e-15 {
			t.Errorf("softplus'(%v) = %v, want %v", x.Value().At(0, j), g, wantG[j])
		}
	}
}

// TestReduceShapeValues checks reductions and reshaping ops against direct
// loops.
func TestReduceShapeValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := draw(rng, n(3, 4))
	sqm := draw(rng, sq(3))
	tape := NewTape()
	an, sn := tape.Const(a), tape.Const(sqm)
	var sum, tr float64
	rs, cs := make([]float64, 3), make([]float64, 4)
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			sum += a.At(i, j)
			rs[i] += a.At(i, j)
			cs[j] += a.At(i, j)
		}
		tr += sqm.At(i, i)
	}
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-13 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("Sum", Sum(an).Scalar(), sum)
	check("Dot", Dot(an, an).Scalar(), mat.Norm(a, 2)*mat.Norm(a, 2))
	check("Trace", Trace(sn).Scalar(), tr)
	for i := range rs {
		check("RowSums", RowSums(an).Value().At(i, 0), rs[i])
		check("Diag", Diag(sn).Value().At(i, 0), sqm.At(i, i))
	}
	for j := range cs {
		check("ColSums", ColSums(an).Value().At(0, j), cs[j])
	}
	if !mat.Equal(T(an).Value(), a.T()) {
		t.Error("T mismatch")
	}
	hc := HCat(an, sn).Value()
	vc := VCat(an, an).Value()
	sl := Slice(an, 1, 3, 2, 4).Value()
	tl := Tril(an).Value()
	ad := AddDiag(sn, tape.Scalar(2)).Value()
	dm := DiagMat(RowSums(an)).Value()
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			check("HCat", hc.At(i, j), a.At(i, j))
			check("VCat", vc.At(i, j), a.At(i, j))
			check("VCat lower", vc.At(3+i, j), a.At(i, j))
			want := 0.0
			if j <= i {
				want = a.At(i, j)
			}
			check("Tril", tl.At(i, j), want)
		}
		for j := 0; j < 3; j++ {
			check("HCat right", hc.At(i, 4+j), sqm.At(i, j))
			want, wantD := sqm.At(i, j), 0.0
			if i == j {
				want += 2
				wantD = rs[i]
			}
			check("AddDiag", ad.At(i, j), want)
			check("DiagMat", dm.At(i, j), wantD)
		}
	}
	if !mat.Equal(sl, a.Slice(1, 3, 2, 4)) {
		t.Error("Slice mismatch")
	}
}

// TestMatMulValues checks the product family and the dsyrk path against
// gonum's general Mul on explicit copies.
func TestMatMulValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, b, c := draw(rng, n(7, 5)), draw(rng, n(5, 3)), draw(rng, n(7, 3))
	tape := NewTape()
	an, bn, cn := tape.Const(a), tape.Const(b), tape.Const(c)
	var want mat.Dense
	tests := []struct {
		name string
		got  *Node
		x, y mat.Matrix
	}{
		{"MatMul", MatMul(an, bn), a, b},
		{"MatMulTA", MatMulTA(an, cn), mat.DenseCopyOf(a.T()), c},
		{"MatMulTB", MatMulTB(an, T(bn)), a, b},
		{"MatMulTA(a,a)", MatMulTA(an, an), mat.DenseCopyOf(a.T()), a},
		{"MatMulTB(a,a)", MatMulTB(an, an), a, mat.DenseCopyOf(a.T())},
	}
	for _, tt := range tests {
		want.Reset()
		want.Mul(tt.x, tt.y)
		if !mat.EqualApprox(tt.got.Value(), &want, 1e-13) {
			t.Errorf("%s mismatch", tt.name)
		}
	}
	g := MatMulTB(an, an).Value()
	if !mat.Equal(g, g.T()) {
		t.Error("MatMulTB(a,a) not exactly symmetric")
	}
}

// TestSqDist checks distances against the direct formula and the clamping
// of round-off negatives for nearly equal rows far from the origin.
func TestSqDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x, z := draw(rng, n(6, 3)), draw(rng, n(4, 3))
	tape := NewTape()
	d := SqDist(tape.Const(x), tape.Const(z)).Value()
	for i := 0; i < 6; i++ {
		for j := 0; j < 4; j++ {
			var want float64
			for k := 0; k < 3; k++ {
				e := x.At(i, k) - z.At(j, k)
				want += e * e
			}
			if math.Abs(d.At(i, j)-want) > 1e-13 {
				t.Errorf("SqDist(%d,%d) = %v, want %v", i, j, d.At(i, j), want)
			}
		}
	}
	// Rows 1e4 from the origin, 1e-9 apart: the expansion loses everything
	// to cancellation but must never go negative.
	far := mat.NewDense(50, 2, nil)
	for i := 0; i < 50; i++ {
		far.Set(i, 0, 1e4+1e-9*float64(i))
		far.Set(i, 1, -1e4+rng.Float64()*1e-9)
	}
	farCopy := mat.DenseCopyOf(far)
	farNode := tape.Const(far)
	for _, dd := range []*mat.Dense{
		SqDist(tape.Const(far), tape.Const(farCopy)).Value(),
		SqDist(farNode, farNode).Value(),
	} {
		for i := 0; i < 50; i++ {
			for j := 0; j < 50; j++ {
				if v := dd.At(i, j); v < 0 || math.IsNaN(v) {
					t.Fatalf("SqDist entry (%d,%d) = %v", i, j, v)
				}
			}
		}
	}
	self := SqDist(farNode, tape.Const(far)).Value()
	for i := 0; i < 50; i++ {
		if self.At(i, i) != 0 {
			t.Errorf("SqDist(x,x) diagonal %d = %v, want 0", i, self.At(i, i))
		}
	}
}

// TestLinalgValues checks factor and solves through identities.
func TestLinalgValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, size := range []int{1, 3, 20} {
		a := draw(rng, pd(size))
		b := draw(rng, n(size, 4))
		tape := NewTape()
		an, bn := tape.Const(a), tape.Const(b)
		l := mustChol(an)
		var llt, lx mat.Dense
		llt.Mul(l.Value(), l.Value().T())
		if !mat.EqualApprox(&llt, a, 1e-12*float64(size)) {
			t.Errorf("n=%d: L Lᵀ ≠ A", size)
		}
		for i := 0; i < size; i++ {
			for j := i + 1; j < size; j++ {
				if l.Value().At(i, j) != 0 {
					t.Fatalf("n=%d: factor not lower triangular", size)
				}
			}
		}
		lx.Mul(l.Value(), SolveLower(l, bn).Value())
		if !mat.EqualApprox(&lx, b, 1e-12) {
			t.Errorf("n=%d: L·SolveLower(L,B) ≠ B", size)
		}
		lx.Reset()
		lx.Mul(l.Value().T(), SolveLowerT(l, bn).Value())
		if !mat.EqualApprox(&lx, b, 1e-12) {
			t.Errorf("n=%d: Lᵀ·SolveLowerT(L,B) ≠ B", size)
		}
		lx.Reset()
		lx.Mul(a, CholSolve(l, bn).Value())
		if !mat.EqualApprox(&lx, b, 1e-10) {
			t.Errorf("n=%d: A·CholSolve(L,B) ≠ B", size)
		}
		if got, want := LogDetChol(l).Scalar(), math.Log(mat.Det(a)); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("n=%d: LogDetChol = %v, want log det %v", size, got, want)
		}
	}
}

// TestGaussianLogDensity checks a composed objective, log N(y | 0, K) via
// Cholesky, against the naive formula with an explicit inverse and
// determinant, its K-gradient against ½(K⁻¹yyᵀK⁻¹ − K⁻¹), and all
// gradients against finite differences.
func TestGaussianLogDensity(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const size = 7
	k := draw(rng, pd(size))
	y := draw(rng, col(size))
	logDensity := func(kn, yn *Node) *Node {
		l := mustChol(kn)
		alpha := SolveLower(l, yn)
		quad := Scale(-0.5, Dot(alpha, alpha))
		return AddConst(Sub(quad, Scale(0.5, LogDetChol(l))), -0.5*size*math.Log(2*math.Pi))
	}
	tape := NewTape()
	kn, yn := tape.Var(k), tape.Var(y)
	out := logDensity(kn, yn)
	tape.Backward(out)

	var kinv mat.Dense
	if err := kinv.Inverse(k); err != nil {
		t.Fatal(err)
	}
	var a mat.Dense
	a.Mul(&kinv, y)
	want := -0.5*mat.Dot(y.ColView(0), a.ColView(0)) - 0.5*math.Log(mat.Det(k)) - 0.5*size*math.Log(2*math.Pi)
	if math.Abs(out.Scalar()-want) > 1e-12*math.Abs(want) {
		t.Errorf("log density = %.15g, naive %.15g", out.Scalar(), want)
	}
	var gk mat.Dense
	gk.Mul(&a, a.T())
	gk.Sub(&gk, &kinv)
	gk.Scale(0.5, &gk)
	if !mat.EqualApprox(kn.Grad(), &gk, 1e-12) {
		t.Errorf("dK mismatch:\n%v\nwant\n%v", mat.Formatted(kn.Grad()), mat.Formatted(&gk))
	}
	var gy mat.Dense
	gy.Scale(-1, &a)
	if !mat.EqualApprox(yn.Grad(), &gy, 1e-12) {
		t.Errorf("dy mismatch")
	}
	err := CheckGradient(func(_ *Tape, x []*Node) *Node { return logDensity(x[0], x[1]) }, []*mat.Dense{k, y}, 1e-6, 1e-7)
	if err != nil {
		t.Error(err)
	}
}

// TestCholeskyErrors checks that non-PD input returns a descriptive error.
func TestCholeskyErrors(t *testing.T) {
	notPD := mat.NewDense(3, 3, []float64{1, 2, 0, 2, 1, 0, 0, 0, 1}) // eigenvalue −1
	tape := NewTape()
	if _, err := Cholesky(tape.Var(notPD)); !errors.Is(err, linalg.ErrNotPositiveDefinite) {
		t.Errorf("Cholesky of indefinite matrix: err = %v", err)
	}
	_, _, err := CholeskyJitter(tape.Var(notPD), 5)
	if err == nil || !errors.Is(err, linalg.ErrNotPositiveDefinite) {
		t.Fatalf("CholeskyJitter of indefinite matrix: err = %v", err)
	}
	for _, s := range []string{"3×3", "jitter", "1e-08", "0.0001"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	nan := mat.NewDense(2, 2, []float64{1, 0, 0, math.NaN()})
	if _, err := Cholesky(tape.Var(nan)); err == nil {
		t.Error("Cholesky of NaN matrix succeeded")
	}
}

// TestCholeskyJitter checks that a singular PSD matrix gets jitter, that the
// jitter is the first of the escalating sequence that works, and that the
// gradient equals that of a plain Cholesky of the jittered matrix (jitter
// treated as constant).
func TestCholeskyJitter(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	x := draw(rng, n(6, 2))
	k := mat.NewDense(6, 6, nil)
	k.Mul(x, x.T()) // rank 2
	for i := 0; i < 6; i++ {
		k.Set(i, i, k.At(i, i)-1e-7) // slightly indefinite
	}
	tape := NewTape()
	kn := tape.Var(k)
	l, jitter, err := CholeskyJitter(kn, 8)
	if err != nil {
		t.Fatal(err)
	}
	mean := mat.Trace(k) / 6
	if jitter <= 0 {
		t.Fatalf("jitter = %v, want > 0", jitter)
	}
	if r := jitter / (1e-8 * mean); math.Abs(r-math.Round(r)) > 1e-9 || math.Abs(math.Log10(r)-math.Round(math.Log10(r))) > 1e-9 {
		t.Errorf("jitter %v is not 1e-8·mean·10^k (mean %v)", jitter, mean)
	}
	if _, err := linalg.Cholesky(addDiagDense(k, jitter/10)); err == nil && jitter > 1e-8*mean*1.5 {
		t.Errorf("a smaller jitter %v would have worked", jitter/10)
	}
	w := projection(6, 6)
	tape.Backward(Dot(l, tape.Const(w)))
	got := mat.DenseCopyOf(kn.Grad())

	t2 := NewTape()
	kn2 := t2.Var(k)
	l2 := mustChol(AddDiag(kn2, t2.Scalar(jitter)))
	t2.Backward(Dot(l2, t2.Const(w)))
	if !mat.EqualApprox(got, kn2.Grad(), 1e-12) {
		t.Error("CholeskyJitter gradient differs from Cholesky(K + jitter·I)")
	}
	if !mat.EqualApprox(l.Value(), l2.Value(), 0) {
		t.Error("CholeskyJitter factor differs from Cholesky(K + jitter·I)")
	}
}

func addDiagDense(a *mat.Dense, v float64) *mat.Dense {
	m := mat.DenseCopyOf(a)
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		m.Set(i, i, m.At(i, i)+v)
	}
	return m
}

// TestShapePanics checks that shape errors panic with the op name and both
// shapes.
func TestShapePanics(t *testing.T) {
	tape := NewTape()
	a, b, s := tape.Const(mat.NewDense(2, 3, nil)), tape.Const(mat.NewDense(3, 2, nil)), tape.Const(mat.NewDense(2, 2, nil))
	tests := []struct {
		name string
		f    func()
		want []string
	}{
		{"Add", func() { Add(a, b) }, []string{"ad.Add", "2×3", "3×2"}},
		{"Sub", func() { Sub(a, b) }, []string{"ad.Sub", "2×3", "3×2"}},
		{"Mul", func() { Mul(a, b) }, []string{"ad.Mul", "2×3", "3×2"}},
		{"Div", func() { Div(a, b) }, []string{"ad.Div", "2×3", "3×2"}},
		{"Dot", func() { Dot(a, b) }, []string{"ad.Dot", "2×3", "3×2"}},
		{"MulScalar", func() { MulScalar(a, b) }, []string{"ad.MulScalar", "3×2", "2×3"}},
		{"DivScalar", func() { DivScalar(a, b) }, []string{"ad.DivScalar", "3×2"}},
		{"AddScalar", func() { AddScalar(a, b) }, []string{"ad.AddScalar", "3×2"}},
		{"MulColVec", func() { MulColVec(a, b) }, []string{"ad.MulColVec", "2×3", "3×2"}},
		{"MulRowVec", func() { MulRowVec(a, b) }, []string{"ad.MulRowVec", "2×3", "3×2"}},
		{"MatMul", func() { MatMul(a, a) }, []string{"ad.MatMul", "2×3"}},
		{"MatMulTA", func() { MatMulTA(a, b) }, []string{"ad.MatMulTA", "2×3", "3×2"}},
		{"MatMulTB", func() { MatMulTB(a, b) }, []string{"ad.MatMulTB", "2×3", "3×2"}},
		{"HCat", func() { HCat(a, b) }, []string{"ad.HCat", "2×3", "3×2"}},
		{"VCat", func() { VCat(a, b) }, []string{"ad.VCat", "2×3", "3×2"}},
		{"Slice", func() { Slice(a, 0, 3, 0, 1) }, []string{"ad.Slice", "2×3"}},
		{"Trace", func() { Trace(a) }, []string{"ad.Trace", "2×3"}},
		{"Diag", func() { Diag(a) }, []string{"ad.Diag", "2×3"}},
		{"DiagMat", func() { DiagMat(a) }, []string{"ad.DiagMat", "2×3"}},
		{"AddDiag", func() { AddDiag(s, a) }, []string{"ad.AddDiag", "2×2", "2×3"}},
		{"Cholesky", func() { Cholesky(a) }, []string{"ad.Cholesky", "2×3"}},
		{"CholeskyJitter", func() { CholeskyJitter(a, 3) }, []string{"ad.CholeskyJitter", "2×3"}},
		{"SolveLower", func() { SolveLower(s, b) }, []string{"ad.SolveLower", "2×2", "3×2"}},
		{"SolveLowerT", func() { SolveLowerT(s, b) }, []string{"ad.SolveLowerT", "2×2", "3×2"}},
		{"CholSolve", func() { CholSolve(a, a) }, []string{"ad.CholSolve", "2×3"}},
		{"LogDetChol", func() { LogDetChol(a) }, []string{"ad.LogDetChol", "2×3"}},
		{"SqDist", func() { SqDist(a, b) }, []string{"ad.SqDist", "2×3", "3×2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, ok := r.(string)
				if !ok {
					t.Fatalf("panic value %v (%T), want a string", r, r)
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("panic %q does not mention %q", msg, w)
					}
				}
			}()
			tt.f()
		})
	}
}

// TestLargeAndStridedInputs covers the goroutine split of elementwise loops
// and inputs that are strided views of larger matrices.
func TestLargeAndStridedInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	big := draw(rng, n(400, 300))
	view := big.Slice(10, 390, 5, 295).(*mat.Dense) // 380×290, stride 300
	if view.RawMatrix().Stride == 290 {
		t.Fatal("test needs a strided view")
	}
	other := draw(rng, p(380, 290))
	tape := NewTape()
	x, y := tape.Var(view), tape.Const(other)
	tests := []struct {
		name string
		got  *Node
		want func(a, b float64) float64
	}{
		{"Exp", Exp(x), func(a, _ float64) float64 { return math.Exp(a) }},
		{"Div", Div(x, y), func(a, b float64) float64 { return a / b }},
		{"Mul", Mul(y, x), func(a, b float64) float64 { return a * b }},
	}
	for _, tt := range tests {
		for i := 0; i < 380; i++ {
			for j := 0; j < 290; j++ {
				if g, w := tt.got.Value().At(i, j), tt.want(view.At(i, j), other.At(i, j)); g != w {
					t.Fatalf("%s (%d,%d) = %v, want %v", tt.name, i, j, g, w)
				}
			}
		}
	}
	tape.Backward(Sum(Exp(x)))
	for i := 0; i < 380; i++ {
		for j := 0; j < 290; j++ {
			if g, w := x.Grad().At(i, j), math.Exp(view.At(i, j)); g != w {
				t.Fatalf("grad (%d,%d) = %v, want %v", i, j, g, w)
			}
		}
	}
}

// TestColSqNormsMatchesComposite: the fused ColSqNorms gives the bits of
// T(ColSums(Square(a))), value and gradient, on a strided input large
// enough for its column and row splits.
func TestColSqNormsMatchesComposite(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	big := draw(rng, n(400, 300))
	view := big.Slice(10, 390, 5, 295).(*mat.Dense) // 380×290, stride 300
	w := draw(rng, n(290, 1))
	run := func(f func(x *Node) *Node) (val, grad *mat.Dense) {
		tape := NewTape()
		x := tape.Var(view)
		v := f(x)
		tape.Backward(Sum(Mul(v, tape.Const(w))))
		return mat.DenseCopyOf(v.Value()), mat.DenseCopyOf(x.Grad())
	}
	v1, g1 := run(ColSqNorms)
	v2, g2 := run(func(x *Node) *Node { return T(ColSums(Square(x))) })
	if !mat.Equal(v1, v2) {
		t.Error("ColSqNorms value differs from T(ColSums(Square(a)))")
	}
	if !mat.Equal(g1, g2) {
		t.Error("ColSqNorms gradient differs from that of T(ColSums(Square(a)))")
	}
}

// TestSumSquaresMatchesComposite: the fused SumSquares gives the bits of
// Sum(Square(a)), value and gradient, on a strided input large enough for
// the gradient's row split.
func TestSumSquaresMatchesComposite(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	big := draw(rng, n(310, 270))
	view := big.Slice(3, 303, 2, 262).(*mat.Dense) // 300×260, stride 270
	run := func(f func(x *Node) *Node) (val float64, grad *mat.Dense) {
		tape := NewTape()
		x := tape.Var(view)
		v := f(x)
		tape.Backward(Scale(-1.7, v))
		return v.Value().At(0, 0), mat.DenseCopyOf(x.Grad())
	}
	v1, g1 := run(SumSquares)
	v2, g2 := run(func(x *Node) *Node { return Sum(Square(x)) })
	if v1 != v2 {
		t.Errorf("SumSquares = %v, Sum(Square(a)) = %v", v1, v2)
	}
	if !mat.Equal(g1, g2) {
		t.Error("SumSquares gradient differs from that of Sum(Square(a))")
	}
}

// TestTriangularOpsOnViews: the triangular solves and multiplies copy
// their (strided) right-hand side column block by column block; on a view
// wide enough to be split the result has the bits of the same operation on
// a contiguous copy, and matches gonum's dense reference (an LU solve: its
// residual ‖LᵀX − B‖ is about three times ours, so the two agree to
// 10⁻¹² relative, not to the last bit).
func TestTriangularOpsOnViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const m = 300
	l := draw(rng, n(m, m))
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			l.Set(i, j, 0)
		}
		l.Set(i, i, 4+math.Abs(l.At(i, i)))
	}
	big := draw(rng, n(m+20, 700))
	view := big.Slice(10, m+10, 7, 647).(*mat.Dense) // 300×640, stride 700
	tape := NewTape()
	ln, b, dense := tape.Const(l), tape.Const(view), tape.Const(mat.DenseCopyOf(view))
	var lt mat.Dense
	lt.CloneFrom(l.T())
	check := func(name string, op func(l, b *Node) *Node, want *mat.Dense) {
		t.Helper()
		got := op(ln, b).Value()
		if !mat.Equal(got, op(ln, dense).Value()) {
			t.Errorf("%s on a view differs from %[1]s on a contiguous copy", name)
		}
		if !mat.EqualApprox(got, want, 1e-11) {
			t.Errorf("%s differs from the dense reference", name)
		}
	}
	var lb, ltb mat.Dense
	lb.Solve(l, view)
	ltb.Solve(&lt, view)
	check("SolveLower", SolveLower, &lb)
	check("SolveLowerT", SolveLowerT, &ltb)
	var mul mat.Dense
	mul.Mul(l.T(), view)
	check("MulLowerT", MulLowerT, &mul)
}
