package ski

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"sgplab/internal/goroutines"
)

// Hyper are the hyperparameters of the SKI prior: the RBF-ARD kernel
// k(x, x') = σ_f² exp(−½ Σ_d (x_d − x'_d)²/ℓ_d²) and the Gaussian noise σ².
type Hyper struct {
	Variance     float64   // σ_f²
	Lengthscales []float64 // ℓ_d, one per input dimension
	Noise        float64   // σ²
}

// NumParams is the number of kernel and noise hyperparameters, D + 2.
func (h Hyper) NumParams() int { return len(h.Lengthscales) + 2 }

func (h Hyper) check(d int) error {
	if len(h.Lengthscales) != d {
		return fmt.Errorf("ski: %d lengthscales for %d input dimensions", len(h.Lengthscales), d)
	}
	ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	if !ok(h.Variance) {
		return fmt.Errorf("ski: kernel variance must be positive and finite, got %v", h.Variance)
	}
	if !ok(h.Noise) {
		return fmt.Errorf("ski: noise variance must be positive and finite, got %v", h.Noise)
	}
	for k, l := range h.Lengthscales {
		if !ok(l) {
			return fmt.Errorf("ski: lengthscale %d must be positive and finite, got %v", k, l)
		}
	}
	return nil
}

// Operator is K̂ = W K_grid Wᵀ + σ²I for inputs interpolated by W onto a grid,
// with K_grid = σ_f² ⊗_d T_d and T_d[i,j] = exp(−((i−j)·Step_d)²/(2ℓ_d²)) the
// symmetric Toeplitz Gram matrix of the d-th axis. It is applied by MVMs only:
// sparse W (4^D non-zeros per row) and FFT products with each T_d, O(N 4^D +
// M Σ_d log n_d) per vector; neither K_grid nor K̂ is ever formed.
type Operator struct {
	grid *Grid
	w    *Interp
	hyp  Hyper
	cols [][]float64  // first columns of T_d
	t    []*toeplitz  // T_d
	dt   []*toeplitz  // ∂T_d/∂ℓ_d
	pool []*workspace // one per worker
}

// workspace is one worker's grid buffers and FFT plans.
type workspace struct {
	g, g2 []float64
	fft   []*fftWork
}

// NewOperator builds K̂ for the inputs interpolated by w on grid at hyp.
func NewOperator(grid *Grid, w *Interp, hyp Hyper) (*Operator, error) {
	if grid == nil || w == nil {
		return nil, errors.New("ski: NewOperator needs a grid and an interpolation")
	}
	if w.M != grid.Len() {
		return nil, fmt.Errorf("ski: interpolation onto %d grid points, grid has %d", w.M, grid.Len())
	}
	if err := hyp.check(grid.Dim()); err != nil {
		return nil, err
	}
	op := &Operator{grid: grid, w: w, hyp: Hyper{Variance: hyp.Variance, Lengthscales: append([]float64(nil), hyp.Lengthscales...), Noise: hyp.Noise}}
	workers := max(1, runtime.GOMAXPROCS(0))
	for i := 0; i < workers; i++ {
		ws := &workspace{g: make([]float64, grid.Len()), g2: make([]float64, grid.Len())}
		for _, a := range grid.Axes {
			ws.fft = append(ws.fft, newFFTWork(fftLen(2*a.Size-1)))
		}
		op.pool = append(op.pool, ws)
	}
	for d, a := range grid.Axes {
		l := hyp.Lengthscales[d]
		col, dcol := make([]float64, a.Size), make([]float64, a.Size)
		for j := range col {
			tau := float64(j) * a.Step
			r2 := tau * tau / (l * l)
			col[j] = math.Exp(-0.5 * r2)
			dcol[j] = col[j] * r2 / l // ∂/∂ℓ exp(−τ²/(2ℓ²)) = exp(·) τ²/ℓ³
		}
		op.cols = append(op.cols, col)
		op.t = append(op.t, newToeplitz(col, op.pool[0].fft[d]))
		op.dt = append(op.dt, newToeplitz(dcol, op.pool[0].fft[d]))
	}
	return op, nil
}

// N is the number of rows of K̂.
func (op *Operator) N() int { return op.w.N }

// Hyper returns the operator's hyperparameters.
func (op *Operator) Hyper() Hyper { return op.hyp }

