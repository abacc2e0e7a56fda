package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/internal/testhelp"
)

// withChunks runs f with the chunked path forced on (chunks of the given
// number of rows for m inducing points) or off.
func withChunks(on bool, rows, m int, f func()) {
	above, entries := sgprChunkedAbove, sgprChunkEntries
	defer func() { sgprChunkedAbove, sgprChunkEntries = above, entries }()
	if on {
		sgprChunkedAbove, sgprChunkEntries = 0, rows*m
	} else {
		sgprChunkedAbove = int(^uint(0) >> 1)
	}
	f()
}

// valueAndGrad evaluates the bound with X as a variable, returning the value,
// the parameter gradient and the gradient with respect to X.
func valueAndGrad(t *testing.T, p *problem) (float64, []float64, *mat.Dense) {
	t.Helper()
	tape := ad.NewTape()
	b := p.set.Bind(tape)
	x := tape.Var(p.x)
	out, _, err := SGPR(p.kernel(b), p.points(b), x, p.y, b.Get("noise_variance"), Options{Jitter: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	tape.Backward(out)
	return out.Scalar(), b.Gradient(), mat.DenseCopyOf(x.Grad())
}

// TestSGPRChunkedMatchesWhole checks that the checkpointed, chunked Kuf path
// gives the bound and every gradient (parameters and X) of the whole-Kuf
// path, for chunks that divide N, that do not, and of a single row, and
// that it leaves no per-chunk nodes on the tape.
func TestSGPRChunkedMatchesWhole(t *testing.T) {
	const n, d, m = 31, 2, 6
	p := newProblem(91, n, d, 0.3)
	p.addZ(testhelp.RandMat(rand.New(rand.NewPCG(91, 2)), m, d, 1))
	var want float64
	var wantGrad []float64
	var wantX *mat.Dense
	withChunks(false, 0, m, func() { want, wantGrad, wantX = valueAndGrad(t, p) })
	for _, rows := range []int{1, 7, 31, 40} {
		t.Run(fmt.Sprintf("rows=%d", rows), func(t *testing.T) {
			withChunks(true, rows, m, func() {
				got, grad, gx := valueAndGrad(t, p)
				if e := testhelp.RelErr(got, want); e > 1e-11 {
					t.Errorf("bound %.15g, whole-Kuf path %.15g", got, want)
				}
				if !floats.EqualApprox(grad, wantGrad, 1e-8) {
					t.Errorf("parameter gradient %v, whole-Kuf path %v", grad, wantGrad)
				}
				if !mat.EqualApprox(gx, wantX, 1e-8) {
					t.Errorf("gradient with respect to X differs from the whole-Kuf path")
				}
				tape := ad.NewTape()
				b := p.set.Bind(tape)
				before := tape.Len()
				if _, _, err := SGPR(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{}); err != nil {
					t.Fatal(err)
				}
				// Whole path for comparison: the chunked one records fewer
				// nodes however many chunks there are.
				var whole int
				withChunks(false, 0, m, func() {
					tw := ad.NewTape()
					bw := p.set.Bind(tw)
					b0 := tw.Len()
					if _, _, err := SGPR(p.kernel(bw), p.points(bw), tw.Const(p.x), p.y, bw.Get("noise_variance"), Options{}); err != nil {
						t.Fatal(err)
					}
					whole = tw.Len() - b0
				})
				if got := tape.Len() - before; got > whole {
					t.Errorf("chunked path left %d nodes on the tape, whole-Kuf path %d", got, whole)
				}
			})
		})
	}
	// And against finite differences directly.
	withChunks(true, 7, m, func() {
		checkGradient(t, p.set, sgprObjective(p, p.points, Options{Jitter: 1e-8}), 1e-6)
	})
}

// TestSGPRChunkedBadKuf checks that a non-finite Kuf chunk is reported as
// an error naming its columns.
func TestSGPRChunkedBadKuf(t *testing.T) {
	const n, d, m = 12, 1, 3
	p := newProblem(92, n, d, 0.3)
	p.addZ(testhelp.RandMat(rand.New(rand.NewPCG(92, 2)), m, d, 1))
	p.x.Set(8, 0, math.NaN())
	withChunks(true, 5, m, func() {
		tape := ad.NewTape()
		b := p.set.Bind(tape)
		_, _, err := SGPR(p.kernel(b), p.points(b), tape.Const(p.x), p.y, b.Get("noise_variance"), Options{})
		if err == nil || !strings.Contains(err.Error(), "Kuf (columns 5..9)") {
			t.Errorf("error = %v, want one naming Kuf (columns 5..9)", err)
		}
	})
}

// checkFinite finds a NaN or ±Inf anywhere (in the four-wide body of a row
// or its tail) and names the entry; finite matrices, huge entries
// included, pass.
func TestCheckFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, at := range [][2]int{{0, 0}, {2, 5}, {4, 6}, {1, 3}} {
			a := mat.NewDense(5, 7, nil)
			for i := 0; i < 5; i++ {
				for j := 0; j < 7; j++ {
					a.Set(i, j, float64(i-j)*1e300)
				}
			}
			a.Set(at[0], at[1], bad)
			err := checkFinite("K", a)
			if want := fmt.Sprintf("[%d,%d]", at[0], at[1]); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v at %v: err %v, want one naming %s", bad, at, err, want)
			}
		}
	}
	a := mat.NewDense(3, 5, []float64{1, -1, math.MaxFloat64, -math.MaxFloat64, 0, 1e-310, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	if err := checkFinite("K", a); err != nil {
		t.Errorf("finite matrix: %v", err)
	}
}
