package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// TestGramVecAdjoint checks GramVec and GramAdjoint against plain products
// for shapes that take the single-call path, the split path with one block
// per goroutine, and the split path with many uneven blocks.
func TestGramVecAdjoint(t *testing.T) {
	forProcs(t, testGramVecAdjoint)
}

// forProcs runs test as planned for this machine, then as planned for 3 and
// 8 cores (several goroutines and uneven blocks even on a small machine,
// whatever each backend's threading).
func forProcs(t *testing.T, test func(t *testing.T)) {
	t.Run("procs=machine", test)
	defer func(p func() int) { procs = p }(procs)
	for _, p := range []int{3, 8} {
		procs = func() int { return p * max(syrkThreads(), gemmThreads(), trsmThreads()) }
		t.Run(fmt.Sprintf("procs=%d", p), test)
	}
}

func testGramVecAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, sh := range [][2]int{{1, 1}, {3, 7}, {5, 600}, {40, 2*gramChunk + 17}, {150, 900}} {
		t.Run(fmt.Sprintf("%dx%d", sh[0], sh[1]), func(t *testing.T) {
			r, c := sh[0], sh[1]
			a := testhelp.RandMat(rng, r, c, 1)
			v := testhelp.RandMat(rng, c, 1, 1).RawMatrix().Data
			u := testhelp.RandMat(rng, r, 1, 1).RawMatrix().Data
			gbar := testhelp.RandMat(rng, r, r, 1)

			g, av := GramVec(a, v)
			want := mat.NewDense(r, r, nil)
			want.Mul(a, a.T())
			if !mat.EqualApprox(g, want, 1e-9) {
				t.Errorf("GramVec: A Aᵀ differs from the general product")
			}
			wantV := mat.NewVecDense(r, nil)
			wantV.MulVec(a, mat.NewVecDense(c, v))
			if !mat.EqualApprox(mat.NewVecDense(r, av), wantV, 1e-9) {
				t.Errorf("GramVec: A v differs from the general product")
			}

			s := mat.NewDense(r, r, nil)
			s.Add(gbar, gbar.T())
			wantA := mat.NewDense(r, c, nil)
			wantA.Mul(s, a)
			if got := GramAdjoint(gbar, a, nil, nil); !mat.EqualApprox(got, wantA, 1e-9) {
				t.Errorf("GramAdjoint without u vᵀ differs from (Ḡ+Ḡᵀ)A")
			}
			var outer mat.Dense
			outer.Outer(1, mat.NewVecDense(r, u), mat.NewVecDense(c, v))
			wantA.Add(wantA, &outer)
			if got := GramAdjoint(gbar, a, u, v); !mat.EqualApprox(got, wantA, 1e-9) {
				t.Errorf("GramAdjoint differs from (Ḡ+Ḡᵀ)A + u vᵀ")
			}
		})
	}
}

// TestWhitened checks AddWhitenedGramVec and WhitenedAdjoint against
// explicit products with L⁻¹A, on the single-call path and on split paths
// with several groups and whitening blocks.
func TestWhitened(t *testing.T) {
	forProcs(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(19, 19))
		for _, sh := range [][2]int{{3, 7}, {40, 2*gramChunk + 17}, {150, 900}, {2*triBase + 45, 700}} {
			r, c := sh[0], sh[1]
			a := testhelp.RandMat(rng, r, c, 1)
			v := testhelp.RandMat(rng, c, 1, 1).RawMatrix().Data
			u := testhelp.RandMat(rng, r, 1, 1).RawMatrix().Data
			tm := testhelp.RandMat(rng, r, r, 1)
			l := diagDominantLower(rng, r)
			w := SolveLower(l, a)
			// Start from a non-zero G and A v to check that they accumulate.
			g0 := testhelp.RandMat(rng, r, r, 1)
			g := mat.DenseCopyOf(g0)
			av := make([]float64, r)
			av[0] = 1
			AddWhitenedGramVec(g, av, l, a, v)
			want := mat.NewDense(r, r, nil)
			want.Mul(w, w.T())
			want.Add(want, g0)
			for i := 0; i < r; i++ {
				for j := 0; j < r; j++ {
					wij := want.At(i, j)
					if j < i {
						wij = g0.At(i, j) // lower triangle untouched
					}
					if math.Abs(g.At(i, j)-wij) > 1e-10*(1+math.Abs(wij)) {
						t.Fatalf("%dx%d: G[%d,%d] = %v, want %v", r, c, i, j, g.At(i, j), wij)
					}
				}
			}
			wantV := mat.NewVecDense(r, nil)
			wantV.MulVec(w, mat.NewVecDense(c, v))
			wantV.SetVec(0, wantV.AtVec(0)+1)
			if !mat.EqualApprox(mat.NewVecDense(r, av), wantV, 1e-10) {
				t.Errorf("%dx%d: (L⁻¹A) v differs", r, c)
			}
			wantA := mat.NewDense(r, c, nil)
			wantA.Mul(tm, w)
			wantA.RankOne(wantA, 1, mat.NewVecDense(r, u), mat.NewVecDense(c, v))
			if !mat.EqualApprox(WhitenedAdjoint(tm, l, a, u, v), wantA, 1e-10) {
				t.Errorf("%dx%d: WhitenedAdjoint differs from T L⁻¹A + u vᵀ", r, c)
			}
		}
	})
}

