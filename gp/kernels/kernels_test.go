package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// weighted records Σ w∘n as a 1×1 node.
func weighted(n *ad.Node, w *mat.Dense) *ad.Node {
	v := mat.NewDense(1, 1, []float64{mat.Sum(elemProd(n.Value(), w))})
	return ad.Custom(v, func(g *mat.Dense) []*mat.Dense {
		o := mat.DenseCopyOf(w)
		o.Scale(g.At(0, 0), o)
		return []*mat.Dense{o}
	}, n)
}

func mustNew(t testing.TB, name string, dim int, opts Options) Kernel {
	t.Helper()
	k, err := New(name, dim, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func declared(t testing.TB, k Kernel) *param.Set {
	t.Helper()
	s := param.NewSet()
	if err := k.Declare(s, "kern."); err != nil {
		t.Fatal(err)
	}
	return s
}

// kernelCases covers every kernel with non-default hyperparameters.
func kernelCases() []struct {
	name string
	dim  int
	opts Options
} {
	return []struct {
		name string
		dim  int
		opts Options
	}{
		{"se", 2, Options{Variance: 1.3, Lengthscales: []float64{0.8}}},
		{"se", 3, Options{Variance: 0.7, Lengthscales: []float64{0.6, 1.1, 1.7}}},
		{"matern12", 2, Options{Variance: 1.2, Lengthscales: []float64{0.9, 1.4}}},
		{"matern32", 3, Options{Variance: 0.9, Lengthscales: []float64{0.7, 1.2, 1.9}}},
		{"matern52", 2, Options{Variance: 1.4, Lengthscales: []float64{0.75}, ARD: true}},
		{"matern52", 1, Options{Variance: 1.1, Lengthscales: []float64{0.5}}},
		{"periodic", 1, Options{Variance: 1.2, Lengthscales: []float64{0.7}, Period: 1.3}},
		{"periodic", 2, Options{Variance: 0.8, Lengthscales: []float64{0.6, 0.9}, Period: 0.9, ARD: true}},
		{"arccos0", 2, Options{Variance: 1.1, WeightVariances: []float64{0.8, 1.3}, BiasVariance: 0.6}},
		{"arccos1", 3, Options{Variance: 0.9, WeightVariances: []float64{1.2}, BiasVariance: 1.4}},
		{"arccos2", 2, Options{Variance: 1.2, WeightVariances: []float64{0.7}, ARD: true, BiasVariance: 0.9}},
		{"sphere-matern32", 2, Options{Variance: 1.1, Lengthscales: []float64{0.8}, WeightVariances: []float64{0.7, 1.3}, BiasVariance: 0.9, Truncation: 12}},
		{"sphere-se", 1, Options{Variance: 0.8, Lengthscales: []float64{0.6}, WeightVariances: []float64{1.2}, BiasVariance: 1.1, BiasColumns: 2, Truncation: 10}},
		{"chordal-matern52", 2, Options{Variance: 1.2, Lengthscales: []float64{0.7}, WeightVariances: []float64{0.9}, ARD: true, BiasVariance: 0.8}},
		{"chordal-matern12", 3, Options{Variance: 0.9, Lengthscales: []float64{1.3}, WeightVariances: []float64{1.1}, BiasVariance: 1.2}},
		{"chordal-se", 2, Options{Variance: 1.0, Lengthscales: []float64{0.9}, WeightVariances: []float64{0.6, 1.4}, BiasVariance: 0.7}},
		{"sum(se,periodic)", 2, Options{Variance: 0.9, Lengthscales: []float64{0.8, 1.2}}},
		{"sum(matern32,periodic)", 1, Options{Variance: 1.1, Lengthscales: []float64{0.3}, Period: 0.5}},
		{"product(matern32,arccos1)", 2, Options{Variance: 1.1, Lengthscales: []float64{0.9}}},
		{"additive(matern52)", 3, Options{Variance: 0.6, Lengthscales: []float64{0.5, 0.9, 1.3}}},
		{"additive(se,matern12)", 2, Options{Variance: 1.3}},
	}
}

// objective returns Σ W∘K(x, z) (or Σ w∘Diag(x) when diag is set) as a
// function of the set's vector followed by the entries of x and then z;
// when same is set, z is x.
func objective(k Kernel, s *param.Set, x, z, w *mat.Dense, same, diag bool) func([]float64) float64 {
	return func(v []float64) float64 {
		np := s.Len()
		s.SetVector(v[:np])
		xr, xc := x.Dims()
		xv := mat.NewDense(xr, xc, append([]float64(nil), v[np:np+xr*xc]...))
		t := ad.NewTape()
		b := k.Bind(s.Bind(t), "kern.")
		xn := t.Const(xv)
		if diag {
			return weighted(b.Diag(xn), w).Scalar()
		}
		zn := xn
		if !same {
			zr, zc := z.Dims()
			zn = t.Const(mat.NewDense(zr, zc, append([]float64(nil), v[np+xr*xc:]...)))
		}
		return weighted(b.K(xn, zn), w).Scalar()
	}
}

func flatten(ms ...*mat.Dense) []float64 {
	var out []float64
	for _, m := range ms {
		r, _ := m.Dims()
		for i := 0; i < r; i++ {
			out = append(out, m.RawRowView(i)...)
		}
	}
	return out
}

func compareGrad(t *testing.T, label string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d gradient entries, want %d", label, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Errorf("%s: entry %d: analytic %.10g, finite differences %.10g", label, i, got[i], want[i])
		}
	}
}

