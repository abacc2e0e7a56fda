package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/testhelp"
)

// fixedFeature has a θ-independent Kuf = T cos(Ω xᵀ + b) and
// Kuu = T diag(1/λ) Tᵀ, so Kfu Kuu⁻¹ Kuf = Σ λ_m φ_m φ_mᵀ for any invertible
// T. T = nil means the identity (diagonal Kuu).
type fixedFeature struct {
	cos    cosFeature
	tmix   *mat.Dense // M×M or nil
	hideDi bool       // hide DiagonalKuu even when T = nil
}

func (f fixedFeature) phi(x *mat.Dense) *mat.Dense {
	t := ad.NewTape()
	p := f.cos.phi(t.Const(x)).Value()
	if f.tmix == nil {
		return p
	}
	var out mat.Dense
	out.Mul(f.tmix, p)
	return &out
}

func (f fixedFeature) M() int { return f.cos.M() }
func (f fixedFeature) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node {
	return x.Tape().Const(f.phi(x.Value()))
}
func (f fixedFeature) Kuu(kernels.Bound) *ad.Node {
	d := ad.DiagMat(ad.Pow(f.cos.lambda, -1))
	if f.tmix == nil {
		return d
	}
	tm := f.cos.lambda.Tape().Const(f.tmix)
	return ad.MatMulTB(ad.MatMul(tm, d), tm)
}

type diagFixed struct{ fixedFeature }

func (f diagFixed) KuuDiag(kernels.Bound) *ad.Node { return ad.Pow(f.cos.lambda, -1) }

var _ features.DiagonalKuu = diagFixed{}

func TestComputeStatsMatchesDirect(t *testing.T) {
	defer func(f, r, m int) { statsChunkFloats, statsChunkRows, statsChunkMinRows = f, r, m }(statsChunkFloats, statsChunkRows, statsChunkMinRows)
	for _, tc := range []struct {
		name  string
		n     int
		chunk int
	}{
		{"one chunk", 50, 10000},
		{"many chunks", 203, 16},
		{"chunk of one row", 7, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statsChunkRows, statsChunkMinRows = tc.chunk, 1
			p, omega := newCosProblem(3, tc.n, 2, 9, 0.1)
			f := fixedFeature{cos: cosFeature{omega: omega}}
			s, err := ComputeStats(p.x, p.y, f.M(), func(_, x *mat.Dense) (*mat.Dense, error) { return f.phi(x), nil })
			if err != nil {
				t.Fatal(err)
			}
			phi := f.phi(p.x)
			var want mat.Dense
			want.Mul(phi, phi.T())
			for i := 0; i < f.M(); i++ {
				r := 0.0
				for j, v := range p.y {
					r += phi.At(i, j) * v
				}
				if math.Abs(s.R[i]-r) > 1e-10*math.Max(1, math.Abs(r)) {
					t.Errorf("R[%d] = %v, direct %v", i, s.R[i], r)
				}
				for j := 0; j < f.M(); j++ {
					if d := math.Abs(s.P.At(i, j) - want.At(i, j)); d > 1e-10*math.Max(1, math.Abs(want.At(i, j))) {
						t.Errorf("P[%d,%d] = %v, direct %v", i, j, s.P.At(i, j), want.At(i, j))
					}
				}
			}
			yy := 0.0
			for _, v := range p.y {
				yy += v * v
			}
			if s.N != tc.n || math.Abs(s.YY-yy) > 1e-12*yy {
				t.Errorf("N = %d, yᵀy = %v; want %d, %v", s.N, s.YY, tc.n, yy)
			}
		})
	}
}

