package sphere

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/internal/vec"
	"sgplab/internal/goroutines"
)

// MaxBasisSize bounds the number of harmonics a Basis may hold.
const MaxBasisSize = 1 << 20

// Basis is an orthonormal basis (for the surface measure, see the package
// documentation) of the real spherical harmonics of the given levels on
// S^{d−1}, in the order of increasing level and, within a level, the
// construction's order. It is immutable and safe for concurrent use.
type Basis struct {
	d      int
	levels []int // ascending, distinct
	maxL   int
	m      int
	offset []int // offset[i] is the first row of levels[i]

	// lists[k] (k = 2…d) are the harmonics of degree ≤ maxL in the first k
	// coordinates, grouped by degree: start[k][n] is the first entry of
	// degree n. For k ≥ 3 entry e is fac[k][e] · lists[k−1][par[k][e]].
	start [][]int
	par   [][]int32
	fac   [][]int32 // index into the factor table of dimension k
	// coef[k][(m, j)] are the recurrence coefficients of the homogeneous,
	// normalised Gegenbauer factor q_j = c_{j,λ} R^j C_j^{(λ)}(y_k/R),
	// λ = m + (k−2)/2, stored as q0, q1 scale and (A_j, B_j) pairs.
	coef [][]gegenCoef
	// top[i] is the entry of lists[d] that row i of the output holds.
	top []int32
	// works holds the scratch of finished evaluations for the next: a
	// prediction or a precompute evaluates the basis on thousands of
	// chunks, each goroutine of each needing a *work.
	works sync.Pool
}

type gegenCoef struct {
	q0, q1 float64   // q_0 = c_0, q_1 = q1·u
	a, b   []float64 // q_j = a[j]·u·q_{j−1} − b[j]·R²·q_{j−2}, j ≥ 2
}

// NewBasis returns the basis of the harmonics of levels 0…maxLevel on
// S^{d−1}. Use NewBasisLevels to pick levels (e.g. to drop levels whose
// kernel coefficient is zero).
func NewBasis(d, maxLevel int) (*Basis, error) {
	if maxLevel < 0 {
		return nil, fmt.Errorf("sphere: maximum level %d, want ≥ 0", maxLevel)
	}
	levels := make([]int, maxLevel+1)
	for i := range levels {
		levels[i] = i
	}
	return NewBasisLevels(d, levels)
}

// NewBasisLevels returns the basis of the harmonics of the given levels
// (ascending, distinct, ≥ 0) on S^{d−1}, d ≥ 2.
func NewBasisLevels(d int, levels []int) (*Basis, error) {
	if d < 2 {
		return nil, fmt.Errorf("sphere: dimension d = %d, want ≥ 2 (the sphere S^{d−1} ⊂ R^d; append a bias coordinate to 1-D inputs)", d)
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("sphere: no levels given")
	}
	for i, l := range levels {
		if l < 0 || (i > 0 && l <= levels[i-1]) {
			return nil, fmt.Errorf("sphere: levels %v must be ≥ 0, ascending and distinct", levels)
		}
	}
	b := &Basis{d: d, levels: append([]int(nil), levels...), maxL: levels[len(levels)-1]}
	for _, l := range levels {
		n := LevelCount(d, l)
		if n > MaxBasisSize || b.m+n > MaxBasisSize {
			return nil, fmt.Errorf("sphere: levels %v in d = %d give more than %d harmonics", levels, d, MaxBasisSize)
		}
		b.offset = append(b.offset, b.m)
		b.m += n
	}
	// Intermediate lists hold all degrees ≤ maxL in k < d coordinates.
	for k := 3; k < d; k++ {
		if CumulativeCount(k, b.maxL) > MaxBasisSize {
			return nil, fmt.Errorf("sphere: level %d in d = %d needs more than %d intermediate harmonics", b.maxL, d, MaxBasisSize)
		}
	}
	b.plan()
	return b, nil
}