// TestGradients checks the analytic backward passes of K and Diag against
// central differences, for every hyperparameter (through its transform), x
// and z, with z sharing rows with x and with z the same node as x.
func TestGradients(t *testing.T) {
	for ci, c := range kernelCases() {
		for _, mode := range []string{"distinct", "shared-rows", "same-node", "diag"} {
			t.Run(fmt.Sprintf("%d-%s-%s", ci, c.name, mode), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci), 7))
				k := mustNew(t, c.name, c.dim, c.opts)
				s := declared(t, k)
				x := testhelp.RandMat(rng, 5, c.dim, 1)
				z := testhelp.RandMat(rng, 4, c.dim, 1)
				if mode == "shared-rows" {
					z.SetRow(1, x.RawRowView(2))
					z.SetRow(3, x.RawRowView(0))
				}
				same, diag := mode == "same-node", mode == "diag"
				var w *mat.Dense
				switch {
				case diag:
					w = testhelp.RandMat(rng, 5, 1, 1)
				case same:
					w = testhelp.RandMat(rng, 5, 5, 1)
				default:
					w = testhelp.RandMat(rng, 5, 4, 1)
				}
				tp := ad.NewTape()
				bs := s.Bind(tp)
				b := k.Bind(bs, "kern.")
				xn := tp.Var(mat.DenseCopyOf(x))
				var out *ad.Node
				var zn *ad.Node
				switch {
				case diag:
					out = weighted(b.Diag(xn), w)
				case same:
					out = weighted(b.K(xn, xn), w)
				default:
					zn = tp.Var(mat.DenseCopyOf(z))
					out = weighted(b.K(xn, zn), w)
				}
				tp.Backward(out)
				got := append(bs.Gradient(), flatten(xn.Grad())...)
				v0 := append(s.Vector(), flatten(x)...)
				if zn != nil {
					got = append(got, flatten(zn.Grad())...)
					v0 = append(v0, flatten(z)...)
				}
				f := objective(k, s, x, z, w, same, diag)
				if want := f(v0); math.Abs(want-out.Scalar()) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("objective %v on the gradient tape, %v on the check", out.Scalar(), want)
				}
				want := fd.Gradient(nil, f, append([]float64(nil), v0...), &fd.Settings{Formula: fd.Central, Step: 1e-6})
				compareGrad(t, c.name, got, want, 2e-6)
			})
		}
	}
}