// TestComputeStatsSameBitsOnAnyCoreCount checks that the statistics are
// bitwise the same under GOMAXPROCS 1, 2 and 3 when the rows span many
// chunks (more than there are groups, so groups hold several chunks).
func TestComputeStatsSameBitsOnAnyCoreCount(t *testing.T) {
	defer func(f, r, m int) { statsChunkFloats, statsChunkRows, statsChunkMinRows = f, r, m }(statsChunkFloats, statsChunkRows, statsChunkMinRows)
	statsChunkRows, statsChunkMinRows = 37, 1
	p, omega := newCosProblem(5, 2000, 2, 15, 0.1)
	f := fixedFeature{cos: cosFeature{omega: omega}}
	stats := func() *Stats {
		s, err := ComputeStats(p.x, p.y, f.M(), func(_, x *mat.Dense) (*mat.Dense, error) { return f.phi(x), nil })
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	want := stats()
	for _, procs := range []int{2, 3} {
		runtime.GOMAXPROCS(procs)
		got := stats()
		for i := range want.R {
			if math.Float64bits(got.R[i]) != math.Float64bits(want.R[i]) {
				t.Fatalf("GOMAXPROCS=%d: R[%d] = %v, %v on one core", procs, i, got.R[i], want.R[i])
			}
			for j := range want.R {
				if math.Float64bits(got.P.At(i, j)) != math.Float64bits(want.P.At(i, j)) {
					t.Fatalf("GOMAXPROCS=%d: P[%d,%d] = %v, %v on one core", procs, i, j, got.P.At(i, j), want.P.At(i, j))
				}
			}
		}
	}
}

// TestComputeStatsReusesBuffers: a feature map that writes Φ into the
// matrix it is offered gets one buffer per goroutine for the whole pass,
// not one per chunk, always of the chunk's shape, and the statistics are
// bitwise those of a map that allocates every Φ.
func TestComputeStatsReusesBuffers(t *testing.T) {
	defer func(f, r, m int) { statsChunkFloats, statsChunkRows, statsChunkMinRows = f, r, m }(statsChunkFloats, statsChunkRows, statsChunkMinRows)
	statsChunkRows, statsChunkMinRows = 37, 1
	p, omega := newCosProblem(5, 2000, 2, 15, 0.1)
	f := fixedFeature{cos: cosFeature{omega: omega}}
	want, err := ComputeStats(p.x, p.y, f.M(), Allocating(func(x *mat.Dense) (*mat.Dense, error) { return f.phi(x), nil }))
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		var mu sync.Mutex
		buffers := map[*float64]bool{}
		calls := 0
		got, err := ComputeStats(p.x, p.y, f.M(), func(dst, x *mat.Dense) (*mat.Dense, error) {
			n, _ := x.Dims()
			if r, c := dst.Dims(); r != f.M() || c != n {
				return nil, fmt.Errorf("offered %d×%d for %d rows", r, c, n)
			}
			dst.Copy(f.phi(x))
			mu.Lock()
			buffers[&dst.RawMatrix().Data[0]] = true
			calls++
			mu.Unlock()
			return dst, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls < 50 || len(buffers) > procs {
			t.Errorf("GOMAXPROCS=%d: %d chunks written into %d buffers, want at most one per goroutine", procs, calls, len(buffers))
		}
		for i := range want.R {
			if math.Float64bits(got.R[i]) != math.Float64bits(want.R[i]) {
				t.Fatalf("GOMAXPROCS=%d: R[%d] = %v, %v with allocated Φ", procs, i, got.R[i], want.R[i])
			}
			for j := range want.R {
				if math.Float64bits(got.P.At(i, j)) != math.Float64bits(want.P.At(i, j)) {
					t.Fatalf("GOMAXPROCS=%d: P[%d,%d] = %v, %v with allocated Φ", procs, i, j, got.P.At(i, j), want.P.At(i, j))
				}
			}
		}
	}
}

// TestCollapsedFromStatsReadsPInPlace: the bound reads P from the
// statistics' storage, which ComputeStats leaves with both triangles,
// instead of copying it twice per evaluation (two M×M matrices of garbage
// per L-BFGS step), and gives bitwise the bound of statistics whose P
// storage holds one triangle (read through a copy).
func TestCollapsedFromStatsReadsPInPlace(t *testing.T) {
	const m, n = 120, 600
	rng := rand.New(rand.NewPCG(2, 3))
	phi := testhelp.RandMat(rng, m, n, 1)
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		x.Set(i, 0, float64(i))
		y[i] = rng.NormFloat64()
	}
	stats, err := ComputeStats(x, y, m, Allocating(func(xc *mat.Dense) (*mat.Dense, error) {
		lo, r := int(xc.At(0, 0)), xc.RawMatrix().Rows
		return mat.DenseCopyOf(phi.Slice(0, m, lo, lo+r)), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	upper := *stats
	upper.P = mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			upper.P.SetSym(i, j, stats.P.At(i, j)) // the lower triangle of the storage stays zero
		}
	}
	ones := mat.NewDense(m, 1, nil)
	for i := range m {
		ones.Set(i, 0, 1)
	}
	tape := ad.NewTape()
	bound := func(s *Stats) float64 {
		tape.Reset()
		b, _, err := CollapsedFromStats(s, Kuu{Diag: tape.Const(ones)}, tape.Scalar(2*float64(m*n)), tape.Scalar(0.5), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Scalar()
	}
	if got, want := bound(stats), bound(&upper); math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("bound %v from the full storage, %v from one triangle", got, want)
	}
	bound(stats)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const evals = 10
	for range evals {
		bound(stats)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / evals; per > 8*m*m {
		t.Errorf("an evaluation on a reset tape allocates %d bytes; P alone is %d", per, 8*m*m)
	}
}

// TestCollapsedFromStatsMatchesSGPR checks the O(M³) bound against the direct
// O(NM²) SGPR path on the same feature, for every form of Kuu, and its
// gradient against finite differences.
func TestCollapsedFromStatsMatchesSGPR(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    int
		mix  bool
		form string
	}{
		{"dense 1-D", 1, true, "dense"},
		{"dense 2-D", 2, true, "dense"},
		{"diag 1-D", 1, false, "diag"},
		{"precision 2-D", 2, false, "precision"},
		{"dense identity T", 2, false, "dense"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, omega := newCosProblem(11, 40, tc.d, 12, 0.2)
			var tmix *mat.Dense
			if tc.mix {
				rng := rand.New(rand.NewPCG(4, 4))
				tmix = testhelp.RandMat(rng, 12, 12, 0.3)
				for i := 0; i < 12; i++ {
					tmix.Set(i, i, tmix.At(i, i)+1)
				}
			}
			feat := func(b *param.Bound) fixedFeature {
				return fixedFeature{cos: cosFeature{omega: omega, lambda: b.Get("lambda")}, tmix: tmix}
			}
			fixed := fixedFeature{cos: cosFeature{omega: omega}, tmix: tmix}
			stats, err := ComputeStats(p.x, p.y, 12, func(_, x *mat.Dense) (*mat.Dense, error) { return fixed.phi(x), nil })
			if err != nil {
				t.Fatal(err)
			}
			direct := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
				var f features.Bound = feat(b)
				if tc.form != "dense" {
					f = diagFixed{feat(b)}
				}
				out, _, err := SGPR(p.kernel(b), f, tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
				return out, err
			}
			fromStats := func(tape *ad.Tape, b *param.Bound) (*ad.Node, error) {
				f := feat(b)
				var kuu Kuu
				switch tc.form {
				case "dense":
					kuu.Dense = f.Kuu(nil)
				case "diag":
					kuu.Diag = ad.Pow(b.Get("lambda"), -1)
				case "precision":
					kuu.Precision = b.Get("lambda")
				}
				kd := ad.Sum(p.kernel(b).Diag(tape.Const(p.x)))
				out, _, err := CollapsedFromStats(stats, kuu, kd, b.Get("noise_variance"), Options{})
				return out, err
			}
			got, want := evaluate(t, p.set, fromStats), evaluate(t, p.set, direct)
			if e := testhelp.RelErr(got, want); e > 1e-10 {
				t.Errorf("CollapsedFromStats = %.12g, SGPR %.12g (rel. err %.2g)", got, want, e)
			}
			checkGradient(t, p.set, fromStats, 1e-6)
		})
	}
}

// With the kernel that the features span exactly, the bound is the exact
// log marginal likelihood (an identity independent of SGPR).
func TestCollapsedFromStatsExactForFiniteRankKernel(t *testing.T) {
	p, omega := newCosProblem(21, 30, 2, 8, 0.1)
	lambda := mat.NewDense(8, 1, nil)
	for i := 0; i < 8; i++ {
		lambda.Set(i, 0, 0.5/float64(i+1))
	}
	tape := ad.NewTape()
	cf := cosFeature{omega: omega, lambda: tape.Const(lambda)}
	f := fixedFeature{cos: cf}
	stats, err := ComputeStats(p.x, p.y, 8, func(_, x *mat.Dense) (*mat.Dense, error) { return f.phi(x), nil })
	if err != nil {
		t.Fatal(err)
	}
	x := tape.Const(p.x)
	noise := tape.Scalar(p.noise)
	got, _, err := CollapsedFromStats(stats, Kuu{Precision: tape.Const(lambda)}, ad.Sum(cosKernel{cf}.Diag(x)), noise, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := ExactLML(cosKernel{cf}, x, p.y, noise, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := testhelp.RelErr(got.Scalar(), want.Scalar()); e > 1e-10 {
		t.Errorf("bound %.12g, exact LML %.12g", got.Scalar(), want.Scalar())
	}
}

func TestStatsPosteriorMatchesSGPRPosterior(t *testing.T) {
	p, omega := newCosProblem(31, 35, 2, 10, 0.15)
	rng := rand.New(rand.NewPCG(8, 8))
	xs := testhelp.RandMat(rng, 13, 2, 1.2)
	for _, form := range []string{"dense", "diag", "precision"} {
		t.Run(form, func(t *testing.T) {
			tape := ad.NewTape()
			b := p.set.Bind(tape)
			f := fixedFeature{cos: cosFeature{omega: omega, lambda: b.Get("lambda")}}
			stats, err := ComputeStats(p.x, p.y, 10, func(_, x *mat.Dense) (*mat.Dense, error) { return f.phi(x), nil })
			if err != nil {
				t.Fatal(err)
			}
			var kuu Kuu
			switch form {
			case "dense":
				kuu.Dense = f.Kuu(nil)
			case "diag":
				kuu.Diag = ad.Pow(b.Get("lambda"), -1)
			default:
				kuu.Precision = b.Get("lambda")
			}
			post, err := StatsPosterior(stats, kuu, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref, _, err := SGPRPosterior(p.kernel(b), f, tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			bind := func(t *ad.Tape) (kernels.Bound, features.Bound) {
				b := p.set.Bind(t)
				return p.kernel(b), fixedFeature{cos: cosFeature{omega: omega, lambda: b.Get("lambda")}}
			}
			m1, v1, err := post.Predict(xs, bind)
			if err != nil {
				t.Fatal(err)
			}
			m2, v2, err := ref.Predict(xs, bind)
			if err != nil {
				t.Fatal(err)
			}
			for i := range m1 {
				if math.Abs(m1[i]-m2[i]) > 1e-9 || math.Abs(v1[i]-v2[i]) > 1e-9 {
					t.Errorf("point %d: mean %.10g var %.10g, SGPR %.10g %.10g", i, m1[i], v1[i], m2[i], v2[i])
				}
			}
		})
	}
}

func TestStatsBadInput(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	y := []float64{1, 2, 3, 4}
	ok := func(_, x *mat.Dense) (*mat.Dense, error) {
		n, _ := x.Dims()
		return mat.NewDense(2, n, nil), nil
	}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"length mismatch", func() error { _, err := ComputeStats(x, y[:3], 2, ok); return err }, "y has 3 values"},
		{"no features", func() error { _, err := ComputeStats(x, y, 0, ok); return err }, "0 features"},
		// 887 million features (VFF, Kronecker, 16 frequencies on 6-D
		// yacht) used to panic in a worker goroutine and end the process.
		{"too many features", func() error { _, err := ComputeStats(x, y, 887_503_681, ok); return err }, "use fewer"},
		{"nan y", func() error { _, err := ComputeStats(x, []float64{1, math.NaN(), 0, 0}, 2, ok); return err }, "y[1]"},
		{"wrong shape", func() error { _, err := ComputeStats(x, y, 3, ok); return err }, "returned 2×4"},
		{"map error", func() error {
			_, err := ComputeStats(x, y, 2, func(_, _ *mat.Dense) (*mat.Dense, error) { return nil, errors.New("boom") })
			return err
		}, "boom"},
		{"non-finite features", func() error {
			_, err := ComputeStats(x, y, 1, func(_, x *mat.Dense) (*mat.Dense, error) {
				n, _ := x.Dims()
				m := mat.NewDense(1, n, nil)
				m.Set(0, 0, math.Inf(1))
				return m, nil
			})
			return err
		}, "non-finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}

	s, err := ComputeStats(x, y, 2, func(_, x *mat.Dense) (*mat.Dense, error) {
		n, _ := x.Dims()
		m := mat.NewDense(2, n, nil)
		for j := 0; j < n; j++ {
			m.Set(0, j, math.Cos(x.At(j, 0)))
			m.Set(1, j, math.Sin(x.At(j, 0)))
		}
		return m, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tape := ad.NewTape()
	one := tape.Scalar(1)
	for _, tc := range []struct {
		name string
		kuu  Kuu
		want string
	}{
		{"none", Kuu{}, "exactly one"},
		{"two", Kuu{Diag: tape.Const(mat.NewDense(2, 1, []float64{1, 1})), Precision: tape.Const(mat.NewDense(2, 1, []float64{1, 1}))}, "exactly one"},
		{"wrong size", Kuu{Dense: tape.Const(mat.NewDense(3, 3, nil))}, "want 2×2"},
		{"negative precision", Kuu{Precision: tape.Const(mat.NewDense(2, 1, []float64{1, -1}))}, "entry 1 is -1"},
		{"nan precision", Kuu{Precision: tape.Const(mat.NewDense(2, 1, []float64{math.NaN(), 1}))}, "spectral density"},
		{"not PD", Kuu{Dense: tape.Const(mat.NewDense(2, 2, []float64{-1, 0, 0, -1}))}, "not positive definite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := CollapsedFromStats(s, tc.kuu, one, one, Options{MaxTries: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// Zero precision (no prior mass) is allowed and finite, gradients included.
	prec := tape.Var(mat.NewDense(2, 1, []float64{1, 0}))
	out, _, err := CollapsedFromStats(s, Kuu{Precision: prec}, tape.Scalar(4), one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	if g := prec.Grad(); math.IsNaN(g.At(0, 0)) || math.IsNaN(g.At(1, 0)) || math.IsInf(g.At(1, 0), 0) {
		t.Errorf("gradient with a zero precision = %v", mat.Formatted(g.T()))
	}
}

// TestCollapsedFromStatsRejectsBrokenBound: with Kuu = I and the
// finite-rank kernel K = ΦᵀΦ the features span, Qff = Kff, so the trace part
// tr(Kff − Qff) is exactly 0 and the bound is accepted. A Σ k(x_n, x_n) that
// falls short of tr(Qff), or a yᵀy below yᵀQff(Qff + σ²I)⁻¹y, is what an
// inaccurate L⁻¹ produces; either must be an error, not a huge "bound".
func TestCollapsedFromStatsRejectsBrokenBound(t *testing.T) {
	const m, n, noise = 5, 20, 0.1
	rng := rand.New(rand.NewPCG(7, 7))
	phi := testhelp.RandMat(rng, m, n, 1)
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	x := mat.NewDense(n, 1, nil)
	stats, err := ComputeStats(x, y, m, func(_, x *mat.Dense) (*mat.Dense, error) {
		r, _ := x.Dims()
		if r != n {
			return nil, errors.New("chunked")
		}
		return phi, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var kd float64 // Σ_n k(x_n, x_n) = Σ_n ‖φ_n‖² = tr(Qff)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			kd += phi.At(i, j) * phi.At(i, j)
		}
	}
	ones := mat.NewDense(m, 1, nil)
	for i := 0; i < m; i++ {
		ones.Set(i, 0, 1)
	}
	bound := func(s *Stats, kdiag float64) error {
		tape := ad.NewTape()
		_, _, err := CollapsedFromStats(s, Kuu{Diag: tape.Const(ones)}, tape.Scalar(kdiag), tape.Scalar(noise), Options{})
		return err
	}
	if err := bound(stats, kd); err != nil {
		t.Fatalf("exact finite-rank case rejected: %v", err)
	}
	if err := bound(stats, 0.5*kd); err == nil || !strings.Contains(err.Error(), "tr(Kff − Qff) < 0") {
		t.Errorf("Σ k(x_n,x_n) below tr(Qff): error %v, want the trace part named", err)
	}
	small := *stats
	small.YY = 1e-3 * stats.YY
	if err := bound(&small, kd); err == nil || !strings.Contains(err.Error(), "yᵀy/σ²") {
		t.Errorf("yᵀy below its projection: error %v, want the data-fit part named", err)
	}
}

// A non-finite entry of Φ in any row and chunk is named with its chunk,
// while a finite Φ whose squares overflow is no error of the pass (the
// statistics' Validate reports the infinite P): the pass checks P's
// diagonal instead of scanning every Φ, and scans Φ only to name the
// entry.
func TestComputeStatsNonFiniteFeatures(t *testing.T) {
	defer func(f, r, m int) { statsChunkFloats, statsChunkRows, statsChunkMinRows = f, r, m }(statsChunkFloats, statsChunkRows, statsChunkMinRows)
	statsChunkRows, statsChunkMinRows = 10, 1
	const n, m = 95, 3
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		x.Set(i, 0, float64(i))
		y[i] = float64(i%7) - 3
	}
	// The feature map puts v at feature row, data row at (one chunk only).
	mapWith := func(row, at int, v float64) FeatureMap {
		return func(_, x *mat.Dense) (*mat.Dense, error) {
			c, _ := x.Dims()
			f := mat.NewDense(m, c, nil)
			for j := range c {
				xi := int(x.At(j, 0))
				for i := range m {
					f.Set(i, j, 1/float64(1+i+xi))
				}
				if xi == at {
					f.Set(row, j, v)
				}
			}
			return f, nil
		}
	}
	for _, tc := range []struct {
		row, at int
		v       float64
		want    string
	}{
		{0, 0, math.Inf(1), "rows 0–10: inference: Φ (3×10) has non-finite entry [0,0] = +Inf"},
		{2, 57, math.NaN(), "rows 50–60: inference: Φ (3×10) has non-finite entry [2,7] = NaN"},
		{1, 94, math.Inf(-1), "rows 90–95: inference: Φ (3×5) has non-finite entry [1,4] = -Inf"},
		{1, 33, 1e200, ""},
	} {
		s, err := ComputeStats(x, y, m, mapWith(tc.row, tc.at, tc.v))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Φ[%d] = %v at row %d: %v, want no error from the pass", tc.row, tc.v, tc.at, err)
		case tc.want == "" && s.Validate() == nil:
			t.Errorf("Φ[%d] = %v at row %d: P = %v validates", tc.row, tc.v, tc.at, s.P.At(tc.row, tc.row))
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("Φ[%d] = %v at row %d: error %v, want it to end in %q", tc.row, tc.v, tc.at, err, tc.want)
		}
	}
}
