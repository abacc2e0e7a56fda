package likelihoods

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// MaxQuadraturePoints bounds GaussHermite's n; beyond it the orthonormal
// recurrence would overflow at the outermost nodes.
const MaxQuadraturePoints = 300

var (
	ghMu    sync.Mutex
	ghCache = map[int][2][]float64{}
)

// GaussHermite returns the n nodes (ascending) and weights of the
// Gauss–Hermite rule ∫ g(x) e^{−x²} dx ≈ Σ wᵢ g(xᵢ), exact for polynomials
// of degree ≤ 2n − 1. Nodes come from the eigenvalues of the symmetric
// Jacobi matrix (Golub–Welsch) and are then polished by Newton's method on
// the orthonormal Hermite polynomial; weights use the Christoffel formula
// wᵢ = 1/Σₖ p̃ₖ(xᵢ)², which keeps the tiny outer weights relatively
// accurate. The returned slices are shared: do not modify them.
func GaussHermite(n int) (x, w []float64, err error) {
	if n < 1 || n > MaxQuadraturePoints {
		return nil, nil, fmt.Errorf("likelihoods: Gauss–Hermite needs 1 ≤ n ≤ %d points, got %d", MaxQuadraturePoints, n)
	}
	ghMu.Lock()
	defer ghMu.Unlock()
	if c, ok := ghCache[n]; ok {
		return c[0], c[1], nil
	}
	// Jacobi matrix of the physicists' Hermite polynomials: zero diagonal,
	// off-diagonal √(k/2).
	j := mat.NewSymDense(n, nil)
	for k := 1; k < n; k++ {
		j.SetSym(k-1, k, math.Sqrt(float64(k)/2))
	}
	var eig mat.EigenSym
	if ok := eig.Factorize(j, false); !ok {
		return nil, nil, fmt.Errorf("likelihoods: Gauss–Hermite(%d): eigendecomposition failed", n)
	}
	x = eig.Values(nil)
	sort.Float64s(x)
	w = make([]float64, n)
	for i := range x {
		for it := 0; it < 20; it++ {
			pn, pn1, _ := hermiteOrthonormal(n, x[i])
			step := pn / (math.Sqrt(2*float64(n)) * pn1)
			x[i] -= step
			if math.Abs(step) <= 1e-15*(1+math.Abs(x[i])) {
				break
			}
		}
		_, _, sumSq := hermiteOrthonormal(n, x[i])
		w[i] = 1 / sumSq
	}
	// Enforce the rule's exact symmetry so odd moments vanish.
	for i := 0; i < n/2; i++ {
		k := n - 1 - i
		xs, ws := 0.5*(x[k]-x[i]), 0.5*(w[k]+w[i])
		x[i], x[k], w[i], w[k] = -xs, xs, ws, ws
	}
	if n%2 == 1 {
		x[n/2] = 0
	}
	ghCache[n] = [2][]float64{x, w}
	return x, w, nil
}

// hermiteOrthonormal evaluates the orthonormal Hermite polynomials
// (weight e^{−x²}) at x and returns p̃ₙ, p̃ₙ₋₁ and Σ_{k<n} p̃ₖ².
func hermiteOrthonormal(n int, x float64) (pn, pn1, sumSq float64) {
	prev, cur := 0.0, math.Pow(math.Pi, -0.25)
	for k := 1; k <= n; k++ {
		sumSq += cur * cur
		next := x*math.Sqrt(2/float64(k))*cur - math.Sqrt(float64(k-1)/float64(k))*prev
		prev, cur = cur, next
	}
	return cur, prev, sumSq
}
