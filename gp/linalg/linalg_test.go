package linalg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// checkedCholesky factorises in and checks L Lᵀ against the symmetric a.
func checkedCholesky(t *testing.T, in, a *mat.Dense) *mat.Dense {
	t.Helper()
	n, _ := a.Dims()
	l, err := Cholesky(in)
	if err != nil {
		t.Fatalf("n=%d: %v", n, err)
	}
	var llt mat.Dense
	llt.Mul(l, l.T())
	if !mat.EqualApprox(&llt, a, 1e-13*float64(n)*mat.Norm(a, math.Inf(1))) {
		t.Errorf("n=%d: L Lᵀ ≠ ½(A+Aᵀ)", n)
	}
	return l
}

func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 17, 150, cholSplitMin + cholRows + 37} {
		a := mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1))
		// An asymmetric perturbation must be ignored up to symmetrisation.
		skew := testhelp.RandMat(rng, n, n, 1)
		skew.Sub(skew, skew.T())
		skew.Scale(1e-3, skew)
		var in mat.Dense
		in.Add(a, skew)
		l := checkedCholesky(t, &in, a)
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(n, mat.DenseCopyOf(a).RawMatrix().Data)) {
			t.Fatal("gonum Cholesky failed")
		}
		if got, want := LogDetChol(l), chol.LogDet(); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("n=%d: LogDetChol %v, gonum %v", n, got, want)
		}
	}
}

func TestCholeskyJitter(t *testing.T) {
	tests := []struct {
		name       string
		a          *mat.Dense
		tries      int
		wantJitter float64 // relative to mean diagonal; <0 means error
		wantErr    []string
	}{
		{"pd needs none", mat.NewDense(2, 2, []float64{2, 1, 1, 2}), 3, 0, nil},
		{"singular", mat.NewDense(2, 2, []float64{1, 1, 1, 1}), 3, 1e-8, nil},
		{"slightly indefinite", mat.NewDense(2, 2, []float64{1, 1 + 5e-8, 1 + 5e-8, 1}), 5, 1e-7, nil},
		{"indefinite", mat.NewDense(2, 2, []float64{1, 2, 2, 1}), 4, -1, []string{"2×2", "jitter 1e-08 … 1e-05", ErrNotPositiveDefinite.Error()}},
		{"no retries", mat.NewDense(2, 2, []float64{1, 1, 1, 1}), 0, -1, []string{"2×2"}},
		{"negative diagonal", mat.NewDense(2, 2, []float64{-1, 0, 0, -1}), 4, -1, []string{"mean diagonal -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, jitter, err := CholeskyJitter(tt.a, tt.tries)
			if tt.wantJitter < 0 {
				if err == nil || !errors.Is(err, ErrNotPositiveDefinite) {
					t.Fatalf("err = %v, want not positive definite", err)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mean := mat.Trace(tt.a) / 2
			if math.Abs(jitter-tt.wantJitter*mean) > 1e-12*tt.wantJitter*mean {
				t.Errorf("jitter = %v, want %v", jitter, tt.wantJitter*mean)
			}
			var llt mat.Dense
			llt.Mul(l, l.T())
			for i := 0; i < 2; i++ {
				tt.a.Set(i, i, tt.a.At(i, i)+jitter)
			}
			if !mat.EqualApprox(&llt, tt.a, 1e-12) {
				t.Error("L Lᵀ ≠ A + jitter·I")
			}
		})
	}
}

// An SE Gram matrix with a repeated point is exactly singular; whether
// dpotrf meets a negative or a tiny positive last pivot depends on
// rounding. Cholesky rejects both (a pivot below n·ε of its diagonal),
// on every one of many random cases, and CholeskyJitter then adds jitter;
// an ill-conditioned but non-singular matrix (cond ≈ 1e11) still passes.
func TestCholeskyNumericallySingular(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	se := func(x []float64) *mat.Dense {
		n := len(x)
		k := mat.NewDense(n, n, nil)
		for i := range x {
			for j := range x {
				d := x[i] - x[j]
				k.Set(i, j, math.Exp(-d*d/2))
			}
		}
		return k
	}
	positivePivots := 0
	for c := 0; c < 300; c++ {
		n := 3 + rng.IntN(12)
		x := make([]float64, n)
		for i := range x {
			x[i] = 4 * rng.NormFloat64()
		}
		i, j := rng.IntN(n), rng.IntN(n-1)
		if j >= i {
			j++
		}
		x[j] = x[i]
		k := se(x)
		_, err := Cholesky(k)
		if err == nil || !errors.Is(err, ErrNotPositiveDefinite) {
			t.Fatalf("case %d: points %v (two equal) factorised: err %v", c, x, err)
		}
		if strings.Contains(err.Error(), "numerically singular") {
			positivePivots++
		}
		if _, jitter, err := CholeskyJitter(k, 3); err != nil || !(jitter > 0) {
			t.Fatalf("case %d: CholeskyJitter: jitter %g, err %v", c, jitter, err)
		}
	}
	// Both outcomes of rounding occur, so the threshold is exercised.
	t.Logf("%d of 300 repeated-point cases had a positive tiny pivot", positivePivots)
	if positivePivots == 0 {
		t.Error("no case reached the threshold: the test does not exercise it")
	}
	// Two points 1e-5 apart: cond ≈ 1e11, a genuine (if small) pivot.
	if _, err := Cholesky(se([]float64{0, 1e-5, 1.3})); err != nil {
		t.Errorf("cond ≈ 1e11: %v", err)
	}
}

// TestSolves checks the solves against gonum's general solver, on sizes on
// both sides of the parallel threshold.
func TestSolves(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, sz := range [][2]int{{1, 1}, {5, 3}, {200, 201}, {300, 7}} {
		n, k := sz[0], sz[1]
		l, err := Cholesky(mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1)))
		if err != nil {
			t.Fatal(err)
		}
		b := testhelp.RandMat(rng, n, k, 1)
		var a mat.Dense
		a.Mul(l, l.T())
		tests := []struct {
			name string
			got  *mat.Dense
			m    mat.Matrix // got = m⁻¹ b
		}{
			{"SolveLower", SolveLower(l, b), l},
			{"SolveLowerT", SolveLowerT(l, b), l.T()},
			{"CholSolve", CholSolve(l, b), &a},
		}
		for _, tt := range tests {
			var want mat.Dense
			if err := want.Solve(tt.m, b); err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(tt.got, &want, 1e-9) {
				t.Errorf("%s n=%d k=%d mismatch", tt.name, n, k)
			}
		}
		var want mat.Dense
		want.Mul(l.T(), b)
		if !mat.EqualApprox(MulLowerT(l, b), &want, 1e-10) {
			t.Errorf("MulLowerT n=%d k=%d mismatch", n, k)
		}
	}
}

func TestShapePanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"Cholesky", func() { Cholesky(mat.NewDense(2, 3, nil)) }},
		{"CholeskyJitter", func() { CholeskyJitter(mat.NewDense(2, 3, nil), 2) }},
		{"SolveLower", func() { SolveLower(mat.NewDense(2, 2, nil), mat.NewDense(3, 1, nil)) }},
		{"SolveLowerT", func() { SolveLowerT(mat.NewDense(2, 2, nil), mat.NewDense(3, 1, nil)) }},
		{"CholSolve", func() { CholSolve(mat.NewDense(2, 2, nil), mat.NewDense(3, 1, nil)) }},
		{"MulLowerT", func() { MulLowerT(mat.NewDense(2, 2, nil), mat.NewDense(3, 1, nil)) }},
		{"LogDetChol", func() { LogDetChol(mat.NewDense(2, 3, nil)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "linalg."+tt.name) {
					t.Errorf("panic %q does not name the function", msg)
				}
			}()
			tt.f()
		})
	}
}

func ExampleCholeskyJitter() {
	// A rank-one matrix is only positive semi-definite; jitter 1e-8·mean(diag)
	// makes its eigenvalues 8 + 4e-8 and 4e-8, so log det = log(3.2e-7).
	a := mat.NewDense(2, 2, []float64{4, 4, 4, 4})
	l, jitter, err := CholeskyJitter(a, 5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("jitter %.1e, log det %.2f\n", jitter, LogDetChol(l))
	// Output: jitter 4.0e-08, log det -14.95
}

// TestCholeskyBlocked checks the row-split factorisation of large matrices:
// the same bits however many goroutines share its blocks, and a matrix
// whose leading minors fail only in a late panel is still rejected.
func TestCholeskyBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	// Both row-block heights: below and above cholRowsMin.
	for _, n := range []int{cholSplitMin + 2*cholRowsFor(cholSplitMin) + 3, cholRowsMin + 3} {
		a := mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1))
		sameBitsOnProcs(t, "factor", func() (*mat.Dense, error) { return Cholesky(a) })
		checkedCholesky(t, a, a)
		bad := mat.DenseCopyOf(a)
		k := n - cholPanel/2 // inside the last panel
		bad.Set(k, k, -1)
		if _, err := Cholesky(bad); !errors.Is(err, ErrNotPositiveDefinite) {
			t.Errorf("n=%d: indefinite in the last panel: err = %v, want ErrNotPositiveDefinite", n, err)
		}
	}
}