// plan builds the tree of products and the recurrence coefficients.
func (b *Basis) plan() {
	d, L := b.d, b.maxL
	b.start = make([][]int, d+1)
	b.par = make([][]int32, d+1)
	b.fac = make([][]int32, d+1)
	b.coef = make([][]gegenCoef, d+1)
	// k = 2: degree 0 is one entry, degree n ≥ 1 two (cos, sin).
	b.start[2] = make([]int, L+2)
	for n := 0; n <= L; n++ {
		b.start[2][n+1] = b.start[2][n] + LevelCount(2, n)
	}
	for k := 3; k <= d; k++ {
		lam0 := float64(k-2) / 2
		b.coef[k] = make([]gegenCoef, (L+1)*(L+1))
		for m := 0; m <= L; m++ {
			b.coef[k][m*(L+1)] = newGegenCoef(L-m, float64(m)+lam0)
		}
		b.start[k] = make([]int, L+2)
		for n := 0; n <= L; n++ {
			if k == d && !b.hasLevel(n) {
				b.start[k][n+1] = b.start[k][n]
				continue
			}
			for m := 0; m <= n; m++ {
				j := n - m
				for e := b.start[k-1][m]; e < b.start[k-1][m+1]; e++ {
					b.par[k] = append(b.par[k], int32(e))
					b.fac[k] = append(b.fac[k], int32(m*(L+1)+j))
				}
			}
			b.start[k][n+1] = len(b.par[k])
		}
	}
	if d == 2 {
		for _, l := range b.levels {
			for e := b.start[2][l]; e < b.start[2][l+1]; e++ {
				b.top = append(b.top, int32(e))
			}
		}
	}
}

func (b *Basis) hasLevel(n int) bool {
	for _, l := range b.levels {
		if l == n {
			return true
		}
	}
	return false
}

// newGegenCoef returns the coefficients of q_j = c_{j,λ} G_j, j ≤ jmax,
// where G_j = R^j C_j^{(λ)}(u/R) follows the homogeneous recurrence
// j G_j = 2(j+λ−1) u G_{j−1} − (j+2λ−2) R² G_{j−2} and c_{j,λ} is the
// inverse norm of C_j^{(λ)} under the weight (1−t²)^{λ−½}:
//
//	c_{j,λ}⁻² = π 2^{1−2λ} Γ(j+2λ) / (j! (j+λ) Γ(λ)²).
//
// The ratios c_j/c_{j−1} and c_j/c_{j−2} are formed from log-Gamma, so
// the recurrence never sees an overflowing constant.
func newGegenCoef(jmax int, lam float64) gegenCoef {
	logc := func(j int) float64 {
		fj := float64(j)
		a, _ := math.Lgamma(fj + 2*lam)
		f, _ := math.Lgamma(fj + 1)
		g, _ := math.Lgamma(lam)
		return -0.5 * (math.Log(math.Pi) + (1-2*lam)*math.Ln2 + a - f - math.Log(fj+lam) - 2*g)
	}
	c := gegenCoef{q0: math.Exp(logc(0))}
	if jmax >= 1 {
		c.q1 = math.Exp(logc(1)) * 2 * lam
	}
	c.a = make([]float64, jmax+1)
	c.b = make([]float64, jmax+1)
	for j := 2; j <= jmax; j++ {
		fj := float64(j)
		c.a[j] = 2 * (fj + lam - 1) / fj * math.Exp(logc(j)-logc(j-1))
		c.b[j] = (fj + 2*lam - 2) / fj * math.Exp(logc(j)-logc(j-2))
	}
	return c
}

// Dim is d, the dimension of the ambient space R^d.
func (b *Basis) Dim() int { return b.d }

// M is the number of harmonics.
func (b *Basis) M() int { return b.m }

// Levels returns the levels, ascending.
func (b *Basis) Levels() []int { return append([]int(nil), b.levels...) }

// LevelOf returns the level of every row of the output, length M.
func (b *Basis) LevelOf() []int {
	out := make([]int, 0, b.m)
	for i, l := range b.levels {
		n := b.m - b.offset[i]
		if i+1 < len(b.levels) {
			n = b.offset[i+1] - b.offset[i]
		}
		for k := 0; k < n; k++ {
			out = append(out, l)
		}
	}
	return out
}

// blockPoints is the number of points evaluated together: the
// intermediate rows of one block stay in cache.
const blockPoints = 128

// Eval returns the M×n matrix Φ with Φ[m, i] = φ_m(x_i) for the n rows of
// x (n×d). The harmonics are homogeneous polynomials, so for rows that are
// not unit vectors Φ[m, i] = ‖x_i‖^ℓ φ_m(x_i/‖x_i‖). Points are split into
// fixed blocks spread over all cores; blocks write disjoint columns, so
// the result does not depend on the number of cores.
func (b *Basis) Eval(x *mat.Dense) (*mat.Dense, error) {
	n, c := x.Dims()
	if c != b.d {
		return nil, fmt.Errorf("sphere: points have %d coordinates, basis is on S^%d ⊂ R^%d", c, b.d-1, b.d)
	}
	out := mat.NewDense(b.m, n, nil)
	b.EvalInto(out, x)
	return out, nil
}

