package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

// TestLowerMulTTo checks α·tril(A Bᵀ) + β·tril(dst) against the full
// product, on sizes below, at and across the row blocks and above the
// split threshold, and that the strict upper triangle is zeroed.
func TestLowerMulTTo(t *testing.T) {
	forProcs(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 1))
		for _, sh := range [][2]int{{1, 1}, {7, 3}, {lowerRows, 20}, {lowerRows + 1, 64}, {3*lowerRows + 17, 300}} {
			for _, ab := range [][2]float64{{1, 0}, {-1, 0}, {-0.5, 1}, {2, -3}} {
				n, k := sh[0], sh[1]
				t.Run(fmt.Sprintf("n=%d/k=%d/alpha=%g/beta=%g", n, k, ab[0], ab[1]), func(t *testing.T) {
					a, b := testhelp.RandMat(rng, n, k, 1), testhelp.RandMat(rng, n, k, 1)
					dst := testhelp.RandMat(rng, n, n, 1)
					want := mat.NewDense(n, n, nil)
					if k > 0 {
						want.Mul(a, b.T())
					}
					for i := 0; i < n; i++ {
						for j := 0; j < n; j++ {
							v := 0.0
							if j <= i {
								v = ab[0]*want.At(i, j) + ab[1]*dst.At(i, j)
							}
							want.Set(i, j, v)
						}
					}
					LowerMulTTo(dst, ab[0], a, b, ab[1])
					for i := 0; i < n; i++ {
						for j := 0; j < n; j++ {
							got, w := dst.At(i, j), want.At(i, j)
							if j > i && got != 0 {
								t.Fatalf("upper (%d, %d) = %g, want 0", i, j, got)
							}
							if d := got - w; d > 1e-12*float64(k+1) || d < -1e-12*float64(k+1) {
								t.Fatalf("(%d, %d) = %.17g, want %.17g", i, j, got, w)
							}
						}
					}
				})
			}
		}
	})
}

// TestLowerMulTToSameBits: the row blocks are fixed by n, so the result
// has the same bits however many goroutines share them.
func TestLowerMulTToSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	n, k := 5*lowerRows+3, 400
	a, b, c := testhelp.RandMat(rng, n, k, 1), testhelp.RandMat(rng, n, k, 1), testhelp.RandMat(rng, n, n, 1)
	sameBitsOnProcs(t, "tril(A Bᵀ)", func() (*mat.Dense, error) {
		dst := mat.DenseCopyOf(c)
		LowerMulTTo(dst, -1, a, b, 0.5)
		return dst, nil
	})
}

// TestMulTo checks op(A)·op(B) for every transpose combination against
// gonum's Mul, on shapes that stay whole and shapes that are split by rows
// or by columns, with the same bits on any number of cores.
func TestMulTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for _, sh := range [][3]int{{3, 4, 5}, {600, 300, 40}, {40, 300, 600}, {513, 257, 700}} {
		r, k, c := sh[0], sh[1], sh[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%dx%dx%d/ta=%v/tb=%v", r, k, c, tr[0], tr[1]), func(t *testing.T) {
				var a, b mat.Matrix = testhelp.RandMat(rng, r, k, 1), testhelp.RandMat(rng, k, c, 1)
				if tr[0] {
					a = mat.DenseCopyOf(a.T()).T() // the same values, stored k×r and read transposed
				}
				if tr[1] {
					b = mat.DenseCopyOf(b.T()).T()
				}
				want := mat.NewDense(r, c, nil)
				want.Mul(a, b)
				sameBitsOnProcs(t, "product", func() (*mat.Dense, error) {
					got := mat.NewDense(r, c, nil)
					MulTo(got, a, b)
					if !mat.EqualApprox(got, want, 1e-11*float64(k)) {
						t.Fatalf("MulTo differs from Mul by more than 1e-11·k")
					}
					return got, nil
				})
			})
		}
	}
}

