package ski

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// problem is a small SKI problem with its dense reference matrices.
type problem struct {
	x    *mat.Dense
	y    []float64
	grid *Grid
	w    *Interp
	hyp  Hyper
	op   *Operator
}

func newProblem(t testing.TB, n, d, size int, seed uint64) *problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x.Set(i, k, -2+4*rng.Float64())
		}
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(2*x.At(i, 0)) + 0.3*rng.NormFloat64()
	}
	grid, err := NewGrid(x, []int{size})
	if err != nil {
		t.Fatal(err)
	}
	w, err := grid.Interpolate(x)
	if err != nil {
		t.Fatal(err)
	}
	ls := make([]float64, d)
	for k := range ls {
		ls[k] = 0.7 + 0.2*float64(k)
	}
	hyp := Hyper{Variance: 1.3, Lengthscales: ls, Noise: 0.2}
	op, err := NewOperator(grid, w, hyp)
	if err != nil {
		t.Fatal(err)
	}
	return &problem{x: x, y: y, grid: grid, w: w, hyp: hyp, op: op}
}

// denseGrid is K_grid and, for d ≥ 0, ∂K_grid/∂ℓ_d, formed from the grid points.
func denseGrid(g *Grid, h Hyper, deriv int) *mat.Dense {
	p := g.Points()
	m, d := p.Dims()
	out := mat.NewDense(m, m, nil)
	for a := 0; a < m; a++ {
		for b := 0; b < m; b++ {
			var r2 float64
			for k := 0; k < d; k++ {
				u := (p.At(a, k) - p.At(b, k)) / h.Lengthscales[k]
				r2 += u * u
			}
			v := h.Variance * math.Exp(-0.5*r2)
			if deriv >= 0 {
				u := (p.At(a, deriv) - p.At(b, deriv)) / h.Lengthscales[deriv]
				v *= u * u / h.Lengthscales[deriv]
			}
			out.Set(a, b, v)
		}
	}
	return out
}

// denseKhat is W K_grid Wᵀ + σ²I.
func (p *problem) denseKhat() *mat.SymDense {
	wd := p.w.Dense()
	var k mat.Dense
	k.Product(wd, denseGrid(p.grid, p.hyp, -1), wd.T())
	n := p.w.N
	out := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.5 * (k.At(i, j) + k.At(j, i))
			if i == j {
				v += p.hyp.Noise
			}
			out.SetSym(i, j, v)
		}
	}
	return out
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func TestAutoSizeAndAxisRule(t *testing.T) {
	for _, c := range []struct{ n, d, want int }{
		{12947, 2, 113}, {23144, 2, 152}, {106000, 2, 325}, {10000, 2, 100}, {100, 1, 100}, {3, 2, MinGridSize},
	} {
		if got := AutoSize(c.n, c.d); got != c.want {
			t.Errorf("AutoSize(%d, %d) = %d, want %d", c.n, c.d, got, c.want)
		}
	}
	for _, size := range []int{5, 6, 17, 113} {
		a, err := NewAxis(-1.5, 2.5, size)
		if err != nil {
			t.Fatal(err)
		}
		// GPyTorch: h = 4/(G−4.02), bounds [−1.5−2.01h, 2.5+2.01h], grid = linspace(bLo−δ, bHi+δ, G).
		h := 4 / (float64(size) - 4.02)
		bLo, bHi := -1.5-2.01*h, 2.5+2.01*h
		delta := (bHi - bLo) / float64(size-2)
		if math.Abs(a.Point(0)-(bLo-delta)) > 1e-12 || math.Abs(a.Point(size-1)-(bHi+delta)) > 1e-12 {
			t.Errorf("size %d: grid [%v, %v], want [%v, %v]", size, a.Point(0), a.Point(size-1), bLo-delta, bHi+delta)
		}
		if a.Point(1) > -1.5 || a.Point(size-2) < 2.5 {
			t.Errorf("size %d: data range not inside the interpolation range [%v, %v]", size, a.Point(1), a.Point(size-2))
		}
	}
}

