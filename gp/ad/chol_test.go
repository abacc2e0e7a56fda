package ad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/linalg"
	"sgplab/internal/testhelp"
)

// TestCholBackwardBlockedMatchesUnblocked compares the blocked Cholesky
// adjoint with the one-shot formula sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹) at sizes below,
// at and across several panel boundaries.
func TestCholBackwardBlockedMatchesUnblocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, size := range []int{1, 5, cholBlock, cholBlock + 1, 2*cholBlock + 37, 3 * cholBlock} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			l, err := linalg.Cholesky(draw(rng, pd(size)))
			if err != nil {
				t.Fatal(err)
			}
			g := draw(rng, n(size, size)) // upper triangle must be ignored
			tp := NewTape()
			got := cholBackward(tp, l, g)
			// One-shot: Φ(S + Sᵀ) is the lower-triangle gradient; its
			// symmetric version is ½ of it off the diagonal.
			want := tril(mat.DenseCopyOf(g))
			cholRevUnblocked(tp, l, want)
			for i := 0; i < size; i++ {
				for j := 0; j < i; j++ {
					want.Set(i, j, 0.5*want.At(i, j))
					want.Set(j, i, want.At(i, j))
				}
			}
			if !mat.EqualApprox(got, want, 1e-9*max(1, mat.Norm(want, 1))) {
				var d mat.Dense
				d.Sub(got, want)
				t.Errorf("blocked adjoint differs from the unblocked one by %.3g (max norm)", mat.Norm(&d, math.Inf(1)))
			}
		})
	}
}

// TestCholBackwardSameBits checks that the panel tasks of the Cholesky
// adjoint give bitwise the same Ā under GOMAXPROCS 1, 2 and 3 as each
// other and as the adjoint with one BLAS call per panel operation
// (cholBackwardUnsplit, the adjoint before its panels were shared out),
// at sizes whose panels have one, several and partial row and column
// blocks.
func TestCholBackwardSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, size := range []int{1, 5, cholBlock, cholBlock + 1, 2*cholBlock + 37, 300, 500, 1000} {
		l, err := linalg.Cholesky(draw(rng, pd(size)))
		if err != nil {
			t.Fatal(err)
		}
		g := draw(rng, n(size, size))
		tp := NewTape()
		runtime.GOMAXPROCS(1)
		want := cholBackwardUnsplit(tp, l, g)
		for _, p := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(p)
			if got := cholBackward(tp, l, g); !testhelp.SameBits(got, want) {
				t.Errorf("n=%d, GOMAXPROCS=%d: the adjoint's bits differ from one BLAS call per operation", size, p)
			}
		}
	}
}

// cholBackwardUnsplit is cholBackward with one BLAS call per panel
// operation (split only by linalg's own rules), the reference for its bits.
func cholBackwardUnsplit(t *Tape, l, g *mat.Dense) *mat.Dense {
	n, _ := l.Dims()
	abar := tril(t.copyOf(g)) // only the lower triangle of L̄ is real
	lr, ar := l.RawMatrix(), abar.RawMatrix()
	tmp := t.NewDense(min(n, cholBlock), min(n, cholBlock))
	defer t.Recycle(tmp)
	for k := ((n - 1) / cholBlock) * cholBlock; k >= 0; k -= cholBlock {
		j := min(k+cholBlock, n)
		nb := j - k
		d := l.Slice(k, j, k, j).(*mat.Dense)
		db := abar.Slice(k, j, k, j).(*mat.Dense)
		cb := blockView(ar, j, n, k, j)
		if j < n {
			draw := d.RawMatrix()
			linalg.SolveRightLower(blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: nb, Stride: draw.Stride, Data: draw.Data}, cb)
			if k > 0 {
				linalg.Gemm(blas.NoTrans, blas.NoTrans, -1, cb, blockView(lr, k, j, 0, k), 1, blockView(ar, j, n, 0, k))
			}
			t := tmp.Slice(0, nb, 0, nb).(*mat.Dense)
			linalg.Gemm(blas.Trans, blas.NoTrans, 1, cb, blockView(lr, j, n, k, j), 0, t.RawMatrix())
			db.Sub(db, tril(t))
		}
		cholRevUnblocked(t, d, db)
		if k > 0 {
			rb := blockView(ar, k, j, 0, k)
			if j < n {
				linalg.Gemm(blas.Trans, blas.NoTrans, -1, cb, blockView(lr, j, n, 0, k), 1, rb)
			}
			t := tmp.Slice(0, nb, 0, nb).(*mat.Dense)
			t.Add(db, db.T())
			linalg.Gemm(blas.NoTrans, blas.NoTrans, -1, t.RawMatrix(), blockView(lr, k, j, 0, k), 1, rb)
		}
	}
	// Symmetrise: ½(Ā + Āᵀ) keeps the diagonal and halves the rest (row
	// i is the only one to touch (i, c) and (c, i) for c < i).
	byRows(n, n, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			for c := 0; c < i; c++ {
				v := 0.5 * ar.Data[i*ar.Stride+c]
				ar.Data[i*ar.Stride+c] = v
				ar.Data[c*ar.Stride+i] = v
			}
		}
	})
	return abar
}