// EvalInto is Eval writing into out (M×n), which must have that shape.
func (b *Basis) EvalInto(out *mat.Dense, x *mat.Dense) { b.EvalScaledInto(out, x, nil) }

// EvalScaledInto is EvalInto with column i of the output multiplied by
// scale[i] (nil: no scaling), fused into the last product: the radial
// factor ρ^p of spherical features costs no extra pass over Φ. The scale
// multiplies the last level's factors before their product with the
// level below, so entries may differ in the last bit from Φ's entries
// times scale[i] (EvalThenScaleInto's).
func (b *Basis) EvalScaledInto(out *mat.Dense, x *mat.Dense, scale []float64) {
	b.evalScaled(out, x, scale, foldScale)
}

// EvalThenScaleInto is EvalInto followed by multiplying column i of the
// output by scale[i], in the same pass: every entry is Φ[m, i]·scale[i]
// rounded after Φ[m, i], bitwise what the two steps give.
func (b *Basis) EvalThenScaleInto(out *mat.Dense, x *mat.Dense, scale []float64) {
	b.evalScaled(out, x, scale, scaleAfter)
}

// scaleMode says where a column scale enters the last level's products.
type scaleMode int

const (
	foldScale  scaleMode = iota // (factor·scale)·lower level
	scaleAfter                  // (factor·lower level)·scale
)

func (b *Basis) evalScaled(out *mat.Dense, x *mat.Dense, scale []float64, mode scaleMode) {
	n, _ := x.Dims()
	if r, c := out.Dims(); r != b.m || c != n {
		panic(fmt.Sprintf("sphere: output is %d×%d, want %d×%d", r, c, b.m, n))
	}
	if scale != nil && len(scale) != n {
		panic(fmt.Sprintf("sphere: %d scales for %d points", len(scale), n))
	}
	blocks := (n + blockPoints - 1) / blockPoints
	workers := min(runtime.GOMAXPROCS(0), blocks)
	if workers <= 1 {
		w := b.getWork()
		for blk := 0; blk < blocks; blk++ {
			b.evalBlock(w, out, x, scale, mode, blk*blockPoints, min(n, (blk+1)*blockPoints))
		}
		b.works.Put(w)
		return
	}
	var g goroutines.Group
	for wk := 0; wk < workers; wk++ {
		g.Go(func() {
			w := b.getWork()
			for blk := wk; blk < blocks; blk += workers {
				b.evalBlock(w, out, x, scale, mode, blk*blockPoints, min(n, (blk+1)*blockPoints))
			}
			b.works.Put(w)
		})
	}
	g.Wait()
}

// getWork returns the scratch of an earlier evaluation, or a new one
// (evalBlock writes every entry it reads, so old contents never matter).
func (b *Basis) getWork() *work {
	if w, ok := b.works.Get().(*work); ok {
		return w
	}
	return b.newWork()
}

// work is the scratch of one worker: coordinates, squared partial radii,
// Gegenbauer factors and the intermediate rows, each blockPoints wide.
type work struct {
	y, r2 [][]float64
	fac   [][][]float64 // fac[k][(m,j)]
	rows  [][][]float64 // rows[k][e], k < d
}

func (b *Basis) newWork() *work {
	d, L, p := b.d, b.maxL, blockPoints
	w := &work{y: make([][]float64, d+1), r2: make([][]float64, d+1), fac: make([][][]float64, d+1), rows: make([][][]float64, d+1)}
	for k := 1; k <= d; k++ {
		w.y[k] = make([]float64, p)
		w.r2[k] = make([]float64, p)
	}
	for k := 3; k <= d; k++ {
		w.fac[k] = make([][]float64, (L+1)*(L+1))
		for m := 0; m <= L; m++ {
			for j := 0; j <= L-m; j++ {
				w.fac[k][m*(L+1)+j] = make([]float64, p)
			}
		}
	}
	for k := 2; k < d || (k == 2 && d == 2); k++ {
		cnt := b.start[k][L+1]
		w.rows[k] = make([][]float64, cnt)
		buf := make([]float64, cnt*p)
		for e := range w.rows[k] {
			w.rows[k][e] = buf[e*p : (e+1)*p]
		}
	}
	return w
}

