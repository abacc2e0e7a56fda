package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randLower returns an n×n matrix with a well-conditioned lower triangle
// and, when junk, large values above the diagonal that no routine here may
// read.
func randLower(rng *rand.Rand, n int, junk bool) *mat.Dense {
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case j == i:
				a.Set(i, j, 1+rng.Float64())
			case j < i:
				a.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(n)))
			case junk:
				a.Set(i, j, 1e6*rng.NormFloat64())
			}
		}
	}
	return a
}

// lowerPart is the lower triangle of a, the rest zero.
func lowerPart(a *mat.Dense) *mat.Dense {
	n, _ := a.Dims()
	tri := mat.NewTriDense(n, mat.Lower, nil)
	tri.Copy(a) // the triangle only
	return mat.DenseCopyOf(tri)
}

// TestTriangularRHS: L⁻¹B and the lower triangle of LᵀB for a lower-
// triangular B agree with the general routines on tril(B), read only the
// lower triangles, and give the same bits on any number of cores, on
// orders on both sides of the block split.
func TestTriangularRHS(t *testing.T) {
	for _, n := range []int{1, 2, 17, 64, 129, 200, 301, 520} {
		rng := rand.New(rand.NewPCG(21, uint64(n)))
		l, b := randLower(rng, n, true), randLower(rng, n, true)

		solve := func() (*mat.Dense, error) {
			x := mat.DenseCopyOf(b)
			SolveLowerLowerInPlace(l, x)
			return x, nil
		}
		got, _ := solve()
		want := lowerPart(b)
		SolveLowerInPlace(lowerPart(l), want)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				g, w := got.At(i, j), want.At(i, j)
				if j > i && g != 0 {
					t.Fatalf("n=%d: L⁻¹B(%d,%d) = %v above the diagonal, want 0", n, i, j, g)
				}
				if math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
					t.Fatalf("n=%d: L⁻¹B(%d,%d) = %.17g, general solve %.17g", n, i, j, g, w)
				}
			}
		}
		sameBitsOnProcs(t, "L⁻¹B", solve)

		mul := func() (*mat.Dense, error) {
			dst := mat.NewDense(n, n, nil)
			MulLowerTLowerTo(dst, l, b)
			return dst, nil
		}
		got, _ = mul()
		want = mat.NewDense(n, n, nil)
		MulLowerTTo(want, lowerPart(l), lowerPart(b))
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				g, w := got.At(i, j), want.At(i, j)
				if math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
					t.Fatalf("n=%d: (LᵀB)(%d,%d) = %.17g, general product %.17g", n, i, j, g, w)
				}
			}
		}
		sameBitsOnProcs(t, "tril(LᵀB)", mul)
	}
}