// Keys' kernel with a = −½ reproduces quadratics: W f(grid) = f(x) for
// separable quadratics, and the weights of every row sum to one.
func TestInterpolationReproducesQuadratics(t *testing.T) {
	p := newProblem(t, 60, 2, 9, 3)
	pts := p.grid.Points()
	m, _ := pts.Dims()
	f := func(a, b float64) float64 { return 0.3 + 1.7*a - 0.4*a*a + 2*b + 0.9*b*b + 0.5*a*b }
	g := make([]float64, m)
	for j := range g {
		g[j] = f(pts.At(j, 0), pts.At(j, 1))
	}
	got := make([]float64, p.w.N)
	p.w.Gather(got, g)
	for i, v := range got {
		want := f(p.x.At(i, 0), p.x.At(i, 1))
		if math.Abs(v-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("point %d: interpolated %v, want %v", i, v, want)
		}
		var s float64
		for _, w := range p.w.Val[i*p.w.Stencil : (i+1)*p.w.Stencil] {
			s += w
		}
		if math.Abs(s-1) > 1e-14 {
			t.Fatalf("row %d: weights sum to %v", i, s)
		}
	}
	if p.w.Clamped != 0 {
		t.Errorf("%d training inputs clamped", p.w.Clamped)
	}
}

func TestToeplitzMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5, 7, 33, 100, 113} {
		col := make([]float64, n)
		for j := range col {
			col[j] = math.Exp(-0.5*float64(j*j)/9) + 0.1*rng.Float64()
		}
		w := newFFTWork(fftLen(2*n - 1))
		tp := newToeplitz(col, w)
		v := randVec(rng, n)
		want := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want[i] += col[abs(i-j)] * v[j]
			}
		}
		got := append([]float64(nil), v...)
		tp.mulStrided(got, 0, 1, w)
		if e := testhelp.RelNormErr(got, want); e > 1e-13 {
			t.Errorf("n = %d: relative error %.3g", n, e)
		}
	}
}

// The MVM equals the dense W K_grid Wᵀ + σ²I product, in 1, 2 and 3
// dimensions, with a grid too fine for K_grid to be well conditioned.
func TestMulMatchesDense(t *testing.T) {
	for _, c := range []struct{ n, d, size int }{{40, 1, 30}, {70, 2, 11}, {50, 3, 6}, {30, 2, 25}} {
		p := newProblem(t, c.n, c.d, c.size, uint64(c.d))
		k := p.denseKhat()
		rng := rand.New(rand.NewPCG(5, 6))
		src := [][]float64{randVec(rng, c.n), randVec(rng, c.n), randVec(rng, c.n)}
		dst := [][]float64{make([]float64, c.n), make([]float64, c.n), make([]float64, c.n)}
		p.op.Mul(dst, src)
		for j := range src {
			var want mat.VecDense
			want.MulVec(k, mat.NewVecDense(c.n, src[j]))
			if e := testhelp.RelNormErr(dst[j], want.RawVector().Data); e > 1e-12 {
				t.Errorf("n=%d d=%d grid=%d column %d: relative error %.3g", c.n, c.d, c.size, j, e)
			}
		}
		diag := p.op.Diag()
		for i, v := range diag {
			if want := k.At(i, i) - p.hyp.Noise; math.Abs(v-want) > 1e-12*math.Abs(want) {
				t.Fatalf("diag %d: %v, want %v", i, v, want)
			}
		}
	}
}