// TestTriangularRecursion checks the recursive triangular solves and
// multiplies (all four of L, Lᵀ, L⁻¹, L⁻ᵀ) against a dense reference, at
// orders that recurse once, several times and unevenly, and on a badly
// conditioned factor.
func TestTriangularRecursion(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for _, n := range []int{triBase, triBase + 1, 2*triBase + 45, 517} {
		for _, diag := range []float64{1, 1e-3} {
			l := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					l.Set(i, j, 0.3*rng.NormFloat64()/float64(n))
				}
				l.Set(i, i, diag+rng.Float64())
			}
			b := testhelp.RandMat(rng, n, 150, 1)
			check := func(name string, got *mat.Dense, want mat.Matrix, tol float64) {
				t.Helper()
				if !mat.EqualApprox(got, want, tol) {
					t.Errorf("n=%d diag=%g: %s differs from the dense reference by more than %g", n, diag, name, tol)
				}
			}
			lb := mat.NewDense(n, 150, nil)
			lb.Mul(l, b)
			check("L·B", MulLower(l, b), lb, 1e-12)
			ltb := mat.NewDense(n, 150, nil)
			ltb.Mul(l.T(), b)
			check("Lᵀ·B", MulLowerT(l, b), ltb, 1e-12)
			// L⁻¹(L·B) = B and L⁻ᵀ(Lᵀ·B) = B, to the conditioning of L.
			tol := 1e-10 / diag
			check("L⁻¹(L·B)", SolveLower(l, lb), b, tol)
			check("L⁻ᵀ(Lᵀ·B)", SolveLowerT(l, ltb), b, tol)
		}
	}
}

// TestGemm checks α·op(A)·op(B) + β·C for every transpose combination
// against gonum's Mul, on shapes that stay whole and shapes split by rows
// or columns, with the same bits on any number of cores.
func TestGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for _, sh := range [][3]int{{3, 4, 5}, {372, 128, 256}, {128, 372, 128}, {40, 300, 600}} {
		r, k, c := sh[0], sh[1], sh[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%dx%dx%d/ta=%v/tb=%v", r, k, c, tr[0], tr[1]), func(t *testing.T) {
				a, b, c0 := testhelp.RandMat(rng, r, k, 1), testhelp.RandMat(rng, k, c, 1), testhelp.RandMat(rng, r, c, 1)
				var opA, opB mat.Matrix = a, b
				ga, gb := a.RawMatrix(), b.RawMatrix()
				ta, tb := blas.NoTrans, blas.NoTrans
				if tr[0] {
					s := mat.DenseCopyOf(a.T())
					opA, ga, ta = s.T(), s.RawMatrix(), blas.Trans
				}
				if tr[1] {
					s := mat.DenseCopyOf(b.T())
					opB, gb, tb = s.T(), s.RawMatrix(), blas.Trans
				}
				want := mat.NewDense(r, c, nil)
				want.Mul(opA, opB)
				want.Scale(-0.5, want)
				want.Add(want, c0) // β = 1
				sameBitsOnProcs(t, "product", func() (*mat.Dense, error) {
					got := mat.DenseCopyOf(c0)
					Gemm(ta, tb, -0.5, ga, gb, 1, got.RawMatrix())
					if !mat.EqualApprox(got, want, 1e-11*float64(k)) {
						t.Fatalf("Gemm differs from Mul by more than 1e-11·k")
					}
					return got, nil
				})
			})
		}
	}
}

// TestSolveRightLower checks B·L⁻¹ against B = (B·L⁻¹)·L on row counts
// that stay whole and that are split, with the same bits on any number of
// cores.
func TestSolveRightLower(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 6))
	const n = 128
	l := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l.Set(i, j, 0.3*rng.NormFloat64()/n)
		}
		l.Set(i, i, 0.5+rng.Float64())
	}
	raw := l.RawMatrix()
	tri := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: raw.Stride, Data: raw.Data}
	for _, rows := range []int{5, 372, 1000} {
		b := testhelp.RandMat(rng, rows, n, 1)
		sameBitsOnProcs(t, "B·L⁻¹", func() (*mat.Dense, error) {
			x := mat.DenseCopyOf(b)
			SolveRightLower(tri, x.RawMatrix())
			var back mat.Dense
			back.Mul(x, l)
			if !mat.EqualApprox(&back, b, 1e-12) {
				t.Fatalf("rows=%d: (B·L⁻¹)·L ≠ B", rows)
			}
			return x, nil
		})
	}
}
