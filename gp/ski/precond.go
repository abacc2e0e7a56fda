package ski

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// pivChol is the preconditioner P = L Lᵀ + σ²I of Gardner et al. (2018):
// L (N×k) is the rank-k pivoted Cholesky factor of W K_grid Wᵀ, built from
// its diagonal and k of its columns (one grid MVM each). P is applied and
// sampled through the k×k matrix C = σ²I + LᵀL (Woodbury):
//
//	P⁻¹v = (v − L C⁻¹ Lᵀv)/σ²,   log|P| = (N−k) log σ² + log|C|,
//	z = Lε + σξ ~ N(0, P) for ε, ξ standard normal.
type pivChol struct {
	l      [][]float64 // k columns of length N
	noise  float64
	chol   mat.Cholesky // of C
	logDet float64
}

// newPivChol builds the rank-k preconditioner of op (k ≤ N); pivoting stops
// early once the remaining diagonal is negligible.
func newPivChol(op *Operator, k int) (*pivChol, error) {
	n := op.N()
	k = min(k, n)
	diag := op.Diag()
	var scale float64
	for _, v := range diag {
		scale = math.Max(scale, v)
	}
	p := &pivChol{noise: op.hyp.Noise}
	used := make([]bool, n)
	col := make([]float64, n)
	for m := 0; m < k; m++ {
		piv, best := -1, 0.0
		for i, v := range diag {
			if !used[i] && v > best {
				piv, best = i, v
			}
		}
		if piv < 0 || best <= 1e-12*scale {
			break
		}
		used[piv] = true
		op.column(op.pool[0], piv, col)
		lm := make([]float64, n)
		s := math.Sqrt(best)
		for i := range lm {
			v := col[i]
			for _, lj := range p.l {
				v -= lj[i] * lj[piv]
			}
			lm[i] = v / s
		}
		for i := range diag {
			diag[i] -= lm[i] * lm[i]
		}
		p.l = append(p.l, lm)
	}
	r := len(p.l)
	c := mat.NewSymDense(max(r, 1), nil)
	if r == 0 {
		c.SetSym(0, 0, 1)
	}
	for a := 0; a < r; a++ {
		for b := a; b < r; b++ {
			v := dot(p.l[a], p.l[b])
			if a == b {
				v += p.noise
			}
			c.SetSym(a, b, v)
		}
	}
	if !p.chol.Factorize(c) {
		return nil, fmt.Errorf("ski: preconditioner σ²I + LᵀL (rank %d) is not positive definite", r)
	}
	p.logDet = float64(n-r)*math.Log(p.noise) + p.chol.LogDet()
	if r == 0 {
		p.logDet = float64(n) * math.Log(p.noise)
	}
	return p, nil
}

// solve sets dst = P⁻¹ v.
func (p *pivChol) solve(dst, v []float64) {
	copy(dst, v)
	if len(p.l) > 0 {
		t := mat.NewVecDense(len(p.l), nil)
		for j, lj := range p.l {
			t.SetVec(j, dot(lj, v))
		}
		var s mat.VecDense
		_ = p.chol.SolveVecTo(&s, t) // C is SPD: the factorisation succeeded
		for j, lj := range p.l {
			sj := s.AtVec(j)
			for i := range dst {
				dst[i] -= lj[i] * sj
			}
		}
	}
	for i := range dst {
		dst[i] /= p.noise
	}
}

// sample returns z ~ N(0, P).
func (p *pivChol) sample(rng *rand.Rand, n int) []float64 {
	z := make([]float64, n)
	sd := math.Sqrt(p.noise)
	for i := range z {
		z[i] = sd * rng.NormFloat64()
	}
	for _, lj := range p.l {
		e := rng.NormFloat64()
		for i := range z {
			z[i] += lj[i] * e
		}
	}
	return z
}