// Forms equal the dense bilinear forms with the analytic ∂K̂/∂θ, and those
// equal central finite differences of the operator in θ.
func TestFormsMatchDenseAndFiniteDifferences(t *testing.T) {
	p := newProblem(t, 50, 2, 10, 7)
	rng := rand.New(rand.NewPCG(8, 9))
	a, b := randVec(rng, 50), randVec(rng, 50)
	got := p.op.Forms([][]float64{a}, [][]float64{b})[0]
	wd := p.w.Dense()
	bilinear := func(m mat.Matrix) float64 {
		var t1 mat.Dense
		t1.Product(wd, m, wd.T())
		return mat.Inner(mat.NewVecDense(50, a), &t1, mat.NewVecDense(50, b))
	}
	kg := denseGrid(p.grid, p.hyp, -1)
	kg.Scale(1/p.hyp.Variance, kg)
	want := []float64{bilinear(kg), bilinear(denseGrid(p.grid, p.hyp, 0)), bilinear(denseGrid(p.grid, p.hyp, 1)), dot(a, b)}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-11*math.Max(1, math.Abs(want[j])) {
			t.Errorf("form %d: %v, dense %v", j, got[j], want[j])
		}
	}
	// Finite differences of aᵀ K̂(θ) b.
	form := func(h Hyper) float64 {
		op, err := NewOperator(p.grid, p.w, h)
		if err != nil {
			t.Fatal(err)
		}
		out := [][]float64{make([]float64, 50)}
		op.Mul(out, [][]float64{b})
		return dot(a, out[0])
	}
	const step = 1e-5
	for j := 0; j < 4; j++ {
		shift := func(s float64) Hyper {
			h := Hyper{Variance: p.hyp.Variance, Lengthscales: append([]float64(nil), p.hyp.Lengthscales...), Noise: p.hyp.Noise}
			switch j {
			case 0:
				h.Variance += s
			case 3:
				h.Noise += s
			default:
				h.Lengthscales[j-1] += s
			}
			return h
		}
		fd := (form(shift(step)) - form(shift(-step))) / (2 * step)
		if math.Abs(fd-got[j]) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("parameter %d: analytic %v, finite difference %v", j, got[j], fd)
		}
	}
}

// denseLML is the exact log marginal likelihood of the dense K̂, its
// gradient in (σ_f², ℓ, σ², μ), and log|K̂|.
func (p *problem) denseLML(t *testing.T, mu float64) (lml float64, grad []float64, logdet float64) {
	k := p.denseKhat()
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("dense K̂ not positive definite")
	}
	n := p.w.N
	r := mat.NewVecDense(n, nil)
	for i, v := range p.y {
		r.SetVec(i, v-mu)
	}
	var alpha mat.VecDense
	if err := ch.SolveVecTo(&alpha, r); err != nil {
		t.Fatal(err)
	}
	logdet = ch.LogDet()
	lml = -0.5*mat.Dot(r, &alpha) - 0.5*logdet - 0.5*float64(n)*math.Log(2*math.Pi)
	var kinv mat.SymDense
	if err := ch.InverseTo(&kinv); err != nil {
		t.Fatal(err)
	}
	wd := p.w.Dense()
	derivs := []*mat.Dense{}
	kg := denseGrid(p.grid, p.hyp, -1)
	kg.Scale(1/p.hyp.Variance, kg)
	mats := []*mat.Dense{kg}
	for d := range p.hyp.Lengthscales {
		mats = append(mats, denseGrid(p.grid, p.hyp, d))
	}
	for _, m := range mats {
		var dk mat.Dense
		dk.Product(wd, m, wd.T())
		derivs = append(derivs, &dk)
	}
	eye := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		eye.Set(i, i, 1)
	}
	derivs = append(derivs, eye)
	for _, dk := range derivs {
		var kd mat.Dense
		kd.Mul(&kinv, dk)
		grad = append(grad, 0.5*mat.Inner(&alpha, dk, &alpha)-0.5*mat.Trace(&kd))
	}
	var s float64
	for i := 0; i < n; i++ {
		s += alpha.AtVec(i)
	}
	return lml, append(grad, s), logdet
}