// TestPositiveDefinite checks symmetry, the diagonal, eigenvalues and a
// Cholesky factorisation of K(X, X) on random inputs for every kernel.
func TestPositiveDefinite(t *testing.T) {
	for ci, c := range kernelCases() {
		t.Run(fmt.Sprintf("%d-%s", ci, c.name), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			k := mustNew(t, c.name, c.dim, c.opts)
			s := declared(t, k)
			x := testhelp.RandMat(rng, 40, c.dim, 1.5)
			x.SetRow(7, x.RawRowView(3)) // a duplicate input
			km := Matrix(k, s, "kern.", x, x)
			diag := DiagValues(k, s, "kern.", x)
			scale := 0.0
			for i, d := range diag {
				if math.Abs(km.At(i, i)-d) > 1e-12*math.Abs(d) {
					t.Errorf("K[%d,%d] = %v, Diag = %v", i, i, km.At(i, i), d)
				}
				scale = math.Max(scale, d)
			}
			sym := mat.NewSymDense(40, nil)
			for i := 0; i < 40; i++ {
				for j := 0; j < 40; j++ {
					if math.Abs(km.At(i, j)-km.At(j, i)) > 1e-13*scale {
						t.Fatalf("K not symmetric at %d,%d", i, j)
					}
					sym.SetSym(i, j, km.At(i, j))
				}
			}
			var eig mat.EigenSym
			if !eig.Factorize(sym, false) {
				t.Fatal("eigendecomposition failed")
			}
			if minEig := eig.Values(nil)[0]; minEig < -1e-10*scale {
				t.Errorf("min eigenvalue %v < −1e-10·%v", minEig, scale)
			}
			for i := 0; i < 40; i++ {
				sym.SetSym(i, i, sym.At(i, i)+1e-8*scale)
			}
			var ch mat.Cholesky
			if !ch.Factorize(sym) {
				t.Error("Cholesky of K + 1e-8·scale·I failed")
			}
		})
	}
}

// TestStationaryClosedForm checks k(x, z) against the textbook formulas.
func TestStationaryClosedForm(t *testing.T) {
	x := mat.NewDense(1, 2, []float64{0.3, -0.4})
	z := mat.NewDense(1, 2, []float64{-0.2, 0.5})
	ls := []float64{0.7, 1.3}
	r := math.Hypot(0.5/0.7, 0.9/1.3)
	const v = 1.7
	tests := []struct {
		name string
		want float64
	}{
		{"se", v * math.Exp(-r*r/2)},
		{"matern12", v * math.Exp(-r)},
		{"matern32", v * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)},
		{"matern52", v * (1 + math.Sqrt(5)*r + 5*r*r/3) * math.Exp(-math.Sqrt(5)*r)},
		{"periodic", v * math.Exp(-0.5*(math.Pow(math.Sin(math.Pi*0.5/1.1)/0.7, 2)+math.Pow(math.Sin(math.Pi*0.9/1.1)/1.3, 2)))},
	}
	for _, tc := range tests {
		k := mustNew(t, tc.name, 2, Options{Variance: v, Lengthscales: ls, Period: 1.1})
		got := Matrix(k, declared(t, k), "kern.", x, z).At(0, 0)
		if math.Abs(got-tc.want) > 1e-14 {
			t.Errorf("%s: k = %.16g, want %.16g", tc.name, got, tc.want)
		}
	}
}

// TestArcCosineMonteCarlo compares the arc-cosine kernels with
// 2σ² E[σ_n(wᵀx̂) σ_n(wᵀẑ)], w ~ N(0, I), on a fixed seed.
func TestArcCosineMonteCarlo(t *testing.T) {
	const samples = 400000
	rng := rand.New(rand.NewPCG(3, 5))
	wv, bias, v := []float64{0.8, 1.5}, 0.6, 1.3
	pts := [][2][]float64{
		{{0.4, -0.9}, {1.1, 0.3}},
		{{-0.5, 0.2}, {0.7, -0.6}},
		{{0.9, 0.8}, {0.9, 0.8}},
	}
	for order := 0; order <= 2; order++ {
		k := mustNew(t, "arccos"+itoa(order), 2, Options{Variance: v, WeightVariances: wv, BiasVariance: bias})
		s := declared(t, k)
		for _, p := range pts {
			aug := func(x []float64) []float64 {
				return []float64{math.Sqrt(wv[0]) * x[0], math.Sqrt(wv[1]) * x[1], math.Sqrt(bias)}
			}
			xa, za := aug(p[0]), aug(p[1])
			act := func(u float64) float64 {
				if u <= 0 {
					return 0
				}
				return math.Pow(u, float64(order))
			}
			sum, sum2 := 0.0, 0.0
			for i := 0; i < samples; i++ {
				var a, b float64
				for d := 0; d < 3; d++ {
					g := rng.NormFloat64()
					a += g * xa[d]
					b += g * za[d]
				}
				y := 2 * v * act(a) * act(b)
				sum += y
				sum2 += y * y
			}
			mean := sum / samples
			se := math.Sqrt((sum2/samples - mean*mean) / samples)
			got := Matrix(k, s, "kern.", mat.NewDense(1, 2, p[0]), mat.NewDense(1, 2, p[1])).At(0, 0)
			if math.Abs(got-mean) > 5*se {
				t.Errorf("order %d at %v: kernel %.5f, Monte Carlo %.5f ± %.5f", order, p, got, mean, se)
			}
		}
	}
}

