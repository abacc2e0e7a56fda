package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/internal/goroutines"
	"sgplab/internal/testhelp"
)

// serialMarginals is the straightforward single-threaded reference: chunk
// after chunk of PredictChunk columns, kuxᵀα by one matrix–vector product
// and each squared norm by its own matrix product, as Marginals computed
// them before it stacked the products and spread the chunks over the cores.
func serialMarginals(p *Posterior, kux *mat.Dense, kdiag []float64) (mean, variance []float64) {
	m, n := kux.Dims()
	for lo := 0; lo < n; lo += PredictChunk {
		hi := min(lo+PredictChunk, n)
		kc := mat.DenseCopyOf(kux.Slice(0, m, lo, hi))
		mu := mat.NewVecDense(hi-lo, nil)
		mu.MulVec(kc.T(), p.Alpha.ColView(0))
		v := append([]float64(nil), kdiag[lo:hi]...)
		for _, t := range []struct {
			f    *mat.Dense
			sign float64
		}{{p.A, 1}, {p.B, -1}} {
			if t.f == nil {
				continue
			}
			var tmp mat.Dense
			tmp.Mul(t.f, kc)
			r, _ := tmp.Dims()
			for i := 0; i < r; i++ {
				for j, x := range tmp.RawRowView(i) {
					v[j] -= t.sign * x * x
				}
			}
		}
		mean = append(mean, mu.RawVector().Data...)
		variance = append(variance, v...)
	}
	return mean, variance
}

// lowerTri returns a random lower-triangular n×n matrix.
func lowerTri(rng *rand.Rand, n int) *mat.Dense {
	l := mat.NewDense(n, n, nil)
	for i := range n {
		for j := 0; j <= i; j++ {
			l.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(n)))
		}
	}
	return l
}

// posteriors are the shapes of A and B that reach Marginals: a diagonal A
// (diagonal Kuu: spherical harmonics) with a triangular B, a dense
// triangular A (SGPR, SVGP), A alone (exact GPR), and B with more rows than
// the basis has variables (stacked blocks).
func posteriors(rng *rand.Rand, m int) map[string]*Posterior {
	alpha := testhelp.RandMat(rng, m, 1, 1)
	diag := mat.NewDense(m, m, nil)
	for i := range m {
		diag.Set(i, i, 0.5+rng.Float64())
	}
	return map[string]*Posterior{
		"diagonal A":   {Alpha: alpha, A: diag, B: lowerTri(rng, m)},
		"triangular A": {Alpha: alpha, A: lowerTri(rng, m), B: lowerTri(rng, m)},
		"A only":       {Alpha: alpha, A: lowerTri(rng, m)},
		"B only, tall": {Alpha: alpha, B: testhelp.RandMat(rng, m+3, m, 0.3)},
		"mean only":    {Alpha: alpha},
	}
}

// TestMarginalsMatchesSerialReference: over several chunks (a count odd and
// not divisible by 2 or 3 goroutines, the last one partial), Marginals
// gives bitwise the reference's mean and variance under GOMAXPROCS 1, 2
// and 3, for every shape of posterior.
func TestMarginalsMatchesSerialReference(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(3, 4))
	const m = 23
	for _, n := range []int{1, PredictChunk - 1, 4*PredictChunk + 37} {
		kux := testhelp.RandMat(rng, m, n, 1)
		kdiag := make([]float64, n)
		for i := range kdiag {
			kdiag[i] = 2 + rng.Float64()
		}
		for name, p := range posteriors(rng, m) {
			wantMean, wantVar := serialMarginals(p, kux, kdiag)
			for _, procs := range []int{1, 2, 3} {
				runtime.GOMAXPROCS(procs)
				mean, variance, err := p.Marginals(kux, kdiag)
				if err != nil {
					t.Fatal(err)
				}
				checkBits(t, fmt.Sprintf("%s, n = %d, GOMAXPROCS=%d", name, n, procs), mean, variance, wantMean, wantVar)
			}
		}
	}
}