// parallel calls f(ws, c) for c = 0 … n−1; worker k takes c ≡ k (mod
// workers), so every c is computed by one goroutine in a fixed order and the
// results do not depend on the number of cores.
func (op *Operator) parallel(n int, f func(ws *workspace, c int)) {
	workers := min(len(op.pool), n)
	if workers <= 1 {
		for c := 0; c < n; c++ {
			f(op.pool[0], c)
		}
		return
	}
	var g goroutines.Group
	for k := 0; k < workers; k++ {
		g.Go(func() {
			for c := k; c < n; c += workers {
				f(op.pool[k], c)
			}
		})
	}
	g.Wait()
}

// gridMul replaces g by K_grid g = σ_f² (⊗_d T_d) g.
func (op *Operator) gridMul(ws *workspace, g []float64) {
	kronMul(g, op.t, ws.fft)
	for i := range g {
		g[i] *= op.hyp.Variance
	}
}

// gridMulDeriv replaces g by (∂K_grid/∂ℓ_d) g, the Kronecker product with
// T_d replaced by ∂T_d/∂ℓ_d.
func (op *Operator) gridMulDeriv(ws *workspace, g []float64, d int) {
	ts := append([]*toeplitz(nil), op.t...)
	ts[d] = op.dt[d]
	kronMul(g, ts, ws.fft)
	for i := range g {
		g[i] *= op.hyp.Variance
	}
}

func zero(v []float64) {
	for i := range v {
		v[i] = 0
	}
}

// Mul sets dst[c] = K̂ src[c] for every column c.
func (op *Operator) Mul(dst, src [][]float64) {
	op.parallel(len(src), func(ws *workspace, c int) {
		zero(ws.g)
		op.w.ScatterAdd(ws.g, src[c])
		op.gridMul(ws, ws.g)
		op.w.Gather(dst[c], ws.g)
		for i, v := range src[c] {
			dst[c][i] += op.hyp.Noise * v
		}
	})
}

// Diag returns the diagonal of W K_grid Wᵀ (noise excluded). Row n of W is
// the Kronecker product of its per-dimension weights, so
// (W K_grid Wᵀ)_nn = σ_f² Π_d w_ndᵀ T_d[s_nd, s_nd] w_nd over each
// dimension's 4-point stencil s_nd.
func (op *Operator) Diag() []float64 {
	d := op.grid.Dim()
	out := make([]float64, op.w.N)
	for i := range out {
		v := op.hyp.Variance
		for k := 0; k < d; k++ {
			wt, col := op.w.Wts[i*d+k], op.cols[k]
			var q float64
			for a := 0; a < 4; a++ {
				for b := 0; b < 4; b++ {
					q += wt[a] * wt[b] * col[abs(a-b)]
				}
			}
			v *= q
		}
		out[i] = v
	}
	return out
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// column sets dst to column p of W K_grid Wᵀ (noise excluded): W K_grid w_p.
func (op *Operator) column(ws *workspace, p int, dst []float64) {
	zero(ws.g)
	s := op.w.Stencil
	for e := 0; e < s; e++ {
		ws.g[op.w.Idx[p*s+e]] += op.w.Val[p*s+e]
	}
	op.gridMul(ws, ws.g)
	op.w.Gather(dst, ws.g)
}

// Forms returns, for each pair c, the bilinear forms a[c]ᵀ (∂K̂/∂θ) b[c]
// for θ = (σ_f², ℓ_1 … ℓ_D, σ²), in that order. With ga = Wᵀa and gb = Wᵀb
// they are gaᵀ K_grid gb / σ_f², gaᵀ (∂K_grid/∂ℓ_d) gb and aᵀb.
func (op *Operator) Forms(a, b [][]float64) [][]float64 {
	d := op.grid.Dim()
	out := make([][]float64, len(a))
	op.parallel(len(a), func(ws *workspace, c int) {
		f := make([]float64, d+2)
		zero(ws.g)
		op.w.ScatterAdd(ws.g, a[c])
		ga := append([]float64(nil), ws.g...)
		zero(ws.g)
		op.w.ScatterAdd(ws.g, b[c])
		gb := ws.g2
		copy(gb, ws.g)
		op.gridMul(ws, ws.g)
		f[0] = dot(ga, ws.g) / op.hyp.Variance
		for k := 0; k < d; k++ {
			copy(ws.g, gb)
			op.gridMulDeriv(ws, ws.g, k)
			f[1+k] = dot(ga, ws.g)
		}
		f[d+1] = dot(a[c], b[c])
		out[c] = f
	})
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