// TestGramAdjointBadInput checks that mismatched shapes are reported with
// the shapes, not as an index panic deep in BLAS.
func TestGramAdjointBadInput(t *testing.T) {
	a := mat.NewDense(3, 4, nil)
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"gbar shape", func() { GramAdjoint(mat.NewDense(2, 2, nil), a, nil, nil) }},
		{"u without v", func() { GramAdjoint(mat.NewDense(3, 3, nil), a, make([]float64, 3), nil) }},
		{"v length", func() { GramAdjoint(mat.NewDense(3, 3, nil), a, make([]float64, 3), make([]float64, 3)) }},
		{"GramVec v length", func() { GramVec(a, make([]float64, 3)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic for %s", tc.name)
				}
			}()
			tc.call()
		})
	}
}

// TestCongruence checks C = L⁻¹ G L⁻ᵀ and its adjoint against explicit
// inverses and products, for sizes on the single-call and the split paths.
func TestCongruence(t *testing.T) {
	forProcs(t, testCongruence)
}

func testCongruence(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{1, 5, 130, 200} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			// A well-conditioned lower-triangular L and a symmetric G.
			l := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					l.Set(i, j, 0.3*rng.NormFloat64()/float64(n))
				}
				l.Set(i, i, 1+rng.Float64())
			}
			x := testhelp.RandMat(rng, n, n, 1)
			g := mat.NewDense(n, n, nil)
			g.Add(x, x.T())
			cbar := testhelp.RandMat(rng, n, n, 1)

			var linv mat.Dense
			if err := linv.Inverse(l); err != nil {
				t.Fatal(err)
			}
			want := mat.NewDense(n, n, nil)
			want.Product(&linv, g, linv.T())
			c, h := Congruence(l, g)
			if !mat.EqualApprox(c, want, 1e-9) {
				t.Errorf("C differs from L⁻¹ G L⁻ᵀ")
			}
			if !mat.Equal(c, c.T()) {
				t.Errorf("C not exactly symmetric")
			}
			wantH := mat.NewDense(n, n, nil)
			wantH.Mul(&linv, g)
			if !mat.EqualApprox(h, wantH, 1e-9) {
				t.Errorf("H differs from L⁻¹ G")
			}

			// Ḡ = sym(L⁻ᵀ C̄ L⁻¹); L̄ = −tril(L⁻ᵀ (C̄ Cᵀ + C̄ᵀ C)).
			gbar, lbar := CongruenceAdjoint(l, h, cbar)
			wantG := mat.NewDense(n, n, nil)
			wantG.Product(linv.T(), cbar, &linv)
			wantG.Add(wantG, wantG.T())
			wantG.Scale(0.5, wantG)
			if !mat.EqualApprox(gbar, wantG, 1e-9) {
				t.Errorf("Ḡ differs from sym(L⁻ᵀ C̄ L⁻¹)")
			}
			var s1, s2 mat.Dense
			s1.Mul(cbar, want.T())
			s2.Mul(cbar.T(), want)
			s1.Add(&s1, &s2)
			wantL := mat.NewDense(n, n, nil)
			wantL.Mul(linv.T(), &s1)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					v := 0.0
					if j <= i {
						v = -wantL.At(i, j)
					}
					wantL.Set(i, j, v)
				}
			}
			if !mat.EqualApprox(lbar, wantL, 1e-9) {
				t.Errorf("L̄ differs from −tril(L⁻ᵀ (C̄ Cᵀ + C̄ᵀ C))")
			}
		})
	}
}