// TestMarginalsFormula checks the reference itself: mean = kᵀα and
// variance = kdiag − ‖A k‖² + ‖B k‖², from plain sums.
func TestMarginalsFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n = 6, 9
	kux := testhelp.RandMat(rng, m, n, 1)
	kdiag := make([]float64, n)
	for i := range kdiag {
		kdiag[i] = 3
	}
	for name, p := range posteriors(rng, m) {
		mean, variance, err := p.Marginals(kux, kdiag)
		if err != nil {
			t.Fatal(err)
		}
		for j := range n {
			mu, v := 0.0, kdiag[j]
			for i := range m {
				mu += kux.At(i, j) * p.Alpha.At(i, 0)
			}
			for _, f := range []struct {
				a    *mat.Dense
				sign float64
			}{{p.A, -1}, {p.B, 1}} {
				if f.a == nil {
					continue
				}
				r, _ := f.a.Dims()
				for i := range r {
					s := 0.0
					for l := range m {
						s += f.a.At(i, l) * kux.At(l, j)
					}
					v += f.sign * s * s
				}
			}
			if math.Abs(mean[j]-mu) > 1e-12*(1+math.Abs(mu)) || math.Abs(variance[j]-v) > 1e-12*(1+math.Abs(v)) {
				t.Errorf("%s, input %d: mean %v variance %v, want %v %v", name, j, mean[j], variance[j], mu, v)
			}
		}
	}
}

func checkBits(t *testing.T, what string, mean, variance, wantMean, wantVar []float64) {
	t.Helper()
	if len(mean) != len(wantMean) || len(variance) != len(wantVar) {
		t.Fatalf("%s: %d means and %d variances, want %d and %d", what, len(mean), len(variance), len(wantMean), len(wantVar))
	}
	for j := range mean {
		if math.Float64bits(mean[j]) != math.Float64bits(wantMean[j]) || math.Float64bits(variance[j]) != math.Float64bits(wantVar[j]) {
			t.Fatalf("%s, input %d: mean %v variance %v, reference %v %v", what, j, mean[j], variance[j], wantMean[j], wantVar[j])
		}
	}
}

// predictProblem is a posterior over inducing points with the SE kernel,
// and test inputs spanning several chunks.
func predictProblem(n, m int) (*Posterior, *mat.Dense, Binder) {
	p := newProblem(11, 40, 2, 0.1)
	rng := rand.New(rand.NewPCG(8, 9))
	z := testhelp.RandMat(rng, m, 2, 1)
	p.addZ(z)
	post := posteriors(rng, m)["triangular A"]
	bind := func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := p.set.Bind(t)
		return p.kernel(b), p.points(b)
	}
	return post, testhelp.RandMat(rng, n, 2, 1.5), bind
}

// TestPredictMatchesSerialReference: Predict over chunks spread on the
// cores (tapes and buffers reused from chunk to chunk) gives bitwise the
// serial chunk loop's predictions under GOMAXPROCS 1, 2 and 3.
func TestPredictMatchesSerialReference(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	post, xs, bind := predictProblem(4*PredictChunk+37, 9)
	n, d := xs.Dims()
	var wantMean, wantVar []float64
	for lo := 0; lo < n; lo += PredictChunk {
		hi := min(lo+PredictChunk, n)
		tape := ad.NewTape()
		k, f := bind(tape)
		xn := tape.Const(mat.DenseCopyOf(xs.Slice(lo, hi, 0, d)))
		mu, v := serialMarginals(post, f.Kuf(k, xn).Value(), mat.Col(nil, 0, k.Diag(xn).Value()))
		wantMean, wantVar = append(wantMean, mu...), append(wantVar, v...)
	}
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		mean, variance, err := post.Predict(xs, bind)
		if err != nil {
			t.Fatal(err)
		}
		checkBits(t, fmt.Sprintf("GOMAXPROCS=%d", procs), mean, variance, wantMean, wantVar)
	}
}

