package inference

import (
	"runtime"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/internal/workers"
	"sgplab/gp/linalg"
)

// whitenedTerms returns a whitened block's terms of the marginals of q(f)
// (BlockTerms) from A = L⁻¹K_uf (M×B), m and S = tril(q.Sqrt) as one tape
// operation:
//
//	Mean = Aᵀm,   Prior = ‖A‖²_col,   Cov = ‖SᵀA‖²_col,
//	Ā = 2A diag(P̄) + S Q̄ + m M̄ᵀ,  S̄ = tril(A Q̄ᵀ),  m̄ = A M̄,
//	with Q̄ = 2(SᵀA) diag(C̄).
//
// Composed of MatMulTA, MulLowerT and two ColSqNorms, the backward pass made
// four M×B matrices and two passes adding them; here Ā is formed in one pass
// on the product S Q̄, which reuses Q̄'s matrix. Every value and gradient is
// computed by the composed operations' arithmetic, in their order (the tape
// added their contributions to Ā as (colsq + trmm) + mean), so the bits are
// theirs (TestWhitenedTermsBits). A must have no other consumer that adds to
// its gradient, or the order of the sum would change.
func whitenedTerms(a, mu, sqrt *ad.Node) (mean, prior, cov *ad.Node) {
	t := a.Tape()
	m, n := a.Dims()
	av, muv, sv := a.Value(), mu.Value(), sqrt.Value()
	qa := t.NewDenseNonZeroed(m, n)
	linalg.MulLowerTTo(qa, sv, av) // SᵀA
	out := t.NewDenseNonZeroed(n, 3)
	mean0 := t.NewDenseNonZeroed(n, 1)
	linalg.MulTo(mean0, av.T(), muv)
	or := out.RawMatrix()
	for j := 0; j < n; j++ {
		or.Data[j*or.Stride] = mean0.At(j, 0)
	}
	t.Recycle(mean0)
	colSqNormsTo(or.Data[1:], or.Stride, av)
	colSqNormsTo(or.Data[2:], or.Stride, qa)
	joint := ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		gr := g.RawMatrix()
		gm, gp, gc := colOf(gr, 0), colOf(gr, 1), colOf(gr, 2)
		// Q̄ = 2(SᵀA) diag(C̄), in place of SᵀA (ColSqNorms' backward).
		qr := qa.RawMatrix()
		byCols(n, m, func(j0, j1 int) {
			for i := 0; i < m; i++ {
				row := qr.Data[i*qr.Stride+j0 : i*qr.Stride+j1]
				for j, x := range row {
					row[j] = 2 * gc[j0+j] * x
				}
			}
		})
		var ga, gs, gmu *mat.Dense
		if sqrt.NeedsGrad() {
			gs = t.NewDenseNonZeroed(m, m)
			linalg.LowerMulTTo(gs, 1, av, qa, 0) // MulLowerT's S̄
		}
		if mu.NeedsGrad() {
			gmu = t.NewDenseNonZeroed(m, 1)
			linalg.MulTo(gmu, av, colMatrix(gr, 0)) // MatMulTA's m̄
		}
		if a.NeedsGrad() {
			ga = qa                        // Q̄ is not needed after S̄: S Q̄ in its place
			linalg.MulLowerInPlace(sv, ga) // MulLowerT's Ā
			// (2A diag(P̄) + S Q̄) + m M̄ᵀ, term by term as the tape summed them.
			ar, dr := av.RawMatrix(), ga.RawMatrix()
			mr := muv.RawMatrix()
			byCols(n, m, func(j0, j1 int) {
				for i := 0; i < m; i++ {
					mi := mr.Data[i*mr.Stride]
					arow := ar.Data[i*ar.Stride+j0 : i*ar.Stride+j1]
					drow := dr.Data[i*dr.Stride+j0 : i*dr.Stride+j1]
					for j, x := range arow {
						drow[j] = (2*gp[j0+j]*x + drow[j]) + mi*gm[j0+j]
					}
				}
			})
		}
		return []*mat.Dense{ga, gmu, gs}
	}, a, mu, sqrt)
	return ad.Slice(joint, 0, n, 0, 1), ad.Slice(joint, 0, n, 1, 2), ad.Slice(joint, 0, n, 2, 3)
}

// fusedTerms reports whether whitenedTerms computes q's block terms: a
// whitened q with a square root and a one-column mean.
func fusedTerms(q Variational) bool {
	if !q.Whiten || q.Sqrt == nil || q.Mu == nil {
		return false
	}
	_, cols := q.Mu.Dims()
	return cols == 1
}

// colSqNormsTo writes the squared norms of the columns of x to dst[j·stride],
// each summed over the rows in order (as ad.ColSqNorms).
func colSqNormsTo(dst []float64, stride int, x *mat.Dense) {
	r, c := x.Dims()
	xr := x.RawMatrix()
	byCols(c, r, func(j0, j1 int) {
		s := make([]float64, j1-j0)
		for i := 0; i < r; i++ {
			for j, v := range xr.Data[i*xr.Stride+j0 : i*xr.Stride+j1] {
				s[j] += v * v
			}
		}
		for j, v := range s {
			dst[(j0+j)*stride] = v
		}
	})
}

// colOf copies column j of g into a slice.
func colOf(g blas64.General, j int) []float64 {
	out := make([]float64, g.Rows)
	for i := range out {
		out[i] = g.Data[i*g.Stride+j]
	}
	return out
}

// colMatrix copies column j of g into an r×1 matrix.
func colMatrix(g blas64.General, j int) *mat.Dense {
	return mat.NewDense(g.Rows, 1, colOf(g, j))
}

// byCols calls f on fixed column blocks of an r×c matrix, on every core
// when the matrix is large enough to share out. The callers' work is
// independent per column, so the bits do not depend on the blocks.
func byCols(c, r int, f func(j0, j1 int)) {
	const minElems = 1 << 15
	blocks := min(c, 8)
	if r*c < minElems || blocks < 2 {
		f(0, c)
		return
	}
	workers.Run(blocks, runtime.GOMAXPROCS(0), func(b int) { f(b*c/blocks, (b+1)*c/blocks) })
}