// TestCholeskyNextPanelBeside checks that factoring each panel's diagonal
// block beside the update before it (potrf) gives bitwise the factor of
// updating and factoring one after the other (potrfUnfolded, the
// factorisation before), at orders with one or several row blocks per
// panel, a short last panel, both row-block heights, on any number of
// cores; and that a matrix failing in the first, a middle or the last
// panel is rejected.
func TestCholeskyNextPanelBeside(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{cholSplitMin, cholSplitMin + 1, 500, cholRowsMin + 3} {
		a := testhelp.RandSPD(rng, n, 1)
		raw := func(f func(blas64.General) bool) (*mat.Dense, bool) {
			l := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					l.Set(i, j, a.At(i, j))
				}
			}
			return l, f(l.RawMatrix())
		}
		want, ok := raw(potrfUnfolded)
		if !ok {
			t.Fatalf("n=%d: the reference factorisation failed", n)
		}
		prev := runtime.GOMAXPROCS(1)
		if got, ok := raw(potrf); !ok || !mat.Equal(got, want) {
			t.Errorf("n=%d, GOMAXPROCS=1: the factor's bits differ from updating and factoring one after the other", n)
		}
		runtime.GOMAXPROCS(prev)
		sameBitsOnProcs(t, fmt.Sprintf("n=%d factor", n), func() (*mat.Dense, error) {
			got, ok := raw(potrf)
			if !ok {
				return nil, fmt.Errorf("n=%d: factorisation failed", n)
			}
			if !mat.Equal(got, want) {
				t.Errorf("n=%d: the factor's bits differ from updating and factoring one after the other", n)
			}
			return got, nil
		})
		for _, k := range []int{cholPanel / 2, cholPanel + cholPanel/2, n - 1} {
			bad := mat.DenseCopyOf(a)
			bad.Set(k, k, -1)
			if _, err := Cholesky(bad); !errors.Is(err, ErrNotPositiveDefinite) {
				t.Errorf("n=%d: indefinite at pivot %d: err = %v, want ErrNotPositiveDefinite", n, k, err)
			}
		}
	}
}