// TestArcCosineCircleCoefficients checks order 1 against the spherical-ODGP
// spec's d = 2 reference values λ̄_ℓ = (1/π)∫₀^π s(cos φ) cos(ℓφ) dφ, using
// inputs of norm R ≫ √b so that the bias is negligible.
func TestArcCosineCircleCoefficients(t *testing.T) {
	const radius = 1e4
	k := mustNew(t, "arccos1", 2, Options{})
	s := declared(t, k)
	const n = 4000
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		phi := math.Pi * (float64(i) + 0.5) / n // midpoint rule, exact enough for smooth s
		x.Set(i, 0, radius*math.Cos(phi))
		x.Set(i, 1, radius*math.Sin(phi))
	}
	km := Matrix(k, s, "kern.", x, mat.NewDense(1, 2, []float64{radius, 0}))
	for l, want := range []float64{4 / (math.Pi * math.Pi), 0.25, 0.04503164} {
		got := 0.0
		for i := 0; i < n; i++ {
			phi := math.Pi * (float64(i) + 0.5) / n
			got += km.At(i, 0) / (radius*radius + 1) * math.Cos(float64(l)*phi) / n
		}
		if math.Abs(got-want) > 1e-7 {
			t.Errorf("λ̄_%d = %.9f, spec %.9f", l, got, want)
		}
	}
}