// The stochastic log-det and gradient converge to the dense values at the
// Monte-Carlo rate 1/√T, with and without preconditioning; the quadratic
// term (from CG) is exact.
func TestEstimatesConvergeAtMonteCarloRate(t *testing.T) {
	if testing.Short() {
		t.Skip("probe sweep")
	}
	p := newProblem(t, 80, 2, 10, 11)
	const mu = 0.1
	lml, grad, logdet := p.denseLML(t, mu)
	for _, rank := range []int{0, 5} {
		s := Settings{LanczosSteps: 80, CGTol: 1e-11, MaxCG: 300, PrecondRank: rank}
		rms := map[int][2]float64{}
		const reps = 12
		for _, probes := range []int{8, 128} {
			s.Probes = probes
			var eLD, eG float64
			for r := 0; r < reps; r++ {
				est, err := p.op.MarginalLikelihood(p.y, mu, s, rand.New(rand.NewPCG(uint64(r), uint64(probes))))
				if err != nil {
					t.Fatal(err)
				}
				if q := -2*(est.LML+0.5*est.LogDet) - float64(p.w.N)*math.Log(2*math.Pi); math.Abs(q-est.Quad) > 1e-9*math.Abs(q) {
					t.Fatalf("LML inconsistent with its parts")
				}
				wantQuad := -2 * (lml + 0.5*logdet + 0.5*float64(p.w.N)*math.Log(2*math.Pi))
				if math.Abs(est.Quad-wantQuad) > 1e-8*math.Abs(wantQuad) {
					t.Fatalf("quadratic term %v, dense %v", est.Quad, wantQuad)
				}
				if math.Abs(est.Grad[len(grad)-1]-grad[len(grad)-1]) > 1e-8*math.Max(1, math.Abs(grad[len(grad)-1])) {
					t.Fatalf("mean gradient %v, dense %v", est.Grad[len(grad)-1], grad[len(grad)-1])
				}
				eLD += (est.LogDet - logdet) * (est.LogDet - logdet)
				for j := 0; j < len(grad)-1; j++ {
					eG += (est.Grad[j] - grad[j]) * (est.Grad[j] - grad[j])
				}
			}
			rms[probes] = [2]float64{math.Sqrt(eLD / reps), math.Sqrt(eG / reps)}
		}
		// 16× the probes: the error should shrink about 4×.
		for i, what := range []string{"log-det", "gradient"} {
			ratio := rms[128][i] / rms[8][i]
			t.Logf("rank %d %s: RMS error %.4g (8 probes) → %.4g (128 probes), ratio %.3f (1/√16 = 0.25)", rank, what, rms[8][i], rms[128][i], ratio)
			if ratio < 0.1 || ratio > 0.5 {
				t.Errorf("rank %d %s: error ratio %.3f over 16× probes, want ≈ 0.25", rank, what, ratio)
			}
		}
		if rel := rms[128][0] / math.Abs(logdet); rel > 0.03 {
			t.Errorf("rank %d: log-det RMS relative error %.3g at 128 probes", rank, rel)
		}
	}
}

// Predictions with a complete Lanczos cache and a tight solve equal the
// dense SKI posterior.
func TestPosteriorMatchesDense(t *testing.T) {
	p := newProblem(t, 80, 2, 10, 13)
	const mu = -0.2
	post, err := p.op.NewPosterior(p.y, mu, PosteriorSettings{CGTol: 1e-13, MaxCG: 1000, PrecondRank: 5, VarianceRank: 80}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	xs := mat.NewDense(25, 2, nil)
	for i := 0; i < 25; i++ {
		xs.Set(i, 0, -2.2+4.4*rng.Float64())
		xs.Set(i, 1, -2.2+4.4*rng.Float64())
	}
	mean, varf, _, err := post.Predict(xs)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.grid.Interpolate(xs)
	if err != nil {
		t.Fatal(err)
	}
	k := p.denseKhat()
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("not PD")
	}
	kg := denseGrid(p.grid, p.hyp, -1)
	wd, wsd := p.w.Dense(), ws.Dense()
	var kxs, kss mat.Dense
	kxs.Product(wsd, kg, wd.T()) // 25×N
	kss.Product(wsd, kg, wsd.T())
	r := mat.NewVecDense(80, nil)
	for i, v := range p.y {
		r.SetVec(i, v-mu)
	}
	var alpha mat.VecDense
	_ = ch.SolveVecTo(&alpha, r)
	var sol mat.Dense
	_ = ch.SolveTo(&sol, kxs.T())
	var worstM, worstV float64
	for i := 0; i < 25; i++ {
		wm := mu + mat.Dot(kxs.RowView(i), &alpha)
		wv := kss.At(i, i) - mat.Dot(kxs.RowView(i), sol.ColView(i))
		worstM = math.Max(worstM, math.Abs(mean[i]-wm))
		worstV = math.Max(worstV, math.Abs(varf[i]-wv))
	}
	t.Logf("max |mean − dense| = %.3g, max |var − dense| = %.3g", worstM, worstV)
	if worstM > 1e-9 || worstV > 1e-9 {
		t.Errorf("posterior differs from the dense SKI posterior: mean %.3g, variance %.3g", worstM, worstV)
	}
}