// potrfUnfolded is potrf factoring each diagonal block after the whole
// update before it, the reference for potrf's bits.
func potrfUnfolded(a blas64.General) bool {
	n := a.Rows
	sym := func(k0, k1 int) blas64.Symmetric {
		return blas64.Symmetric{Uplo: blas.Lower, N: k1 - k0, Stride: a.Stride, Data: a.Data[k0*a.Stride+k0:]}
	}
	if n < cholSplitMin {
		_, ok := lapack64.Potrf(sym(0, n))
		return ok
	}
	view := func(r0, r1, c0, c1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: a.Stride, Data: a.Data[r0*a.Stride+c0:]}
	}
	h := cholRowsFor(n)
	for k0 := 0; k0 < n; k0 += cholPanel {
		k1 := min(k0+cholPanel, n)
		if _, ok := lapack64.Potrf(sym(k0, k1)); !ok {
			return false
		}
		if k1 == n {
			break
		}
		d := sym(k0, k1)
		tri := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: d.N, Stride: d.Stride, Data: d.Data}
		// Row blocks of the trailing rows [k1, n), the last first (they
		// carry the most work in the update).
		rows := (n - k1 + h - 1) / h
		block := func(b int) (i0, i1 int) {
			b = rows - 1 - b
			return k1 + b*h, min(k1+(b+1)*h, n)
		}
		// Panel: A[i0:i1, k0:k1] ← A[i0:i1, k0:k1] L_kk⁻ᵀ.
		forBlocks(rows, trsmThreads(), func(b int) {
			i0, i1 := block(b)
			blas64.Trsm(blas.Right, blas.Trans, 1, tri, view(i0, i1, k0, k1))
		})
		// Trailing update of the lower triangle, row block by row block:
		// A[i0:i1, k1:i1] −= P[i0:i1] P[k1:i1]ᵀ for the panel P.
		forBlocks(rows, gemmThreads(), func(b int) {
			i0, i1 := block(b)
			if i0 > k1 {
				blas64.Gemm(blas.NoTrans, blas.Trans, -1, view(i0, i1, k0, k1), view(k1, i0, k0, k1), 1, view(i0, i1, k1, i0))
			}
			blas64.Syrk(blas.NoTrans, -1, view(i0, i1, k0, k1), 1, sym(i0, i1))
		})
	}
	return true
}

// TestCholeskySymmetrises checks that the row blocks forming ½(A + Aᵀ)
// give the factor of the symmetrised matrix (formed here entry by entry)
// bitwise, on any number of cores, for an asymmetric A below and above
// the split; and that a NaN or Inf anywhere in the lower or upper triangle
// of a dense or non-dense A is reported, whichever row block holds it.
func TestCholeskySymmetrises(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{5, 300, 700} {
		a := mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1))
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				a.Set(i, j, a.At(i, j)*(1+1e-9*rng.NormFloat64()))
			}
		}
		s := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				s.Set(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
			}
		}
		want, err := Cholesky(s)
		if err != nil {
			t.Fatal(err)
		}
		sameBitsOnProcs(t, fmt.Sprintf("n=%d factor of an asymmetric A", n), func() (*mat.Dense, error) {
			got, err := Cholesky(a)
			if err == nil && !mat.Equal(got, want) {
				t.Errorf("n=%d: the factor of A differs from that of ½(A + Aᵀ)", n)
			}
			return got, err
		})
		for _, bad := range []float64{math.NaN(), math.Inf(1)} {
			for _, at := range [][2]int{{0, 0}, {n / 3, n / 5}, {n / 5, n / 3}, {n - 1, n - 2}, {n - 1, n - 1}} {
				c := mat.DenseCopyOf(a)
				c.Set(at[0], at[1], bad)
				if _, err := Cholesky(c); !errors.Is(err, ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "NaN or Inf") {
					t.Errorf("n=%d, %v at %v: err = %v, want the NaN-or-Inf error", n, bad, at, err)
				}
				if _, err := Cholesky(c.T()); !errors.Is(err, ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "NaN or Inf") {
					t.Errorf("n=%d, %v at %v of a transposed A: err = %v, want the NaN-or-Inf error", n, bad, at, err)
				}
			}
		}
	}
}

// TestLowerRowBounds checks that the row blocks cover [0, m) in order and
// hold about equal parts of the triangle.
func TestLowerRowBounds(t *testing.T) {
	for _, m := range []int{1, 7, 256, 500, 2001} {
		prev := 0
		for b := 0; b < symBlocks; b++ {
			lo, hi := lowerRowBounds(b, symBlocks, m)
			if lo != prev || hi < lo {
				t.Fatalf("m=%d: block %d is [%d, %d) after %d", m, b, lo, hi, prev)
			}
			if area := float64(hi*hi-lo*lo) / float64(m*m); m >= 256 && math.Abs(area-1.0/symBlocks) > 0.02 {
				t.Errorf("m=%d: block %d holds %.3f of the triangle, want %.3f", m, b, area, 1.0/symBlocks)
			}
			prev = hi
		}
		if prev != m {
			t.Errorf("m=%d: blocks end at %d", m, prev)
		}
	}
}
