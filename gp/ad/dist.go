package ad

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"gonum.org/v1/gonum/mat"
)

// SqDist returns the N×M matrix of squared Euclidean distances between the
// rows of x (N×D) and z (M×D), computed as ‖x‖² + ‖z‖² − 2xzᵀ with one
// dgemm. Round-off negatives are clamped to zero, and SqDist(x, x) has an
// exactly zero diagonal.
func SqDist(x, z *Node) *Node {
	n, d := x.Dims()
	m, dz := z.Dims()
	if d != dz {
		panic(fmt.Sprintf("ad.SqDist: inputs %s and %s have different column counts", shapeOf(x), shapeOf(z)))
	}
	// The same matrix on both sides (also as two nodes) gets the exactly
	// symmetric dsyrk product and a zero diagonal.
	same := x.val == z.val
	xn := rowSqNorms(x.val)
	zn := xn
	var v *mat.Dense
	if same {
		v = gram(x.tape, x.val, blas.NoTrans)
	} else {
		zn = rowSqNorms(z.val)
		v = gemm(x.tape, x.val, z.val.T())
	}
	raw := v.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+m]
		for j, xz := range row {
			s := xn[i] + zn[j] - 2*xz
			if s < 0 {
				s = 0
			}
			row[j] = s
		}
		if same {
			row[i] = 0
		}
	}
	return Custom(v, func(g *mat.Dense) []*mat.Dense {
		// ∂D_ij/∂x_i = 2(x_i − z_j), so x̄ = 2(diag(G1) x − G z) and
		// z̄ = 2(diag(Gᵀ1) z − Gᵀ x).
		var gx, gz *mat.Dense
		if x.needsGrad {
			gx = gemm(x.tape, g, z.val)
			rs := make([]float64, n)
			_, grow := rowsOf(g)
			for i := 0; i < n; i++ {
				for _, e := range grow(i) {
					rs[i] += e
				}
			}
			gx = distGrad(gx, x.val, rs)
		}
		if z.needsGrad {
			gz = gemm(x.tape, g.T(), x.val)
			cs := make([]float64, m)
			_, grow := rowsOf(g)
			for i := 0; i < n; i++ {
				for j, e := range grow(i) {
					cs[j] += e
				}
			}
			gz = distGrad(gz, z.val, cs)
		}
		return []*mat.Dense{gx, gz}
	}, x, z)
}

// distGrad overwrites p with 2(diag(s) a − p) and returns it.
func distGrad(p, a *mat.Dense, s []float64) *mat.Dense {
	r, c := p.Dims()
	_, arow := rowsOf(a)
	pd := p.RawMatrix().Data
	for i := 0; i < r; i++ {
		pi := pd[i*c : (i+1)*c]
		for j, av := range arow(i) {
			pi[j] = 2 * (s[i]*av - pi[j])
		}
	}
	return p
}

func rowSqNorms(a *mat.Dense) []float64 {
	n, row := rowsOf(a)
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range row(i) {
			s += v * v
		}
		out[i] = s
	}
	return out
}