// Identical seeds give bitwise identical estimates.
func TestEstimateIsReproducible(t *testing.T) {
	p := newProblem(t, 200, 2, 14, 17)
	s := DefaultSettings()
	a, err := p.op.MarginalLikelihood(p.y, 0, s, rand.New(rand.NewPCG(42, 0)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.op.MarginalLikelihood(p.y, 0, s, rand.New(rand.NewPCG(42, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if a.LML != b.LML {
		t.Fatalf("LML %v then %v", a.LML, b.LML)
	}
	for j := range a.Grad {
		if a.Grad[j] != b.Grad[j] {
			t.Fatalf("gradient %d: %v then %v", j, a.Grad[j], b.Grad[j])
		}
	}
}

func TestBadInput(t *testing.T) {
	p := newProblem(t, 20, 2, 8, 19)
	x1 := mat.NewDense(3, 2, []float64{0, 1, 0, 2, 0, 3})
	nan := mat.NewDense(1, 2, []float64{math.NaN(), 0})
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"small grid", func() error { _, err := NewAxis(0, 1, 4); return err }, "at least 5"},
		{"constant dimension", func() error { _, err := NewGrid(x1, []int{10}); return err }, "dimension 0"},
		{"sizes", func() error { _, err := NewGrid(p.x, []int{8, 8, 8}); return err }, "3 grid sizes"},
		{"nil x", func() error { _, err := NewGrid(nil, []int{8}); return err }, "no inputs"},
		{"nan predict", func() error { _, err := p.grid.Interpolate(nan); return err }, "not finite"},
		{"columns", func() error { _, err := p.grid.Interpolate(mat.NewDense(1, 3, nil)); return err }, "3 columns"},
		{"lengthscales", func() error {
			_, err := NewOperator(p.grid, p.w, Hyper{Variance: 1, Lengthscales: []float64{1}, Noise: 1})
			return err
		}, "1 lengthscales"},
		{"noise", func() error {
			_, err := NewOperator(p.grid, p.w, Hyper{Variance: 1, Lengthscales: []float64{1, 1}, Noise: 0})
			return err
		}, "noise variance"},
		{"probes", func() error {
			s := DefaultSettings()
			s.Probes = 0
			_, err := p.op.MarginalLikelihood(p.y, 0, s, rand.New(rand.NewPCG(1, 1)))
			return err
		}, "probes"},
		{"targets", func() error {
			_, err := p.op.MarginalLikelihood(p.y[:3], 0, DefaultSettings(), rand.New(rand.NewPCG(1, 1)))
			return err
		}, "3 targets"},
		{"variance rank", func() error {
			s := DefaultPosteriorSettings()
			s.VarianceRank = 0
			_, err := p.op.NewPosterior(p.y, 0, s, rand.New(rand.NewPCG(1, 1)))
			return err
		}, "variance_rank"},
	} {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// Test points beyond the grid are clamped to its edge and counted.
func TestPredictClampsOutsideGrid(t *testing.T) {
	p := newProblem(t, 50, 2, 9, 23)
	post, err := p.op.NewPosterior(p.y, 0, DefaultPosteriorSettings(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.NewDense(3, 2, []float64{0, 0, 50, 0, 0, -50})
	_, _, clamped, err := post.Predict(xs)
	if err != nil {
		t.Fatal(err)
	}
	if clamped != 2 {
		t.Errorf("clamped %d points, want 2", clamped)
	}
}

// Ill-conditioned: a lengthscale 5× the data range on a fine grid makes
// K_grid numerically singular (and its circulant embedding indefinite), and
// σ² = 10⁻⁴ leaves K̂ with condition number ~10⁶. CG still solves to the
// dense answer and the posterior mean still matches.
func TestIllConditioned(t *testing.T) {
	p := newProblem(t, 60, 2, 20, 29)
	p.hyp = Hyper{Variance: 1, Lengthscales: []float64{20, 20}, Noise: 1e-4}
	var err error
	if p.op, err = NewOperator(p.grid, p.w, p.hyp); err != nil {
		t.Fatal(err)
	}
	lml, _, logdet := p.denseLML(t, 0)
	wantQuad := -2 * (lml + 0.5*logdet + 0.5*float64(p.w.N)*math.Log(2*math.Pi))
	est, err := p.op.MarginalLikelihood(p.y, 0, Settings{Probes: 4, LanczosSteps: 60, CGTol: 1e-12, MaxCG: 2000, PrecondRank: 10}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quadratic term %.10g (dense %.10g) after %d CG iterations", est.Quad, wantQuad, est.CGIters)
	if math.Abs(est.Quad-wantQuad) > 1e-6*math.Abs(wantQuad) {
		t.Errorf("quadratic term %v, dense %v", est.Quad, wantQuad)
	}
	post, err := p.op.NewPosterior(p.y, 0, PosteriorSettings{CGTol: 1e-12, MaxCG: 2000, PrecondRank: 10, VarianceRank: 60}, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	mean, _, _, err := post.Predict(p.x)
	if err != nil {
		t.Fatal(err)
	}
	k := p.denseKhat()
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("dense K̂ not PD")
	}
	var alpha mat.VecDense
	_ = ch.SolveVecTo(&alpha, mat.NewVecDense(p.w.N, p.y))
	// Training-point means: K_SKI α = y − σ²α.
	for i := range mean {
		want := p.y[i] - p.hyp.Noise*alpha.AtVec(i)
		if math.Abs(mean[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("mean %d: %v, dense %v", i, mean[i], want)
		}
	}
}

// A truncated Lanczos cache (k < N) is a Galerkin projection: Q T⁻¹ Qᵀ ≼ K̂⁻¹,
// so its variances are never below the exact SKI posterior variance, and
// they are larger on average. (This is why SKI's variances here err high.)
// Both Lanczos starts: GPyTorch's probe column and a random vector.
func TestTruncatedVarianceIsAnUpperBound(t *testing.T) {
	for _, start := range LanczosStarts {
		t.Run(start, func(t *testing.T) { testTruncatedVariance(t, start) })
	}
}

func testTruncatedVariance(t *testing.T, start string) {
	p := newProblem(t, 150, 2, 12, 31)
	full, err := p.op.NewPosterior(p.y, 0, PosteriorSettings{CGTol: 1e-12, MaxCG: 1000, PrecondRank: 5, VarianceRank: 150, LanczosStart: start}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cut, err := p.op.NewPosterior(p.y, 0, PosteriorSettings{CGTol: 1e-12, MaxCG: 1000, PrecondRank: 5, VarianceRank: 15, LanczosStart: start}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	xs := mat.NewDense(40, 2, nil)
	for i := 0; i < 40; i++ {
		xs.Set(i, 0, -2+4*rng.Float64())
		xs.Set(i, 1, -2+4*rng.Float64())
	}
	_, vFull, _, err := full.Predict(xs)
	if err != nil {
		t.Fatal(err)
	}
	_, vCut, _, err := cut.Predict(xs)
	if err != nil {
		t.Fatal(err)
	}
	var excess float64
	for i := range vFull {
		if vCut[i] < vFull[i]-1e-10 {
			t.Fatalf("point %d: rank-15 variance %v below the exact %v", i, vCut[i], vFull[i])
		}
		excess += vCut[i] - vFull[i]
	}
	t.Logf("mean excess variance of the rank-15 cache: %.3g", excess/40)
	if excess <= 0 {
		t.Error("rank-15 cache equals the exact variance: the test has no power")
	}
}

// GPyTorch's probe start is the column W K_grid e_j of the train-by-grid
// covariance for a grid point j drawn from the stream.
func TestLanczosProbeStart(t *testing.T) {
	p := newProblem(t, 40, 2, 8, 37)
	got := p.op.lanczosStart("probe", rand.New(rand.NewPCG(9, 9)))
	j := rand.New(rand.NewPCG(9, 9)).IntN(p.grid.Len())
	kg := denseGrid(p.grid, p.hyp, -1)
	var want mat.VecDense
	want.MulVec(p.w.Dense(), kg.ColView(j))
	for i := range got {
		if math.Abs(got[i]-want.AtVec(i)) > 1e-12*math.Max(1, math.Abs(want.AtVec(i))) {
			t.Fatalf("start[%d] = %v, dense W K_grid e_%d = %v", i, got[i], j, want.AtVec(i))
		}
	}
	s := DefaultPosteriorSettings()
	s.LanczosStart = "eigen"
	if _, err := p.op.NewPosterior(p.y, 0, s, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), "lanczos_start") {
		t.Errorf("error %v, want one naming lanczos_start", err)
	}
}