func (b *Basis) evalBlock(w *work, out, x *mat.Dense, scale []float64, mode scaleMode, lo, hi int) {
	d, L, np := b.d, b.maxL, hi-lo
	// Coordinates by column and squared radii of the leading coordinates.
	for i := 0; i < np; i++ {
		row := x.RawRowView(lo + i)
		acc := 0.0
		for k := 1; k <= d; k++ {
			v := row[k-1]
			w.y[k][i] = v
			acc += v * v
			w.r2[k][i] = acc
		}
	}
	// Plane of the first two coordinates: Re/Im (y1 + i y2)^n.
	rows2 := w.rows[2]
	y1, y2 := w.y[1][:np], w.y[2][:np]
	c0 := 1 / math.Sqrt(2*math.Pi)
	cn := 1 / math.Sqrt(math.Pi)
	for i := range np {
		rows2[0][i] = c0
	}
	if L >= 1 {
		re, im := rows2[1][:np], rows2[2][:np]
		for i := range np {
			re[i], im[i] = cn*y1[i], cn*y2[i]
		}
		for n := 2; n <= L; n++ {
			pr, pi := rows2[2*n-3][:np], rows2[2*n-2][:np]
			re, im := rows2[2*n-1][:np], rows2[2*n][:np]
			for i := range np {
				re[i] = pr[i]*y1[i] - pi[i]*y2[i]
				im[i] = pr[i]*y2[i] + pi[i]*y1[i]
			}
		}
	}
	if d == 2 {
		if out != nil {
			for r, e := range b.top {
				dst := out.RawRowView(r)[lo:hi]
				copy(dst, rows2[e][:np])
				if scale != nil {
					for i, s := range scale[lo:hi] {
						dst[i] *= s
					}
				}
			}
		}
		return
	}
	for k := 3; k <= d; k++ {
		u, r2 := w.y[k][:np], w.r2[k][:np]
		for m := 0; m <= L; m++ {
			gc := &b.coef[k][m*(L+1)]
			f := w.fac[k][m*(L+1):]
			f0 := f[0][:np]
			for i := range f0 {
				f0[i] = gc.q0
			}
			if L-m >= 1 {
				f1 := f[1][:np]
				for i := range f1 {
					f1[i] = gc.q1 * u[i]
				}
			}
			for j := 2; j <= L-m; j++ {
				a, bb := gc.a[j], gc.b[j]
				fj, f1, f2 := f[j][:np], f[j-1][:np], f[j-2][:np]
				for i := range fj {
					fj[i] = a*u[i]*f1[i] - bb*r2[i]*f2[i]
				}
			}
		}
		par, fac := b.par[k], b.fac[k]
		prev := w.rows[k-1]
		if k < d {
			dst := w.rows[k]
			for e := range par {
				vec.Mul(dst[e][:np], w.fac[k][fac[e]][:np], prev[par[e]][:np])
			}
			continue
		}
		if out == nil {
			continue // Gradient needs the factors and intermediate rows only
		}
		if scale != nil && mode == scaleAfter {
			for e := range par {
				vec.MulScaled(out.RawRowView(e)[lo:hi], w.fac[k][fac[e]][:np], prev[par[e]][:np], scale[lo:hi])
			}
			continue
		}
		if scale != nil {
			// Fold the column scale into the factors (one pass per factor
			// row instead of one per output row).
			for _, f := range w.fac[k] {
				if f != nil {
					vec.Mul(f[:np], f[:np], scale[lo:hi])
				}
			}
		}
		for e := range par {
			vec.Mul(out.RawRowView(e)[lo:hi], w.fac[k][fac[e]][:np], prev[par[e]][:np])
		}
	}
}

// Gradient returns the n×d matrix with entries Σ_m g[m, i] ∂φ_m/∂x_ij,
// the reverse-mode derivative of Eval at x for the output adjoint g (M×n):
// the harmonics as homogeneous polynomials on R^d, so callers that map
// inputs to the sphere differentiate through that map themselves. Its
// cost is that of Eval: the tree of products and the Gegenbauer
// recurrences are run backwards per block.
func (b *Basis) Gradient(x, g *mat.Dense) (*mat.Dense, error) {
	n, c := x.Dims()
	if c != b.d {
		return nil, fmt.Errorf("sphere: points have %d coordinates, basis is on S^%d ⊂ R^%d", c, b.d-1, b.d)
	}
	if r, gc := g.Dims(); r != b.m || gc != n {
		return nil, fmt.Errorf("sphere: adjoint is %d×%d, want %d×%d", r, gc, b.m, n)
	}
	out := mat.NewDense(n, b.d, nil)
	blocks := (n + blockPoints - 1) / blockPoints
	workers := max(1, min(runtime.GOMAXPROCS(0), blocks))
	var grp goroutines.Group
	for wk := 0; wk < workers; wk++ {
		grp.Go(func() {
			w := b.newWork()
			a := b.newWork() // adjoints, same layout
			for blk := wk; blk < blocks; blk += workers {
				lo, hi := blk*blockPoints, min(n, (blk+1)*blockPoints)
				b.evalBlock(w, nil, x, nil, foldScale, lo, hi)
				b.backBlock(w, a, g, out, lo, hi)
			}
		})
	}
	grp.Wait()
	return out, nil
}