// TestSolveSplit checks the column-split triangular solve and multiply
// against a column-by-column reference, for plans with several goroutines.
func TestSolveSplit(t *testing.T) {
	forProcs(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, sh := range [][2]int{{3, 5}, {150, 900}, {200, 129}} {
			n, k := sh[0], sh[1]
			l := diagDominantLower(rng, n)
			b := testhelp.RandMat(rng, n, k, 1)
			x := SolveLower(l, b)
			// L·x must give back b, column by column.
			var col, lx mat.VecDense
			for j := 0; j < k; j++ {
				col.CloneFromVec(x.ColView(j))
				lx.MulVec(l, &col)
				for i := 0; i < n; i++ {
					if d := math.Abs(lx.AtVec(i) - b.At(i, j)); d > 1e-10 {
						t.Fatalf("%dx%d: (L·L⁻¹B)[%d,%d] off by %g", n, k, i, j, d)
					}
				}
			}
		}
	})
}

// TestSameBitsOnAnyCoreCount checks that every split product, solve and
// reduction gives bitwise the same result under GOMAXPROCS 1, 2, 3 and 8,
// at shapes large enough to be split into several blocks (checked), so
// that the partial sums of Gram really are formed on different goroutines.
func TestSameBitsOnAnyCoreCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const r, c = 160, 5000
	if splitCols(r, c, minSumCols) < 2 || splitCols(r, r, minBlockCols) < 2 {
		t.Fatalf("shapes %d×%d do not split; the test would prove nothing", r, c)
	}
	a := testhelp.RandMat(rng, r, c, 1)
	v := testhelp.RandMat(rng, c, 1, 1).RawMatrix().Data
	u := testhelp.RandMat(rng, r, 1, 1).RawMatrix().Data
	gbar := testhelp.RandMat(rng, r, r, 1)
	l := diagDominantLower(rng, r)
	run := func() []*mat.Dense {
		g, av := GramVec(a, v)
		cg, h := Congruence(l, g)
		gb, lb := CongruenceAdjoint(l, h, gbar)
		wg, wv := mat.NewDense(r, r, nil), make([]float64, r)
		AddWhitenedGramVec(wg, wv, l, a, v)
		return []*mat.Dense{
			g, mat.NewDense(r, 1, av), Gram(a), GramAdjoint(gbar, a, u, v),
			wg, mat.NewDense(r, 1, wv), WhitenedAdjoint(gbar, l, a, u, v),
			cg, h, gb, lb, SolveLower(l, a), SolveLowerT(l, a), MulLowerT(l, a), CholSolve(l, a),
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	want := run()
	for _, p := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(p)
		for i, got := range run() {
			if !testhelp.SameBits(got, want[i]) {
				t.Errorf("GOMAXPROCS=%d: result %d differs from GOMAXPROCS=1", p, i)
			}
		}
	}
}

// diagDominantLower returns a random n×n lower-triangular matrix whose
// diagonal dominates its rows (well conditioned at any n).
func diagDominantLower(rng *rand.Rand, n int) *mat.Dense {
	l := testhelp.RandMat(rng, n, n, 1)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			l.Set(i, j, 0)
		}
		l.Set(i, i, float64(n)+math.Abs(l.At(i, i)))
	}
	return l
}

// taperedBlocks covers [0, c) with blocks of at most width (+ minWidth for
// the last), none narrower than minWidth unless c is, narrowing at the end.
func TestTaperedBlocks(t *testing.T) {
	for _, c := range []int{1, 63, 64, 65, 200, 511, 512, 1000, 4194, 20000} {
		b := taperedBlocks(c, 512, 64)
		if b[0] != 0 || b[len(b)-1] != c {
			t.Fatalf("c=%d: bounds %v do not cover [0, c)", c, b)
		}
		for i := 1; i < len(b); i++ {
			w := b[i] - b[i-1]
			if w > 512+64 || (w < 64 && c >= 64) || w <= 0 {
				t.Fatalf("c=%d: block %d is %d wide (bounds %v)", c, i-1, w, b)
			}
			if i >= 3 && w > b[i-1]-b[i-2] {
				t.Fatalf("c=%d: block %d (%d) wider than the one before (bounds %v)", c, i-1, w, b)
			}
		}
		if c == 4194 {
			t.Logf("c=%d: %v", c, b)
		}
	}
}