func TestSumProductAdditiveAlgebra(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, z := testhelp.RandMat(rng, 6, 2, 1), testhelp.RandMat(rng, 5, 2, 1)
	se := mustNew(t, "se", 2, Options{Variance: 1.3, Lengthscales: []float64{0.7, 1.2}})
	per := mustNew(t, "periodic", 2, Options{Variance: 0.6, Lengthscales: []float64{0.9}, Period: 1.4})
	s1, s2 := declared(t, se), declared(t, per)
	k1, k2 := Matrix(se, s1, "kern.", x, z), Matrix(per, s2, "kern.", x, z)

	sum, err := Sum(se, per)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := Product(se, per)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Name() != "sum(se,periodic)" || prod.Name() != "product(se,periodic)" {
		t.Errorf("names %q, %q", sum.Name(), prod.Name())
	}
	var want mat.Dense
	want.Add(k1, k2)
	if got := Matrix(sum, declared(t, sum), "kern.", x, z); !mat.EqualApprox(got, &want, 1e-14) {
		t.Error("sum ≠ k1 + k2")
	}
	want.MulElem(k1, k2)
	ps := declared(t, prod)
	if got := Matrix(prod, ps, "kern.", x, z); !mat.EqualApprox(got, &want, 1e-14) {
		t.Error("product ≠ k1 ∘ k2")
	}
	if !ps.Has("kern.k0.lengthscales") || !ps.Has("kern.k1.period") {
		t.Errorf("product parameters %v", ps.Names())
	}

	// Additive: Σ_d k_d(x_d, z_d) with each 1-D kernel's own hyperparameters.
	add, err := New("additive(se,matern32)", 2, Options{Lengthscales: []float64{0.6, 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	as := declared(t, add)
	if err := as.SetValue("kern.d1.variance", mat.NewDense(1, 1, []float64{2.5})); err != nil {
		t.Fatal(err)
	}
	got := Matrix(add, as, "kern.", x, z)
	want.Zero()
	for d, name := range []string{"se", "matern32"} {
		kd := mustNew(t, name, 1, Options{Variance: []float64{1, 2.5}[d], Lengthscales: []float64{[]float64{0.6, 1.5}[d]}})
		xd := mat.NewDense(6, 1, mat.Col(nil, d, x))
		zd := mat.NewDense(5, 1, mat.Col(nil, d, z))
		want.Add(&want, Matrix(kd, declared(t, kd), "kern.", xd, zd))
	}
	if !mat.EqualApprox(got, &want, 1e-14) {
		t.Error("additive ≠ sum of 1-D kernels")
	}
	if add.Name() != "additive(se,matern32)" || Dim(add) != 2 {
		t.Errorf("additive name %q dim %d", add.Name(), Dim(add))
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		dim     int
		opts    Options
		errPart string
	}{
		{"gaussian", 1, Options{}, "valid names are se, matern12"},
		{"se", 0, Options{}, "dimension 0"},
		{"se", 3, Options{Lengthscales: []float64{1, 2}}, "2 lengthscales for 3 dimensions"},
		{"matern32", 1, Options{Variance: -1}, "variance must be positive"},
		{"se", 1, Options{Lengthscales: []float64{math.NaN()}}, "lengthscales must be positive"},
		{"periodic", 1, Options{Period: math.Inf(1)}, "period must be positive"},
		{"arccos1", 2, Options{WeightVariances: []float64{1, 2, 3}}, "3 weight variances"},
		{"arccos2", 1, Options{BiasVariance: -2}, "bias variance"},
		{"sum(se)", 2, Options{}, "at least two"},
		{"sum(se,foo)", 2, Options{}, "unknown kernel \"foo\""},
		{"additive(se,se)", 3, Options{}, "one kernel or 3"},
		{"additive(se", 3, Options{}, "parenthesis"},
		{"sum(se,(periodic)", 1, Options{}, "unbalanced"},
		{"mix(se,se)", 1, Options{}, "unknown combination"},
	}
	for _, tc := range tests {
		_, err := New(tc.name, tc.dim, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.errPart) {
			t.Errorf("New(%q, %d): error %v, want it to mention %q", tc.name, tc.dim, err, tc.errPart)
		}
	}
	if _, err := Additive(mustNew(t, "se", 2, Options{})); err == nil {
		t.Error("Additive of a 2-D kernel: no error")
	}
	if _, err := Sum(mustNew(t, "se", 2, Options{}), mustNew(t, "se", 3, Options{})); err == nil {
		t.Error("Sum of kernels of different dimensions: no error")
	}
	if got := Names(); len(got) != 8+len(zonalNames) || got[0] != "se" {
		t.Errorf("Names() = %v", got)
	}
}

func TestParameterLayout(t *testing.T) {
	tests := []struct {
		name  string
		dim   int
		opts  Options
		names []string
		cols  []int
	}{
		{"se", 3, Options{}, []string{"kern.variance", "kern.lengthscales"}, []int{1, 1}},
		{"matern52", 3, Options{ARD: true}, []string{"kern.variance", "kern.lengthscales"}, []int{1, 3}},
		{"periodic", 2, Options{ARD: true}, []string{"kern.variance", "kern.lengthscales", "kern.period"}, []int{1, 2, 2}},
		{"arccos1", 4, Options{}, []string{"kern.variance", "kern.weight_variances", "kern.bias_variance"}, []int{1, 1, 1}},
		{"additive(se)", 2, Options{}, []string{"kern.d0.variance", "kern.d0.lengthscales", "kern.d1.variance", "kern.d1.lengthscales"}, []int{1, 1, 1, 1}},
	}
	for _, tc := range tests {
		k := mustNew(t, tc.name, tc.dim, tc.opts)
		s := declared(t, k)
		got := s.Names()
		if strings.Join(got, " ") != strings.Join(tc.names, " ") {
			t.Errorf("%s: parameters %v, want %v", tc.name, got, tc.names)
			continue
		}
		for i, n := range got {
			if _, c := s.Value(n).Dims(); c != tc.cols[i] {
				t.Errorf("%s: %s has %d columns, want %d", tc.name, n, c, tc.cols[i])
			}
		}
		if err := k.Declare(s, "kern."); err == nil {
			t.Errorf("%s: declaring twice under one prefix: no error", tc.name)
		}
	}
}

func TestWrongInputWidthPanicsClearly(t *testing.T) {
	k := mustNew(t, "se", 2, Options{})
	s := declared(t, k)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "3 columns, kernel dimension is 2") {
			t.Errorf("panic %v", r)
		}
	}()
	Matrix(k, s, "kern.", mat.NewDense(2, 3, nil), mat.NewDense(2, 3, nil))
}

// TestLargeParallelMatchesSmall checks that the chunked, parallel fill of a
// large matrix agrees with row-by-row evaluation.
func TestLargeParallelMatchesSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x, z := testhelp.RandMat(rng, 700, 3, 1), testhelp.RandMat(rng, 60, 3, 1)
	for _, name := range []string{"matern32", "periodic", "arccos1"} {
		k := mustNew(t, name, 3, Options{ARD: true, Lengthscales: []float64{0.8}})
		s := declared(t, k)
		big := Matrix(k, s, "kern.", x, z)
		for _, i := range []int{0, 129, 255, 256, 699} {
			small := Matrix(k, s, "kern.", mat.NewDense(1, 3, x.RawRowView(i)), z)
			if !mat.EqualApprox(small, big.Slice(i, i+1, 0, 60), 1e-13) {
				t.Errorf("%s: row %d differs", name, i)
			}
		}
	}
}