// TestPredictMemoryPerChunk: Predict reuses each goroutine's tape and
// buffers from chunk to chunk, so that a chunk more costs its share of the
// result and a few small allocations, not the M×PredictChunk matrices of
// its covariances and products (the serial loop left four of them per
// chunk for the collector: ~2 GB of peak RSS on the 2M test rows of the
// airline-shaped set).
func TestPredictMemoryPerChunk(t *testing.T) {
	const m = 60
	allocated := func(chunks int) uint64 {
		post, xs, bind := predictProblem(chunks*PredictChunk, m)
		if _, _, err := post.Predict(xs, bind); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, _, err := post.Predict(xs, bind); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	few, many := allocated(4), allocated(20)
	perChunk := float64(many-few) / 16
	if limit := float64(m * PredictChunk * 8 / 2); perChunk > limit {
		t.Errorf("each chunk allocates %.0f bytes; want less than half of its %d×%d covariances (%.0f bytes)", perChunk, m, PredictChunk, limit)
	}
}

// panicKuf is a feature whose Kuf panics on inputs beyond a row count.
type panicKuf struct {
	features.Bound
	rows int
}

var errKuf = errors.New("Kuf failed")

func (f panicKuf) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	if n, _ := x.Dims(); n < f.rows {
		panic(errKuf)
	}
	return f.Bound.Kuf(k, x)
}

// TestPredictPanicReachesCaller: a panic in one chunk's covariances (here
// the last, partial one) reaches Predict's caller with its value, on one
// core and on several.
func TestPredictPanicReachesCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	post, xs, bind := predictProblem(2*PredictChunk+5, 9)
	bad := func(t *ad.Tape) (kernels.Bound, features.Bound) {
		k, f := bind(t)
		return k, panicKuf{Bound: f, rows: PredictChunk}
	}
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		r := func() (r any) {
			defer func() { r = recover() }()
			post.Predict(xs, bad)
			return nil
		}()
		err, _ := r.(error)
		if !errors.Is(err, errKuf) {
			t.Errorf("GOMAXPROCS=%d: recovered %v (%T), want the Kuf panic", procs, r, r)
		}
		if _, ok := r.(*goroutines.Panic); procs > 1 && !ok {
			t.Errorf("GOMAXPROCS=%d: recovered %T, want a *goroutines.Panic with the stack where it began", procs, r)
		}
	}
}

// TestMarginalsBadShapes: mismatched shapes are errors, not panics.
func TestMarginalsBadShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := posteriors(rng, 4)["triangular A"]
	if _, _, err := p.Marginals(testhelp.RandMat(rng, 5, 3, 1), make([]float64, 3)); err == nil {
		t.Error("Kux with 5 rows for 4 basis variables: no error")
	}
	if _, _, err := p.Marginals(testhelp.RandMat(rng, 4, 3, 1), make([]float64, 2)); err == nil {
		t.Error("3 columns with 2 prior variances: no error")
	}
	wide := &Posterior{Alpha: p.Alpha, A: testhelp.RandMat(rng, 4, 5, 1)}
	if _, _, err := wide.Marginals(testhelp.RandMat(rng, 4, 3, 1), make([]float64, 3)); err == nil {
		t.Error("A with 5 columns for 4 basis variables: no error")
	}
}

// BenchmarkMarginals is Marginals at the VISH airline shape (M = 210,
// a diagonal A and a triangular B) and with a dense A (SGPR), on 16 chunks,
// beside the serial reference (the implementation before the chunks were
// spread over the cores and the products stacked).
func BenchmarkMarginals(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const m, n = 210, 16 * PredictChunk
	kux := testhelp.RandMat(rng, m, n, 1)
	kdiag := make([]float64, n)
	ps := posteriors(rng, m)
	for _, name := range []string{"diagonal A", "triangular A"} {
		p := ps[name]
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				serialMarginals(p, kux, kdiag)
			}
		})
		b.Run(name+"/Marginals", func(b *testing.B) {
			for b.Loop() {
				if _, _, err := p.Marginals(kux, kdiag); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
