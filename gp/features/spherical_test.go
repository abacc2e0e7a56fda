package features_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/gp/sphere"
	"sgplab/internal/testhelp"
)

// vishData is a small regression set in D dimensions.
func vishData(n, d int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := 2*rng.Float64() - 1
			x.Set(i, j, v)
			s += math.Sin(2*v + float64(j))
		}
		y[i] = s + 0.1*rng.NormFloat64()
	}
	return x, y
}

type vishSetup struct {
	k   kernels.Kernel
	set *param.Set
}

func newVishSetup(t testing.TB, kernel string, d int, opts kernels.Options, noise float64) *vishSetup {
	t.Helper()
	k, err := kernels.New(kernel, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := param.NewSet()
	if err := k.Declare(s, "kern."); err != nil {
		t.Fatal(err)
	}
	if err := s.AddScalar("noise", noise, param.DefaultPositive); err != nil {
		t.Fatal(err)
	}
	return &vishSetup{k: k, set: s}
}

func (v *vishSetup) bind(t *ad.Tape) (kernels.ZonalBound, *param.Bound) {
	b := v.set.Bind(t)
	return v.k.Bind(b, "kern.").(kernels.ZonalBound), b
}

func (v *vishSetup) features(t testing.TB, maxLevel int) *features.SphericalHarmonics {
	t.Helper()
	kb, _ := v.bind(ad.NewTape())
	f, err := features.NewSphericalHarmonicsFor(kb, maxLevel)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The collapsed bound from ΦΦᵀ precomputed once (ComputeStats with Phi, a
// diagonal precision) equals the generic SGPR bound fed the same Kuu and
// Kuf, and the trace term's Σ k(x,x) is the kernel's diagonal.
func TestVISHCollapsedMatchesSGPR(t *testing.T) {
	x, y := vishData(150, 3, 1)
	for _, c := range []struct {
		kernel string
		levels int
	}{{"sphere-matern32", 4}, {"chordal-matern52", 5}, {"arccos1", 6}, {"sphere-se", 3}} {
		v := newVishSetup(t, c.kernel, 3, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.8}, WeightVariances: []float64{0.7}, BiasVariance: 1.1}, 0.05)
		f := v.features(t, c.levels)
		kb0, _ := v.bind(ad.NewTape())
		stats, err := inference.ComputeStats(x, y, f.M(), func(dst, xc *mat.Dense) (*mat.Dense, error) { return f.Phi(dst, kb0, xc) })
		if err != nil {
			t.Fatal(err)
		}
		tp := ad.NewTape()
		kb, b := v.bind(tp)
		fb := f.Bind(b, "")
		kuu, err := features.StructureOf(kb, fb, 0, features.AllForms)
		if err != nil {
			t.Fatal(err)
		}
		if kuu.Precision == nil {
			t.Fatal("harmonic features did not offer their diagonal precision")
		}
		got, _, err := inference.CollapsedFromStats(stats, kuu, kernels.DiagSum(tp, kb, x), b.Get("noise"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := inference.SGPR(kb, fb, tp.Const(x), y, b.Get("noise"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(got.Scalar() - want.Scalar()); d > 1e-9*math.Abs(want.Scalar()) {
			t.Errorf("%s: collapsed from stats %.12g, SGPR %.12g", c.kernel, got.Scalar(), want.Scalar())
		}
		if kd := ad.Sum(kb.Diag(tp.Const(x))).Scalar(); math.Abs(kd-kernels.DiagSum(tp, kb, x).Scalar()) > 1e-12*kd {
			t.Errorf("%s: Σ k(x,x) = %v, DiagSum %v", c.kernel, kd, kernels.DiagSum(tp, kb, x).Scalar())
		}
	}
}

// TestVISHPhiInto: Phi writes into the matrix it is offered, whatever that
// held, bitwise what it returns when it allocates, and a call with the
// matrix given (the precompute's every chunk) allocates next to nothing:
// its scratch and the basis's are reused from call to call.
func TestVISHPhiInto(t *testing.T) {
	const n = 3000
	x, _ := vishData(n, 3, 3)
	other, _ := vishData(n/2, 3, 4)
	v := newVishSetup(t, "sphere-matern32", 3, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.8}, WeightVariances: []float64{0.7}, BiasVariance: 1.1}, 0.05)
	f := v.features(t, 4)
	kb, _ := v.bind(ad.NewTape())
	want, err := f.Phi(nil, kb, x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Phi(nil, kb, other); err != nil { // other contents in the scratch
		t.Fatal(err)
	}
	dst := mat.NewDense(f.M(), n, nil)
	for i := range dst.RawMatrix().Data {
		dst.RawMatrix().Data[i] = math.NaN()
	}
	got, err := f.Phi(dst, kb, x)
	if err != nil {
		t.Fatal(err)
	}
	if got != dst {
		t.Fatal("Phi did not write into the matrix it was offered")
	}
	for i, w := range want.RawMatrix().Data {
		if math.Float64bits(got.RawMatrix().Data[i]) != math.Float64bits(w) {
			t.Fatalf("entry %d: %v written into dst, %v allocated", i, got.RawMatrix().Data[i], w)
		}
	}
	if _, err := f.Phi(mat.NewDense(f.M(), n-1, nil), kb, x); err == nil {
		t.Error("a destination of the wrong shape was accepted")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 20
	for range calls {
		if _, err := f.Phi(dst, kb, x); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per, phi := (after.TotalAlloc-before.TotalAlloc)/calls, uint64(8*f.M()*n); per > phi/20 {
		t.Errorf("Phi into a given matrix allocated %d bytes per call; Φ itself is %d", per, phi)
	}
}

// The bound is below the exact log marginal likelihood of the same
// input-space kernel, and the gap shrinks monotonically as levels are
// added (nested inducing sets); with every level of a truncated spectral
// kernel the bound is exact.
func TestVISHBoundBelowExact(t *testing.T) {
	x, y := vishData(120, 2, 2)
	for _, kernel := range []string{"sphere-matern32", "chordal-matern32", "arccos1"} {
		v := newVishSetup(t, kernel, 2, kernels.Options{Variance: 1.1, Lengthscales: []float64{0.7}, BiasVariance: 0.8, Truncation: 9}, 0.02)
		tp := ad.NewTape()
		kb, b := v.bind(tp)
		exact, _, err := inference.ExactLML(kb, tp.Const(x), y, b.Get("noise"), inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(-1)
		for L := 0; L <= 8; L++ {
			f := v.features(t, L)
			got, _, err := inference.SGPR(kb, f.Bind(b, ""), tp.Const(x), y, b.Get("noise"), inference.Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := got.Scalar()
			if e > exact.Scalar()+1e-8*math.Abs(exact.Scalar()) {
				t.Errorf("%s L=%d: bound %.10g above exact %.10g", kernel, L, e, exact.Scalar())
			}
			if e < prev-1e-9*math.Abs(prev) {
				t.Errorf("%s L=%d: bound %.10g below the bound with fewer levels %.10g", kernel, L, e, prev)
			}
			prev = e
		}
		if kernel == "sphere-matern32" && math.Abs(prev-exact.Scalar()) > 1e-7*math.Abs(exact.Scalar()) {
			t.Errorf("all 9 levels of the 9-level series: bound %.12g, exact %.12g", prev, exact.Scalar())
		}
	}
}

// Mercer reconstruction with the features: Σ_m λ_m Kuf[m,n]² = ρ_n² Σ_ℓ
// λ_ℓ N(d,ℓ)/Ω, which for every level of the truncated series is ρ² s(1)
// = k(x, x).
func TestVISHMercerDiagonal(t *testing.T) {
	x, _ := vishData(20, 4, 3)
	v := newVishSetup(t, "sphere-matern52", 4, kernels.Options{Variance: 2.1, Lengthscales: []float64{0.5}, Truncation: 7}, 0.1)
	f := v.features(t, 6)
	tp := ad.NewTape()
	kb, b := v.bind(tp)
	fb := f.Bind(b, "")
	kuf := fb.Kuf(kb, tp.Const(x)).Value()
	st, _ := features.StructureOf(kb, fb, 0, features.AllForms)
	prec := st.Precision.Value()
	kd := kb.Diag(tp.Const(x)).Value()
	for n := 0; n < 20; n++ {
		s := 0.0
		for m := 0; m < f.M(); m++ {
			s += prec.At(m, 0) * kuf.At(m, n) * kuf.At(m, n)
		}
		if math.Abs(s-kd.At(n, 0)) > 1e-12*kd.At(n, 0) {
			t.Errorf("point %d: Σ λ Kuf² = %.15g, k(x,x) = %.15g", n, s, kd.At(n, 0))
		}
	}
}

// rotated applies a block-diagonal orthogonal Q (one random rotation per
// level) to the features: another orthonormal basis of the same levels.
type rotated struct {
	features.Bound
	q *mat.Dense
}

func (r rotated) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	return ad.MatMul(x.Tape().Const(r.q), r.Bound.Kuf(k, x))
}

// Unwrap exposes the harmonics' diagonal Kuu (unchanged by Q, since λ is
// constant within a level).
func (r rotated) Unwrap() features.Bound { return r.Bound }

func randomRotation(rng *rand.Rand, levelOf []int) *mat.Dense {
	m := len(levelOf)
	q := mat.NewDense(m, m, nil)
	for lo := 0; lo < m; {
		hi := lo
		for hi < m && levelOf[hi] == levelOf[lo] {
			hi++
		}
		n := hi - lo
		a := mat.NewDense(n, n, nil)
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = rng.NormFloat64()
		}
		var qr mat.QR
		qr.Factorize(a)
		var qm mat.Dense
		qr.QTo(&qm)
		q.Slice(lo, hi, lo, hi).(*mat.Dense).Copy(&qm)
		lo = hi
	}
	return q
}

func TestVISHBasisInvariance(t *testing.T) {
	x, y := vishData(80, 3, 4)
	v := newVishSetup(t, "sphere-matern32", 3, kernels.Options{Variance: 1, Lengthscales: []float64{1}}, 0.1)
	f := v.features(t, 3)
	tp := ad.NewTape()
	kb, b := v.bind(tp)
	fb := f.Bind(b, "")
	a, _, _ := inference.SGPR(kb, fb, tp.Const(x), y, b.Get("noise"), inference.Options{})
	r := rotated{Bound: fb, q: randomRotation(rand.New(rand.NewPCG(1, 5)), f.LevelOf())}
	c, _, err := inference.SGPR(kb, r, tp.Const(x), y, b.Get("noise"), inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Scalar()-c.Scalar()) > 1e-10*math.Abs(a.Scalar()) {
		t.Errorf("ELBO %.14g with one basis, %.14g with a rotated one", a.Scalar(), c.Scalar())
	}
}

// Gradients of the collapsed bound with respect to every kernel parameter
// (variance, lengthscale, weight and bias variances: the last two through
// the harmonics' gradient) and the noise, against central differences.
func TestVISHGradients(t *testing.T) {
	x, y := vishData(40, 2, 5)
	for _, kernel := range []string{"sphere-matern32", "chordal-matern52", "arccos1"} {
		t.Run(kernel, func(t *testing.T) {
			v := newVishSetup(t, kernel, 2, kernels.Options{Variance: 1.2, Lengthscales: []float64{0.9}, WeightVariances: []float64{0.8, 1.3}, ARD: true, BiasVariance: 0.7, Truncation: 12}, 0.05)
			f := v.features(t, 4)
			checkSetGradient(t, v.set, func(tp *ad.Tape, b *param.Bound) (*ad.Node, error) {
				out, _, err := inference.SGPR(v.k.Bind(b, "kern."), f.Bind(b, ""), tp.Const(x), y, b.Get("noise"), inference.Options{})
				return out, err
			}, 2e-6)
		})
	}
}

// Whitened SVGP on the diagonal Kuu equals SVGP on the same features
// presented with a dense Kuu (the generic Cholesky path).
func TestVISHSVGPDiagonalMatchesDense(t *testing.T) {
	x, y := vishData(60, 3, 6)
	v := newVishSetup(t, "sphere-matern32", 3, kernels.Options{Variance: 1, Lengthscales: []float64{0.8}}, 0.1)
	f := v.features(t, 2)
	m := f.M()
	mu, sq := testhelp.RandQ(rand.New(rand.NewPCG(2, 2)), m)
	ycol := mat.NewDense(len(y), 1, y)
	for _, whiten := range []bool{true, false} {
		vals := make([]float64, 2)
		for i, dense := range []bool{false, true} {
			tp := ad.NewTape()
			kb, b := v.bind(tp)
			var fb features.Bound = f.Bind(b, "")
			if dense {
				fb = features.DenseKuu(fb)
			}
			noise := b.Get("noise")
			ve := func(mu, v *ad.Node) *ad.Node {
				// Gaussian: −½log 2πσ² − ((y−μ)² + v)/(2σ²).
				r := ad.Sub(tp.Const(ycol), mu)
				q := ad.Add(ad.Square(r), v)
				return ad.AddScalar(ad.Scale(-0.5, ad.DivScalar(q, noise)), ad.Scale(-0.5, ad.AddConst(ad.Log(noise), math.Log(2*math.Pi))))
			}
			out, _, err := inference.SVGP(kb, fb, tp.Const(x), ve, inference.Variational{Mu: tp.Const(mu), Sqrt: tp.Const(sq), Whiten: whiten}, len(y), inference.Options{})
			if err != nil {
				t.Fatal(err)
			}
			vals[i] = out.Scalar()
		}
		if math.Abs(vals[0]-vals[1]) > 1e-9*math.Abs(vals[1]) {
			t.Errorf("whiten=%v: diagonal Kuu %.12g, dense Kuu %.12g", whiten, vals[0], vals[1])
		}
	}
}

func TestSphericalHarmonicsBadInput(t *testing.T) {
	if _, err := features.NewSphericalHarmonics(1, 2, sphere.Parity{}); err == nil {
		t.Error("d = 1 accepted")
	}
	if _, err := features.NewSphericalHarmonics(3, -1, sphere.Parity{}); err == nil {
		t.Error("negative level accepted")
	}
	// Chordal SE coefficients fall below the quadrature's accuracy by
	// level ~13 on S²: the features refuse rather than divide by noise.
	v := newVishSetup(t, "chordal-se", 2, kernels.Options{}, 0.1)
	kb, _ := v.bind(ad.NewTape())
	_, err := features.NewSphericalHarmonicsFor(kb, 20)
	if err == nil {
		t.Fatal("levels beyond float64 accepted")
	}
	// Arc-cosine: odd levels ≥ 3 are dropped, not given infinite Kuu.
	a := newVishSetup(t, "arccos1", 2, kernels.Options{}, 0.1)
	ka, _ := a.bind(ad.NewTape())
	f, err := features.NewSphericalHarmonicsFor(ka, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Levels(); fmt.Sprint(got) != "[0 1 2 4]" || f.M() != 1+3+5+9 {
		t.Errorf("arc-cosine levels %v, M = %d", got, f.M())
	}
}

// A prediction's Kuf (weight and bias variances fixed, inputs constant)
// writes ρ^p into Φ as it is computed: bitwise the Kuf of the same values
// with the variances trainable (Φ, then the column scale on the tape), and
// with nothing to differentiate.
func TestVISHKufFixedWeightsBitwise(t *testing.T) {
	x, _ := vishData(300, 3, 5)
	v := newVishSetup(t, "sphere-matern32", 3, kernels.Options{Variance: 1.3, Lengthscales: []float64{0.8}, WeightVariances: []float64{0.7}, BiasVariance: 1.1}, 0.05)
	f := v.features(t, 4)
	kuf := func(trainable bool) *ad.Node {
		v.set.SetAllTrainable(trainable)
		tp := ad.NewTape()
		kb, b := v.bind(tp)
		return f.Bind(b, "").Kuf(kb, tp.Const(x))
	}
	want := kuf(true)
	got := kuf(false)
	if !want.NeedsGrad() || got.NeedsGrad() {
		t.Fatalf("trainable Kuf needs a gradient: %v, fixed one: %v", want.NeedsGrad(), got.NeedsGrad())
	}
	for i, w := range want.Value().RawMatrix().Data {
		if g := got.Value().RawMatrix().Data[i]; math.Float64bits(g) != math.Float64bits(w) {
			t.Fatalf("entry %d: %v fixed, %v trainable", i, g, w)
		}
	}
}
