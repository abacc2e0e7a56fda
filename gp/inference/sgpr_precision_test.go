package inference

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// The collapsed bound on ill-conditioned Kuu, checked against an
// independent evaluation in 160-bit arithmetic (math/big) of the same
// float64 inputs: the bound, its gradient (by central differences of the
// high-precision bound, step 1e-20) and the predictive marginals.

const bigPrec = 160

func bf(v float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(v) }

func bnew() *big.Float { return new(big.Float).SetPrec(bigPrec) }

func badd(a, b *big.Float) *big.Float { return bnew().Add(a, b) }
func bsub(a, b *big.Float) *big.Float { return bnew().Sub(a, b) }
func bmul(a, b *big.Float) *big.Float { return bnew().Mul(a, b) }
func bquo(a, b *big.Float) *big.Float { return bnew().Quo(a, b) }

// bexp is e^x: x is halved until |x| < 2⁻¹⁰, the Taylor series summed to
// full precision, and the result squared back.
func bexp(x *big.Float) *big.Float {
	if x.Sign() == 0 {
		return bf(1)
	}
	r := bnew().Set(x)
	k := 0
	for r.MantExp(nil) > -10 {
		r.SetMantExp(r, -1)
		k++
	}
	sum, term := bf(1), bf(1)
	eps := bf(math.Ldexp(1, -bigPrec-8))
	for i := 1; ; i++ {
		term = bquo(bmul(term, r), bf(float64(i)))
		sum = badd(sum, term)
		if bnew().Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for ; k > 0; k-- {
		sum = bmul(sum, sum)
	}
	return sum
}

// blog is log x for x > 0: x = m·2^e with m in [½, 1), and
// log m = 2 atanh((m−1)/(m+1)) by its series.
func blog(x *big.Float) *big.Float {
	atanh2 := func(m *big.Float) *big.Float {
		s := bquo(bsub(m, bf(1)), badd(m, bf(1)))
		s2 := bmul(s, s)
		sum, pow := bnew(), bnew().Set(s)
		eps := bf(math.Ldexp(1, -bigPrec-8))
		for i := 1; ; i += 2 {
			term := bquo(pow, bf(float64(i)))
			sum = badd(sum, term)
			if bnew().Abs(term).Cmp(eps) < 0 {
				break
			}
			pow = bmul(pow, s2)
		}
		return bmul(sum, bf(2))
	}
	m := bnew()
	e := x.MantExp(m)
	ln2 := bnew().Neg(atanh2(bf(0.5)))
	return badd(atanh2(m), bmul(bf(float64(e)), ln2))
}

// bigChol returns the lower Cholesky factor of the symmetric a.
func bigChol(a [][]*big.Float) [][]*big.Float {
	m := len(a)
	l := make([][]*big.Float, m)
	for i := range l {
		l[i] = make([]*big.Float, m)
		for j := range l[i] {
			l[i][j] = bnew()
		}
	}
	for j := 0; j < m; j++ {
		s := bnew().Set(a[j][j])
		for k := 0; k < j; k++ {
			s = bsub(s, bmul(l[j][k], l[j][k]))
		}
		if s.Sign() <= 0 {
			panic("bigChol: not positive definite")
		}
		l[j][j] = bnew().Sqrt(s)
		for i := j + 1; i < m; i++ {
			s := bnew().Set(a[i][j])
			for k := 0; k < j; k++ {
				s = bsub(s, bmul(l[i][k], l[j][k]))
			}
			l[i][j] = bquo(s, l[j][j])
		}
	}
	return l
}

// bigSolveL returns L⁻¹b.
func bigSolveL(l [][]*big.Float, b []*big.Float) []*big.Float {
	x := make([]*big.Float, len(b))
	for i := range b {
		s := bnew().Set(b[i])
		for k := 0; k < i; k++ {
			s = bsub(s, bmul(l[i][k], x[k]))
		}
		x[i] = bquo(s, l[i][i])
	}
	return x
}

func bigSqNorm(v []*big.Float) *big.Float {
	s := bnew()
	for _, x := range v {
		s = badd(s, bmul(x, x))
	}
	return s
}

func bigLogDetChol(l [][]*big.Float) *big.Float {
	s := bnew()
	for i := range l {
		s = badd(s, blog(l[i][i]))
	}
	return bmul(s, bf(2))
}

// precisionCase is one ill-conditioned SGPR problem.
type precisionCase struct {
	kernel        string
	x, z          *mat.Dense
	y             []float64
	xtest         *mat.Dense
	variance      float64
	ls            []float64
	noise, jitter float64
}

// params are the θ of the case as one vector: variance, lengthscales,
// noise, then Z row by row.
func (c *precisionCase) params() []float64 {
	v := append([]float64{c.variance}, c.ls...)
	v = append(v, c.noise)
	m, d := c.z.Dims()
	for i := 0; i < m; i++ {
		v = append(v, c.z.RawRowView(i)[:d]...)
	}
	return v
}

// bigBound returns the bound at θ (big, so that θ ± h is exact) and, when
// xtest is not nil, the predictive mean and variance there:
//
//	Σ = Kuu + Kuf Kfu/σ²,  log|Qff + σ²I| = N log σ² + log|Σ| − log|Kuu|,
//	yᵀ(Qff + σ²I)⁻¹y = yᵀy/σ² − bᵀΣ⁻¹b/σ⁴ (b = Kuf y),
//	tr Qff = Σ_n ‖L⁻¹ k_n‖²,
//	mean(x) = kᵀΣ⁻¹b/σ²,  var(x) = k(x,x) − ‖L⁻¹k‖² + ‖LΣ⁻¹k‖²,
//
// with Kuu including the jitter.
func (c *precisionCase) bigBound(theta []*big.Float, xtest *mat.Dense) (bound *big.Float, mean, variance []*big.Float) {
	n, d := c.x.Dims()
	m, _ := c.z.Dims()
	variance0, ls, noise := theta[0], theta[1:1+d], theta[1+d]
	// Z is taken from θ (big), so that it can be perturbed.
	zb := make([][]*big.Float, m)
	for i := range zb {
		zb[i] = theta[2+d+i*d : 2+d+(i+1)*d]
	}
	kern := func(a []*big.Float, b []float64) *big.Float {
		r2 := bnew()
		for k := range b {
			t := bquo(bsub(a[k], bf(b[k])), ls[k])
			r2 = badd(r2, bmul(t, t))
		}
		return bigProfile(c.kernel, r2, variance0)
	}
	kuu := make([][]*big.Float, m)
	for i := range kuu {
		kuu[i] = make([]*big.Float, m)
		for j := range kuu[i] {
			r2 := bnew()
			for k := 0; k < d; k++ {
				t := bquo(bsub(zb[i][k], zb[j][k]), ls[k])
				r2 = badd(r2, bmul(t, t))
			}
			kuu[i][j] = bigProfile(c.kernel, r2, variance0)
		}
		kuu[i][i] = badd(kuu[i][i], bf(c.jitter))
	}
	l := bigChol(kuu)
	kuf := make([][]*big.Float, n) // columns k_n
	for j := 0; j < n; j++ {
		kuf[j] = make([]*big.Float, m)
		for i := 0; i < m; i++ {
			kuf[j][i] = kern(zb[i], c.x.RawRowView(j))
		}
	}
	// Σ = Kuu + Kuf Kfu/σ², b = Kuf y, tr Qff.
	sig := make([][]*big.Float, m)
	for i := range sig {
		sig[i] = make([]*big.Float, m)
		for j := range sig[i] {
			s := bnew()
			for _, col := range kuf {
				s = badd(s, bmul(col[i], col[j]))
			}
			sig[i][j] = badd(kuu[i][j], bquo(s, noise))
		}
	}
	b := make([]*big.Float, m)
	for i := range b {
		s := bnew()
		for j, col := range kuf {
			s = badd(s, bmul(col[i], bf(c.y[j])))
		}
		b[i] = s
	}
	trQ := bnew()
	for _, col := range kuf {
		trQ = badd(trQ, bigSqNorm(bigSolveL(l, col)))
	}
	ls2 := bigChol(sig)
	yy := bnew()
	for _, v := range c.y {
		yy = badd(yy, bmul(bf(v), bf(v)))
	}
	nf := bf(float64(n))
	logDet := badd(bmul(nf, blog(noise)), bsub(bigLogDetChol(ls2), bigLogDetChol(l)))
	sb := bigSolveL(ls2, b)
	quad := bsub(bquo(yy, noise), bquo(bigSqNorm(sb), bmul(noise, noise)))
	trK := bmul(nf, variance0) // k(x, x) = σ_f² for a stationary kernel
	twoPi := bmul(bf(2), bigPi())
	bound = bmul(bf(-0.5), badd(badd(bmul(nf, blog(twoPi)), logDet), badd(quad, bquo(bsub(trK, trQ), noise))))
	if xtest == nil {
		return bound, nil, nil
	}
	// Σ⁻¹b = L_Σ⁻ᵀ L_Σ⁻¹ b.
	alpha := bigSolveLT(ls2, sb)
	nt, _ := xtest.Dims()
	for j := 0; j < nt; j++ {
		k := make([]*big.Float, m)
		for i := range k {
			k[i] = kern(zb[i], xtest.RawRowView(j))
		}
		mu := bnew()
		for i := range k {
			mu = badd(mu, bmul(k[i], alpha[i]))
		}
		mean = append(mean, bquo(mu, noise))
		v := bsub(variance0, bigSqNorm(bigSolveL(l, k)))
		// ‖L_Σ⁻¹ k‖² = kᵀΣ⁻¹k, and var = k** − kᵀKuu⁻¹k + kᵀΣ⁻¹k.
		variance = append(variance, badd(v, bigSqNorm(bigSolveL(ls2, k))))
	}
	return bound, mean, variance
}

// bigProfile is σ² f(r²) for the named kernel.
func bigProfile(name string, r2, variance *big.Float) *big.Float {
	var f *big.Float
	switch name {
	case "se":
		f = bexp(bmul(r2, bf(-0.5)))
	case "matern32":
		r := bnew().Sqrt(bmul(r2, bf(3)))
		f = bmul(badd(bf(1), r), bexp(bnew().Neg(r)))
	case "matern52":
		r := bnew().Sqrt(bmul(r2, bf(5)))
		poly := badd(badd(bf(1), r), bquo(bmul(r, r), bf(3)))
		f = bmul(poly, bexp(bnew().Neg(r)))
	default:
		panic("bigProfile: " + name)
	}
	return bmul(variance, f)
}

// bigSolveLT returns L⁻ᵀb.
func bigSolveLT(l [][]*big.Float, b []*big.Float) []*big.Float {
	m := len(b)
	x := make([]*big.Float, m)
	for i := m - 1; i >= 0; i-- {
		s := bnew().Set(b[i])
		for k := i + 1; k < m; k++ {
			s = bsub(s, bmul(l[k][i], x[k]))
		}
		x[i] = bquo(s, l[i][i])
	}
	return x
}

// bigPi is π by Machin's formula, 4(4 atan(1/5) − atan(1/239)).
func bigPi() *big.Float {
	atanInv := func(q float64) *big.Float {
		x := bquo(bf(1), bf(q))
		x2 := bmul(x, x)
		sum, pow := bnew(), bnew().Set(x)
		eps := bf(math.Ldexp(1, -bigPrec-8))
		for i := 1; ; i += 2 {
			term := bquo(pow, bf(float64(i)))
			if (i/2)%2 == 1 {
				term.Neg(term)
			}
			sum = badd(sum, term)
			if bnew().Abs(term).Cmp(eps) < 0 {
				break
			}
			pow = bmul(pow, x2)
		}
		return sum
	}
	return bmul(bf(4), bsub(bmul(bf(4), atanInv(5)), atanInv(239)))
}

// float64Bound evaluates SGPR, its gradient with respect to θ and the
// predictive marginals at xtest in float64.
func (c *precisionCase) float64Bound(t *testing.T, opt Options) (bound float64, grad, mean, variance []float64) {
	_, d := c.x.Dims()
	s := param.NewSet()
	must(s.AddScalar("k.variance", c.variance, param.Identity{}))
	must(s.Add("k.lengthscales", mat.NewDense(1, d, append([]float64(nil), c.ls...)), param.Identity{}))
	must(s.AddScalar("noise", c.noise, param.Identity{}))
	must(s.Add("z", mat.DenseCopyOf(c.z), param.Identity{}))
	k, err := kernels.New(c.kernel, d, kernels.Options{Variance: c.variance, Lengthscales: c.ls, ARD: true})
	if err != nil {
		t.Fatal(err)
	}
	tp := ad.NewTape()
	b := s.Bind(tp)
	kb, fb := k.Bind(b, "k."), features.BoundPoints{Z: b.Get("z")}
	out, info, err := SGPR(kb, fb, tp.Const(c.x), c.y, b.Get("noise"), opt)
	if err != nil {
		t.Fatal(err)
	}
	if info.Jitter != c.jitter {
		t.Fatalf("jitter escalated to %g", info.Jitter)
	}
	tp.Backward(out)
	post, _, err := SGPRPosterior(kb, fb, tp.Const(c.x), c.y, b.Get("noise"), opt)
	if err != nil {
		t.Fatal(err)
	}
	mean, variance, err = post.Predict(c.xtest, func(t2 *ad.Tape) (kernels.Bound, features.Bound) {
		b2 := s.Bind(t2)
		return k.Bind(b2, "k."), features.BoundPoints{Z: b2.Get("z")}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Scalar(), b.Gradient(), mean, variance
}

// newPrecisionCase draws N inputs uniform on [−3, 3]^D (seeded), y =
// Σ_d sin(2x_d) + 0.1ε, Z = the first M inputs with x₁ moved to
// x₀ + 9.5e-4 (two inducing inputs 9.5e-4 apart), and 7 test inputs.
func newPrecisionCase(kernel string, seed uint64, n, d, m int, ls, noise float64) *precisionCase {
	rng := rand.New(rand.NewPCG(seed, 41))
	draw := func(r int) *mat.Dense {
		x := mat.NewDense(r, d, nil)
		for i := 0; i < r; i++ {
			for k := 0; k < d; k++ {
				x.Set(i, k, 6*rng.Float64()-3)
			}
		}
		return x
	}
	x := draw(n)
	x.Set(1, 0, x.At(0, 0)+9.5e-4)
	for k := 1; k < d; k++ {
		x.Set(1, k, x.At(0, k))
	}
	y := make([]float64, n)
	for i := range y {
		for k := 0; k < d; k++ {
			y[i] += math.Sin(2 * x.At(i, k))
		}
		y[i] += 0.1 * rng.NormFloat64()
	}
	lsv := make([]float64, d)
	for k := range lsv {
		lsv[k] = ls
	}
	return &precisionCase{
		kernel: kernel, x: x, z: mat.DenseCopyOf(x.Slice(0, m, 0, d)), y: y, xtest: draw(7),
		variance: 1, ls: lsv, noise: noise, jitter: 1e-10,
	}
}

// TestSGPRHighPrecision checks the bound, gradient and predictions on
// ill-conditioned Kuu (cond ≈ 1e10–1e11 with jitter exactly 1e-10) against
// the 160-bit reference, for the default A-first order; the G-first order
// (Options.GramFirst) is logged beside it for comparison.
func TestSGPRHighPrecision(t *testing.T) {
	if testing.Short() {
		t.Skip("160-bit reference")
	}
	for _, tc := range []struct {
		name              string
		c                 *precisionCase
		boundTol, gradTol float64 // absolute on the bound, relative on the gradient
		predTol           float64 // absolute on mean and variance
	}{
		{"se-1d", newPrecisionCase("se", 1, 200, 1, 20, 0.55, 0.01), 1e-7, 1e-7, 1e-9},
		{"se-3d", newPrecisionCase("se", 2, 300, 3, 30, 1.6, 0.01), 5e-7, 1e-8, 1e-9},
		// The A-first bound's error scales as √cond(Kuu)·ε·|L| ≈ 4e-10
		// here; pure-Go BLAS lands at 4e-13, OpenBLAS (FMA kernels) at
		// 2.3e-10, so the bar is 1e-9 (1.3e-11 relative).
		{"matern32-1d", newPrecisionCase("matern32", 3, 200, 1, 20, 2, 0.01), 1e-9, 1e-9, 1e-9},
		{"matern52-1d", newPrecisionCase("matern52", 4, 200, 1, 20, 1.2, 0.01), 1e-8, 1e-8, 1e-9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			theta := c.params()
			tb := make([]*big.Float, len(theta))
			for i, v := range theta {
				tb[i] = bf(v)
			}
			want, wantMean, wantVar := c.bigBound(tb, c.xtest)
			wantF, _ := want.Float64()
			t.Logf("%s: cond(Kuu + 1e-10 I) = %.2g", tc.name, c.condKuu(t))
			// Directional derivatives of the 160-bit bound by central
			// differences, step 1e-20 (truncation ≈ h², rounding ≈ 2⁻¹⁶⁰/h:
			// both far below float64), along each hyperparameter and along
			// three random directions in all of θ (Z included).
			h := bf(1e-20)
			rng := rand.New(rand.NewPCG(99, 1))
			var dirs [][]float64
			for i := 0; i < len(c.ls)+2; i++ {
				e := make([]float64, len(theta))
				e[i] = 1
				dirs = append(dirs, e)
			}
			for range 3 {
				e := make([]float64, len(theta))
				for i := range e {
					e[i] = rng.NormFloat64()
				}
				dirs = append(dirs, e)
			}
			wantDir := make([]float64, len(dirs))
			for k, e := range dirs {
				tp, tm := make([]*big.Float, len(theta)), make([]*big.Float, len(theta))
				for i := range theta {
					step := bmul(h, bf(e[i]))
					tp[i], tm[i] = badd(tb[i], step), bsub(tb[i], step)
				}
				fp, _, _ := c.bigBound(tp, nil)
				fm, _, _ := c.bigBound(tm, nil)
				wantDir[k], _ = bquo(bsub(fp, fm), bmul(bf(2), h)).Float64()
			}
			for _, order := range []struct {
				name string
				opt  Options
			}{{"A-first", Options{Jitter: c.jitter}}, {"G-first", Options{Jitter: c.jitter, GramFirst: true}}} {
				got, grad, mean, variance := c.float64Bound(t, order.opt)
				eb := math.Abs(got - wantF)
				eg := 0.0
				for k, e := range dirs {
					dd := 0.0
					for i, g := range grad {
						dd += g * e[i]
					}
					eg = math.Max(eg, math.Abs(dd-wantDir[k])/math.Max(1, math.Abs(wantDir[k])))
				}
				ep := 0.0
				for i := range mean {
					m, _ := wantMean[i].Float64()
					v, _ := wantVar[i].Float64()
					ep = math.Max(ep, math.Max(math.Abs(mean[i]-m), math.Abs(variance[i]-v)))
				}
				t.Logf("%s %s: bound %.15g, error %.2g abs (%.2g rel); directional derivatives %.2g rel; predictions %.2g abs",
					tc.name, order.name, wantF, eb, eb/math.Abs(wantF), eg, ep)
				if order.opt.GramFirst {
					continue
				}
				if eb > tc.boundTol {
					t.Errorf("bound off by %.2g, want ≤ %.2g", eb, tc.boundTol)
				}
				if eg > tc.gradTol {
					t.Errorf("gradient off by %.2g relative, want ≤ %.2g", eg, tc.gradTol)
				}
				if ep > tc.predTol {
					t.Errorf("predictions off by %.2g, want ≤ %.2g", ep, tc.predTol)
				}
			}
		})
	}
}

// TestBigMath checks the 160-bit helpers against float64 math.
func TestBigMath(t *testing.T) {
	for _, x := range []float64{-30, -1, -1e-5, 0, 0.3, 2.5} {
		if got, _ := bexp(bf(x)).Float64(); math.Abs(got-math.Exp(x)) > 4e-16*math.Exp(x) {
			t.Errorf("exp(%g) = %v, math.Exp %v", x, got, math.Exp(x))
		}
	}
	for _, x := range []float64{1e-12, 0.5, 1, 3, 1e7} {
		if got, _ := blog(bf(x)).Float64(); math.Abs(got-math.Log(x)) > 4e-16*math.Max(1, math.Abs(math.Log(x))) {
			t.Errorf("log(%g) = %v, math.Log %v", x, got, math.Log(x))
		}
	}
	if got, _ := bigPi().Float64(); got != math.Pi {
		t.Errorf("π = %v", got)
	}
}

// condKuu is the 2-norm condition number of Kuu with the jitter.
func (c *precisionCase) condKuu(t *testing.T) float64 {
	_, d := c.x.Dims()
	k, err := kernels.New(c.kernel, d, kernels.Options{Variance: c.variance, Lengthscales: c.ls, ARD: true})
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	must(k.Declare(s, "k."))
	kuu := kernels.Matrix(k, s, "k.", c.z, c.z)
	m, _ := kuu.Dims()
	for i := 0; i < m; i++ {
		kuu.Set(i, i, kuu.At(i, i)+c.jitter)
	}
	return mat.Cond(kuu, 2)
}