// TestSameBitsOnAnyCoreCount checks that every kernel's matrix and the
// gradients of Σ W∘K(x, z) with respect to the hyperparameters, x and z
// are bitwise the same under GOMAXPROCS 1, 2 and 3, at a size whose fill
// is split into several row chunks.
func TestSameBitsOnAnyCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range kernelCases() {
		t.Run(fmt.Sprintf("%s/%dd", c.name, c.dim), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, uint64(c.dim)))
			x, z, w := testhelp.RandMat(rng, 5*chunkRows+17, c.dim, 1), testhelp.RandMat(rng, 70, c.dim, 1), testhelp.RandMat(rng, 5*chunkRows+17, 70, 1)
			k := mustNew(t, c.name, c.dim, c.opts)
			s := declared(t, k)
			eval := func() []float64 {
				tp := ad.NewTape()
				bound := s.Bind(tp)
				b := k.Bind(bound, "kern.")
				xn, zn := tp.Var(mat.DenseCopyOf(x)), tp.Var(mat.DenseCopyOf(z))
				kn := b.K(xn, zn)
				tp.Backward(weighted(kn, w))
				return append(flatten(kn.Value(), xn.Grad(), zn.Grad()), bound.Gradient()...)
			}
			runtime.GOMAXPROCS(1)
			want := eval()
			for _, p := range []int{2, 3} {
				runtime.GOMAXPROCS(p)
				got := eval()
				if len(got) != len(want) {
					t.Fatalf("GOMAXPROCS=%d: %d values, %d on one core", p, len(got), len(want))
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("GOMAXPROCS=%d: value %d is %v, %v on one core", p, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestStationaryGradientsChunked checks the gradients of the stationary
// kernels against central differences at a size whose fill and backward
// pass are split into several row chunks, on both ways of forming r² (the
// direct sum for D ≤ directDims and the centred expansion above).
func TestStationaryGradientsChunked(t *testing.T) {
	for ci, c := range []struct {
		name string
		dim  int
	}{{"se", 5}, {"matern12", 2}, {"matern32", 5}, {"matern52", 4}, {"matern52", 1}} {
		t.Run(fmt.Sprintf("%s-%dd", c.name, c.dim), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 17))
			ls := make([]float64, c.dim)
			for d := range ls {
				ls[d] = 0.8 + 0.3*float64(d)
			}
			k := mustNew(t, c.name, c.dim, Options{Variance: 1.3, Lengthscales: ls, ARD: true})
			s := declared(t, k)
			n := 4*chunkRows + 9
			if n*70 < 1<<14 {
				t.Fatal("too small for parallelRows to split")
			}
			x, z, w := testhelp.RandMat(rng, n, c.dim, 1), testhelp.RandMat(rng, 70, c.dim, 1), testhelp.RandMat(rng, n, 70, 1)
			z.SetRow(2, x.RawRowView(200)) // r = 0 in a later chunk
			tp := ad.NewTape()
			bs := s.Bind(tp)
			xn, zn := tp.Var(mat.DenseCopyOf(x)), tp.Var(mat.DenseCopyOf(z))
			tp.Backward(weighted(k.Bind(bs, "kern.").K(xn, zn), w))
			got := append(append(bs.Gradient(), flatten(xn.Grad())...), flatten(zn.Grad())...)
			v0 := append(append(s.Vector(), flatten(x)...), flatten(z)...)
			want := fd.Gradient(nil, objective(k, s, x, z, w, false, false), v0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			compareGrad(t, c.name, got, want, 2e-6)
		})
	}
}
