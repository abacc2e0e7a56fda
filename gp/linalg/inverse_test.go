package linalg

import (
	"errors"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/internal/testhelp"
)

func TestInverseChol(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 33, 200, 2*invBlock + 17} {
		a := mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1))
		l, err := Cholesky(a)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := InverseChol(l)
		if err != nil {
			t.Fatal(err)
		}
		// A·A⁻¹ = I and A⁻¹ is exactly symmetric.
		var p mat.Dense
		p.Mul(a, inv)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				if d := p.At(i, j) - want; d > 1e-9 || d < -1e-9 {
					t.Fatalf("n=%d: (A A⁻¹)[%d,%d] = %v, want %v", n, i, j, p.At(i, j), want)
				}
				if inv.At(i, j) != inv.At(j, i) {
					t.Fatalf("n=%d: inverse not symmetric at [%d,%d]", n, i, j)
				}
			}
		}
	}
	if _, err := InverseChol(mat.NewDense(2, 2, []float64{1, 0, 3, 0})); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("singular factor: err = %v, want ErrNotPositiveDefinite", err)
	}
}

// TestGram compares Gram with a general product for shapes below, at and
// across the chunk size (the chunked path runs on the gonum backend).
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, sh := range [][2]int{{1, 1}, {3, 7}, {40, 2 * gramChunk}, {130, gramChunk + 3}, {300, 260}, {2, 0}} {
		a := testhelp.RandMat(rng, sh[0], max(sh[1], 1), 1).Slice(0, sh[0], 0, sh[1]).(*mat.Dense)
		if sh[1] == 0 {
			a = &mat.Dense{}
			a.ReuseAs(sh[0], 1)
			a = a.Slice(0, sh[0], 0, 0).(*mat.Dense)
		}
		got := Gram(a)
		want := mat.NewDense(sh[0], sh[0], nil)
		want.Mul(a, a.T())
		if !mat.EqualApprox(got, want, 1e-10) {
			t.Errorf("Gram of %d×%d differs from A Aᵀ", sh[0], sh[1])
		}
		for i := 0; i < sh[0]; i++ {
			for j := 0; j < i; j++ {
				if got.At(i, j) != got.At(j, i) {
					t.Fatalf("Gram of %d×%d not symmetric at [%d,%d]", sh[0], sh[1], i, j)
				}
			}
		}
	}
}

// TestInverseCholSameBits checks that the blocked inverse gives the same
// bits however many goroutines share its blocks.
func TestInverseCholSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n := 3*invBlock + 5
	l, err := Cholesky(mat.DenseCopyOf(testhelp.RandSPD(rng, n, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sameBitsOnProcs(t, "inverse", func() (*mat.Dense, error) { return InverseChol(l) })
}

// sameBitsOnProcs checks that f gives the same bits planned for this
// machine's cores as for several others (see forProcs).
func sameBitsOnProcs(t *testing.T, what string, f func() (*mat.Dense, error)) {
	t.Helper()
	want, err := f()
	if err != nil {
		t.Fatal(err)
	}
	forProcs(t, func(t *testing.T) {
		got, err := f()
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got, want) {
			t.Errorf("%s differs in its bits from the one on this machine's cores", what)
		}
	})
}
