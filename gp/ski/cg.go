package ski

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// cgResult holds the outcome of batched preconditioned conjugate gradients.
type cgResult struct {
	x     [][]float64 // solutions
	z0    [][]float64 // P⁻¹ b, the first preconditioned residuals
	rz0   []float64   // bᵀ P⁻¹ b
	alpha [][]float64 // step lengths α_j, per column
	beta  [][]float64 // direction updates β_j, per column
	iters int         // largest iteration count over the columns
	resid float64     // largest final relative residual ‖r‖/‖b‖
}

// pcg solves K̂ x = b for every column of b by conjugate gradients
// preconditioned by p, the MVMs of all unfinished columns batched into one
// Operator.Mul. The batch stops as a whole, by GPyTorch's rule (linear_cg):
// once it has run minIter iterations and the mean over the columns of the
// relative residual ‖r‖/‖b‖ is below tol (a column with b = 0 counts 0), or
// at maxIter. A column stops on its own only when its search direction
// vanishes (exact convergence). With GPyTorch's training tolerance 1 the
// mean rule ends nearly every solve after minIter iterations, however far
// from converged its hardest column is.
//
// The CG coefficients also run Lanczos on P^{-1/2} K̂ P^{-1/2} from the
// start vector P^{-1/2} b (Saad 2003, §6.7.3): see tridiag.
func (op *Operator) pcg(b [][]float64, p *pivChol, tol float64, minIter, maxIter int) cgResult {
	n, nc := op.N(), len(b)
	res := cgResult{x: make([][]float64, nc), z0: make([][]float64, nc), rz0: make([]float64, nc),
		alpha: make([][]float64, nc), beta: make([][]float64, nc)}
	r, z, dir, q := make([][]float64, nc), make([][]float64, nc), make([][]float64, nc), make([][]float64, nc)
	rz, bnorm := make([]float64, nc), make([]float64, nc)
	var active []int
	for c := range b {
		res.x[c] = make([]float64, n)
		r[c] = append([]float64(nil), b[c]...)
		z[c] = make([]float64, n)
		p.solve(z[c], r[c])
		res.z0[c] = append([]float64(nil), z[c]...)
		dir[c] = append([]float64(nil), z[c]...)
		q[c] = make([]float64, n)
		rz[c] = dot(r[c], z[c])
		res.rz0[c] = rz[c]
		bnorm[c] = math.Sqrt(dot(b[c], b[c]))
		if bnorm[c] > 0 && rz[c] > 0 {
			active = append(active, c)
		}
	}
	rel := make([]float64, nc) // current ‖r‖/‖b‖; 0 for b = 0
	for _, c := range active {
		rel[c] = 1
	}
	for it := 1; len(active) > 0 && it <= maxIter; it++ {
		src, dst := make([][]float64, len(active)), make([][]float64, len(active))
		for k, c := range active {
			src[k], dst[k] = dir[c], q[c]
		}
		op.Mul(dst, src)
		res.iters = it
		next := active[:0]
		for _, c := range active {
			pq := dot(dir[c], q[c])
			if !(pq > 0) {
				continue // direction vanished or lost definiteness: stop here
			}
			a := rz[c] / pq
			x, rc := res.x[c], r[c]
			for i := range x {
				x[i] += a * dir[c][i]
				rc[i] -= a * q[c][i]
			}
			res.alpha[c] = append(res.alpha[c], a)
			rel[c] = math.Sqrt(dot(rc, rc)) / bnorm[c]
			p.solve(z[c], rc)
			rzNew := dot(rc, z[c])
			if !(rzNew > 0) {
				continue
			}
			beta := rzNew / rz[c]
			res.beta[c] = append(res.beta[c], beta)
			rz[c] = rzNew
			for i, zi := range z[c] {
				dir[c][i] = zi + beta*dir[c][i]
			}
			next = append(next, c)
		}
		active = next
		var mean float64
		for _, v := range rel {
			mean += v
		}
		if it >= minIter && mean/float64(nc) < tol {
			break
		}
	}
	for _, v := range rel {
		res.resid = math.Max(res.resid, v)
	}
	return res
}

// logQuadrature returns the Lanczos quadrature estimate of
// ωᵀ log(P^{-1/2} K̂ P^{-1/2}) ω for the start vector ω = P^{-1/2} b of
// column c, using its first steps CG coefficients. The Lanczos tridiagonal T
// has T_jj = 1/α_j + β_{j−1}/α_{j−1} and T_{j,j+1} = √β_j/α_j, and
// ωᵀ f(A) ω ≈ ‖ω‖² e₁ᵀ f(T) e₁ = ‖ω‖² Σ_k V_{1k}² f(λ_k) over T's
// eigenpairs (Golub & Meurant; Ubaru et al. 2017), with ‖ω‖² = bᵀP⁻¹b.
func (res cgResult) logQuadrature(c, steps int) (float64, error) {
	al, be := res.alpha[c], res.beta[c]
	k := min(steps, len(al))
	if k == 0 {
		return 0, fmt.Errorf("ski: Lanczos quadrature with no CG steps")
	}
	t := mat.NewSymDense(k, nil)
	for j := 0; j < k; j++ {
		v := 1 / al[j]
		if j > 0 {
			v += be[j-1] / al[j-1]
		}
		t.SetSym(j, j, v)
		if j+1 < k {
			t.SetSym(j, j+1, math.Sqrt(be[j])/al[j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(t, true) {
		return 0, fmt.Errorf("ski: eigendecomposition of the %d×%d Lanczos tridiagonal failed", k, k)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var s float64
	for j, l := range vals {
		if !(l > 0) {
			return 0, fmt.Errorf("ski: Lanczos eigenvalue %g ≤ 0: K̂ is not numerically positive definite", l)
		}
		v := vecs.At(0, j)
		s += v * v * math.Log(l)
	}
	return res.rz0[c] * s, nil
}