func zero(rows [][]float64, np int) {
	for _, r := range rows {
		if r != nil {
			clear(r[:np])
		}
	}
}

// backBlock runs evalBlock backwards for points lo…hi−1, given the forward
// scratch w (with the intermediate rows and factors of this block) and
// scratch a for the adjoints.
func (b *Basis) backBlock(w, a *work, g, out *mat.Dense, lo, hi int) {
	d, L, np := b.d, b.maxL, hi-lo
	for k := 1; k <= d; k++ {
		clear(a.y[k][:np])
		clear(a.r2[k][:np])
	}
	for k := 2; k < d || (k == 2 && d == 2); k++ {
		zero(a.rows[k], np)
	}
	if d == 2 {
		for r, e := range b.top {
			copy(a.rows[2][e][:np], g.RawRowView(r)[lo:hi])
		}
	}
	for k := d; k >= 3; k-- {
		zero(a.fac[k], np)
		par, fac := b.par[k], b.fac[k]
		prev, aprev := w.rows[k-1], a.rows[k-1]
		for e := range par {
			var adj []float64
			if k == d {
				adj = g.RawRowView(e)[lo:hi]
			} else {
				adj = a.rows[k][e][:np]
			}
			f, af := w.fac[k][fac[e]][:np], a.fac[k][fac[e]][:np]
			p, ap := prev[par[e]][:np], aprev[par[e]][:np]
			for i := range adj {
				af[i] += adj[i] * p[i]
				ap[i] += adj[i] * f[i]
			}
		}
		u, r2 := w.y[k][:np], w.r2[k][:np]
		au, ar2 := a.y[k][:np], a.r2[k][:np]
		for m := 0; m <= L; m++ {
			gc := &b.coef[k][m*(L+1)]
			f := w.fac[k][m*(L+1):]
			af := a.fac[k][m*(L+1):]
			for j := L - m; j >= 2; j-- {
				aa, bb := gc.a[j], gc.b[j]
				aj, f1, f2 := af[j][:np], f[j-1][:np], f[j-2][:np]
				a1, a2 := af[j-1][:np], af[j-2][:np]
				for i := range aj {
					v := aj[i]
					a1[i] += v * aa * u[i]
					a2[i] -= v * bb * r2[i]
					au[i] += v * aa * f1[i]
					ar2[i] -= v * bb * f2[i]
				}
			}
			if L-m >= 1 {
				a1 := af[1][:np]
				for i := range a1 {
					au[i] += a1[i] * gc.q1
				}
			}
		}
	}
	// The plane: (re_n, im_n) = (re_{n−1}y1 − im_{n−1}y2, re_{n−1}y2 + im_{n−1}y1).
	rows2, arows2 := w.rows[2], a.rows[2]
	y1, y2 := w.y[1][:np], w.y[2][:np]
	ay1, ay2 := a.y[1][:np], a.y[2][:np]
	for n := L; n >= 2; n-- {
		pr, pi := rows2[2*n-3][:np], rows2[2*n-2][:np]
		apr, api := arows2[2*n-3][:np], arows2[2*n-2][:np]
		are, aim := arows2[2*n-1][:np], arows2[2*n][:np]
		for i := range are {
			apr[i] += are[i]*y1[i] + aim[i]*y2[i]
			api[i] += -are[i]*y2[i] + aim[i]*y1[i]
			ay1[i] += are[i]*pr[i] + aim[i]*pi[i]
			ay2[i] += -are[i]*pi[i] + aim[i]*pr[i]
		}
	}
	if L >= 1 {
		cn := 1 / math.Sqrt(math.Pi)
		are, aim := arows2[1][:np], arows2[2][:np]
		for i := range are {
			ay1[i] += cn * are[i]
			ay2[i] += cn * aim[i]
		}
	}
	// r2[k] = Σ_{i≤k} y_i²: suffix sums of the radius adjoints.
	for i := 0; i < np; i++ {
		acc := 0.0
		row := out.RawRowView(lo + i)
		for k := d; k >= 1; k-- {
			acc += a.r2[k][i]
			row[k-1] = a.y[k][i] + 2*w.y[k][i]*acc
		}
	}
}
