package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

func sgprObjective(p *problem, f func(b *param.Bound) features.Bound, opt Options) objective {
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, _, err := SGPR(p.kernel(b), f(b), t.Const(p.x), p.y, b.Get("noise_variance"), opt)
		return out, err
	}
}

// naiveTitsias is testhelp.TitsiasBound for p's SE kernel and inducing
// inputs z.
func naiveTitsias(p *problem, z *mat.Dense) float64 {
	diag := make([]float64, len(p.y))
	for i := range diag {
		diag[i] = p.vari
	}
	b, err := testhelp.TitsiasBound(seMatrix(z, z, p.vari, p.ls), seMatrix(z, p.x, p.vari, p.ls), diag, p.y, p.noise)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSGPRWithZEqualToXIsExact(t *testing.T) {
	for _, tc := range []struct {
		seed  uint64
		n, d  int
		noise float64
	}{{11, 20, 2, 0.1}, {12, 40, 3, 0.5}, {13, 15, 1, 1.0}} {
		p := newProblem(tc.seed, tc.n, tc.d, tc.noise).addZ(newProblem(tc.seed, tc.n, tc.d, tc.noise).x)
		exact := evaluate(t, p.set, exactObjective(p, Options{}))
		got := evaluate(t, p.set, sgprObjective(p, p.points, Options{}))
		e := math.Abs(got-exact) / math.Abs(exact)
		if e > 1e-8 {
			t.Errorf("seed %d: SGPR(Z = X) = %.12g, exact %.12g (rel %.2g)", tc.seed, got, exact, e)
		}
		t.Logf("seed %d (N=%d): SGPR(Z = X) − exact LML: rel %.2g", tc.seed, tc.n, e)
	}
}

func TestSGPRMatchesNaiveAndIsBelowExact(t *testing.T) {
	for _, tc := range []struct {
		seed    uint64
		n, d, m int
		noise   float64
	}{{21, 30, 2, 5, 0.1}, {22, 50, 3, 12, 0.3}, {23, 25, 1, 3, 0.05}} {
		p := newProblem(tc.seed, tc.n, tc.d, tc.noise)
		z := testhelp.RandMat(rand.New(rand.NewPCG(tc.seed, 3)), tc.m, tc.d, 1)
		p.addZ(z)
		got := evaluate(t, p.set, sgprObjective(p, p.points, Options{}))
		want := naiveTitsias(p, z)
		if e := testhelp.RelErr(got, want); e > 1e-9 {
			t.Errorf("seed %d: SGPR = %.12g, naive %.12g (rel %.2g)", tc.seed, got, want, e)
		}
		exact := evaluate(t, p.set, exactObjective(p, Options{}))
		if got > exact {
			t.Errorf("seed %d: SGPR bound %.10g exceeds exact LML %.10g", tc.seed, got, exact)
		}
	}
}

func TestSGPRGradient(t *testing.T) {
	p := newProblem(31, 15, 2, 0.2)
	p.addZ(testhelp.RandMat(rand.New(rand.NewPCG(31, 1)), 4, 2, 1))
	checkGradient(t, p.set, sgprObjective(p, p.points, Options{Jitter: 1e-8}), 1e-6)
}

func TestSGPRPredictWithZEqualToXIsExact(t *testing.T) {
	p := newProblem(41, 25, 2, 0.15)
	p.addZ(p.x)
	xs := testhelp.RandMat(rand.New(rand.NewPCG(41, 2)), 9, 2, 1.2)
	_, wantMean, wantVar := naiveExact(p, xs)
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	post, q, err := SGPRPosterior(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mean, variance, err := post.Predict(xs, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := p.set.Bind(t)
		return p.kernel(b), p.points(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range mean {
		if math.Abs(mean[i]-wantMean[i]) > 1e-7 || math.Abs(variance[i]-wantVar[i]) > 1e-7 {
			t.Errorf("point %d: mean %.10g var %.10g, exact %.10g %.10g", i, mean[i], variance[i], wantMean[i], wantVar[i])
		}
	}
	// With Z = X, q(u) is the exact posterior of f at X:
	// m = K(K + σ²I)⁻¹y.
	k := seMatrix(p.x, p.x, p.vari, p.ls)
	ks := mat.DenseCopyOf(k)
	for i := range p.y {
		ks.Set(i, i, ks.At(i, i)+p.noise)
	}
	var alpha, m mat.Dense
	if err := alpha.Solve(ks, mat.NewDense(len(p.y), 1, append([]float64(nil), p.y...))); err != nil {
		t.Fatal(err)
	}
	m.Mul(k, &alpha)
	for i := range p.y {
		if d := math.Abs(q.Mean.At(i, 0) - m.At(i, 0)); d > 1e-7 {
			t.Errorf("q(u) mean[%d] = %.10g, exact posterior mean %.10g", i, q.Mean.At(i, 0), m.At(i, 0))
		}
	}
}

// cosFeature has Kuf = λ ∘ cos(Ω xᵀ + b) and Kuu = diag(λ). It is the exact
// inducing set of the finite-rank kernel k(x, x') = Σ λ_m φ_m(x) φ_m(x')
// (cosKernel), so the collapsed bound must equal that kernel's exact LML.
type cosFeature struct {
	omega  *mat.Dense // M×(D+1): frequencies and phases
	lambda *ad.Node   // M×1
	dense  bool       // hide DiagonalKuu, to exercise the dense path
}

func (f cosFeature) phi(x *ad.Node) *ad.Node {
	n, d := x.Dims()
	aug := mat.NewDense(n, d+1, nil)
	aug.Copy(x.Value())
	for i := 0; i < n; i++ {
		aug.Set(i, d, 1)
	}
	return ad.Cos(ad.MatMulTB(x.Tape().Const(f.omega), x.Tape().Const(aug)))
}

func (f cosFeature) M() int                         { m, _ := f.omega.Dims(); return m }
func (f cosFeature) Kuu(kernels.Bound) *ad.Node     { return ad.DiagMat(f.lambda) }
func (f cosFeature) KuuDiag(kernels.Bound) *ad.Node { return f.lambda }
func (f cosFeature) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node {
	return ad.MulColVec(f.phi(x), f.lambda)
}

type denseOnly struct{ cosFeature }

func (f denseOnly) KuuDiag() {} // shadows the promoted method: no DiagonalKuu

type cosKernel struct{ cosFeature }

func (k cosKernel) K(x, z *ad.Node) *ad.Node {
	return ad.MatMulTA(ad.MulColVec(k.phi(x), k.lambda), k.phi(z))
}
func (k cosKernel) Diag(x *ad.Node) *ad.Node {
	return ad.T(ad.ColSums(ad.MulColVec(ad.Square(k.phi(x)), k.lambda)))
}

func newCosProblem(seed uint64, n, d, m int, noise float64) (*problem, *mat.Dense) {
	p := newProblem(seed, n, d, noise)
	rng := rand.New(rand.NewPCG(seed, 5))
	omega := testhelp.RandMat(rng, m, d+1, 1)
	lambda := mat.NewDense(m, 1, nil)
	for i := 0; i < m; i++ {
		omega.Set(i, d, 2*math.Pi*rng.Float64())
		lambda.Set(i, 0, 0.5/float64(i+1))
	}
	must(p.set.Add("lambda", lambda, param.DefaultPositive))
	return p, omega
}

func TestSGPRDiagonalFeature(t *testing.T) {
	p, omega := newCosProblem(51, 30, 2, 8, 0.1)
	feat := func(b *param.Bound) cosFeature { return cosFeature{omega: omega, lambda: b.Get("lambda")} }
	exact := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, _, err := ExactLML(cosKernel{feat(b)}, tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
		return out, err
	}
	for _, tc := range []struct {
		name string
		f    func(b *param.Bound) features.Bound
	}{
		{"diagonal", func(b *param.Bound) features.Bound { return feat(b) }},
		{"dense", func(b *param.Bound) features.Bound { return denseOnly{feat(b)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := tc.f(p.set.Bind(ad.NewTape())).(features.DiagonalKuu); ok != (tc.name == "diagonal") {
				t.Fatalf("DiagonalKuu implemented = %v", ok)
			}
			obj := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
				out, _, err := SGPR(cosKernel{feat(b)}, tc.f(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
				return out, err
			}
			got, want := evaluate(t, p.set, obj), evaluate(t, p.set, exact)
			if e := testhelp.RelErr(got, want); e > 1e-10 {
				t.Errorf("SGPR = %.12g, exact LML of the finite-rank kernel %.12g", got, want)
			}
			checkGradient(t, p.set, obj, 1e-6)
		})
	}
}

// badFeature has Kuu = −I and no diagonal shortcut.
type badFeature struct{ denseOnly }

func (f badFeature) Kuu(kernels.Bound) *ad.Node {
	return f.lambda.Tape().Const(mat.NewDense(3, 3, []float64{-1, 0, 0, 0, -1, 0, 0, 0, -1}))
}

func TestSGPRNotPositiveDefinite(t *testing.T) {
	p, omega := newCosProblem(61, 10, 1, 3, 0.1)
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	good := cosFeature{omega: omega, lambda: b.Get("lambda")}
	bad := badFeature{denseOnly{good}}
	_, _, err := SGPR(cosKernel{good}, bad, tape.Const(p.x), p.y, b.Get("noise_variance"), Options{MaxTries: 2})
	if err == nil || !strings.Contains(err.Error(), "Kuu (3×3) not positive definite") {
		t.Errorf("error = %v, want one naming Kuu (3×3)", err)
	}
	// A diagonal Kuu with a negative entry.
	neg := cosFeature{omega: omega, lambda: tape.Const(mat.NewDense(3, 1, []float64{1, -2, 1}))}
	_, _, err = SGPR(cosKernel{good}, neg, tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
	if err == nil || !strings.Contains(err.Error(), "Kuu (3×3, diagonal) not positive definite") {
		t.Errorf("error = %v, want one naming the diagonal Kuu", err)
	}
}
