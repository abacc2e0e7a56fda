package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// profile names the radial shape f(r) of a stationary kernel.
type profile string

const (
	se       profile = "se"
	matern12 profile = "matern12"
	matern32 profile = "matern32"
	matern52 profile = "matern52"
)

// nu is the Matérn order (0 for SE).
func (p profile) nu() float64 {
	switch p {
	case matern12:
		return 0.5
	case matern32:
		return 1.5
	case matern52:
		return 2.5
	}
	return 0
}

// Stationary is an SE or Matérn kernel with ARD or isotropic lengthscales.
type Stationary struct {
	prof         profile
	dim          int
	variance     float64
	lengthscales []float64 // 1 or dim values
}

func newStationary(p profile, dim int, opts Options) (*Stationary, error) {
	v, err := positive("variance", opts.Variance, 1)
	if err != nil {
		return nil, err
	}
	ls, err := perDim("lengthscales", opts.Lengthscales, dim, opts.ARD)
	if err != nil {
		return nil, err
	}
	return &Stationary{prof: p, dim: dim, variance: v, lengthscales: ls}, nil
}

func (k *Stationary) Name() string { return string(k.prof) }
func (k *Stationary) Dim() int     { return k.dim }

// MaternOrder is ν of a Matérn kernel; ok is false for SE.
func (k *Stationary) MaternOrder() (nu float64, ok bool) { return k.prof.nu(), k.prof.nu() > 0 }

func (k *Stationary) Declare(s *param.Set, prefix string) error {
	if err := s.AddScalar(prefix+"variance", k.variance, param.DefaultPositive); err != nil {
		return err
	}
	return s.Add(prefix+"lengthscales", row(k.lengthscales), param.DefaultPositive)
}

func (k *Stationary) Bind(b *param.Bound, prefix string) Bound {
	sb := &stationaryBound{k: k, variance: b.Get(prefix + "variance"), ls: b.Get(prefix + "lengthscales")}
	if r, c := sb.ls.Dims(); r != 1 || (c != 1 && c != k.dim) {
		panic(fmt.Sprintf("kernels: %s: %slengthscales is %d×%d, want 1×1 or 1×%d", k.Name(), prefix, r, c, k.dim))
	}
	return sb
}

type stationaryBound struct {
	k        *Stationary
	variance *ad.Node
	ls       *ad.Node
}

func (b *stationaryBound) Variance() *ad.Node     { return b.variance }
func (b *stationaryBound) Lengthscales() *ad.Node { return broadcastRow(b.ls, b.k.dim) }

func (b *stationaryBound) Diag(x *ad.Node) *ad.Node {
	checkInputs(b.k.Name(), b.k.dim, x)
	n, _ := x.Dims()
	return constColumn(x.Tape(), b.variance, n)
}

// scaledDist holds the scaled inputs x/ℓ and z/ℓ, both centred on the mean
// of z (which leaves every distance unchanged and keeps the norms small),
// their squared row norms, and the raw inputs for exact differences.
type scaledDist struct {
	x, z   *mat.Dense // raw inputs
	inv    []float64  // 1/ℓ_d
	xs, zs *mat.Dense // (x − c)/ℓ, (z − c)/ℓ
	nx, nz []float64  // squared row norms of xs, zs
}

// directDims is the input dimension up to which r² is summed directly
// from the differences x_d − z_d: below it the D-term sum costs no more
// than the matrix product and is accurate to a few ulps of r² at any r.
const directDims = 3

// expandRecompute: an r² from the expansion ‖x‖² + ‖z‖² − 2xᵀz below this
// fraction of ‖x‖² + ‖z‖² is recomputed directly. The expansion's absolute
// error is a few ulps of ‖x‖² + ‖z‖², so every r² kept has a relative
// error below about 8·D ulps; the Matérn kernels take √r², which would
// amplify a larger relative error at small r.
const expandRecompute = 1.0 / 8

func newScaledDist(t *ad.Tape, x, z *mat.Dense, inv []float64) *scaledDist {
	s := &scaledDist{x: x, z: z, inv: inv}
	if len(inv) > directDims {
		c := colMeans(z)
		s.xs, s.zs = centredScaled(t, x, c, inv), centredScaled(t, z, c, inv)
		s.nx, s.nz = rowSqNorms(t, s.xs), rowSqNorms(t, s.zs)
	}
	return s
}

// direct returns r² between row i of x and row j of z from the raw
// differences (exact for close points, by Sterbenz's lemma).
func (s *scaledDist) direct(i, j int) float64 {
	xi, zj := s.x.RawRowView(i), s.z.RawRowView(j)
	r2 := 0.0
	for d, v := range xi {
		t := (v - zj[d]) * s.inv[d]
		r2 += t * t
	}
	return r2
}

// fill computes r² between rows [r0, r1) of x and every row of z into
// blk ((r1−r0)×M).
func (s *scaledDist) fill(blk *mat.Dense, r0, r1 int) {
	s.fillEach(blk, r0, r1, func([]float64) {})
}

// fillEach is fill calling each(row) on every row of blk as soon as its
// r² are in place, while the row is still in cache.
func (s *scaledDist) fillEach(blk *mat.Dense, r0, r1 int, each func(row []float64)) {
	if s.xs == nil {
		for i := r0; i < r1; i++ {
			row := blk.RawRowView(i - r0)
			for j := range row {
				row[j] = s.direct(i, j)
			}
			each(row)
		}
		return
	}
	blk.Mul(s.xs.Slice(r0, r1, 0, s.xs.RawMatrix().Cols), s.zs.T())
	for i := r0; i < r1; i++ {
		row := blk.RawRowView(i - r0)
		nxi := s.nx[i]
		for j, dot := range row {
			r2 := nxi + s.nz[j] - 2*dot
			if r2 < expandRecompute*(nxi+s.nz[j]) {
				r2 = s.direct(i, j)
			}
			row[j] = r2
		}
		each(row)
	}
}

// scaled returns the scaled inputs for the gradients (centred ones when
// the expansion formed them: the gradient formulas are invariant to the
// common shift).
func (s *scaledDist) scaled(t *ad.Tape) (xs, zs *mat.Dense) {
	if s.xs == nil {
		return scaleCols(t, s.x, s.inv), scaleCols(t, s.z, s.inv)
	}
	return s.xs, s.zs
}

// value overwrites r² in row with σ² f(r²).
func (p profile) value(row []float64, sv float64) {
	switch p {
	case se:
		scaledExp(row, -0.5, sv) // sv·e^(−r²/2), see exp.go
	case matern12:
		for j, r2 := range row {
			row[j] = sv * math.Exp(-math.Sqrt(r2))
		}
	case matern32:
		for j, r2 := range row {
			r := math.Sqrt(3 * r2)
			row[j] = sv * (1 + r) * math.Exp(-r)
		}
	case matern52:
		for j, r2 := range row {
			r := math.Sqrt(5 * r2)
			row[j] = sv * (1 + r + r*r/3) * math.Exp(-r)
		}
	default:
		panic("kernels: unknown profile " + string(p))
	}
}

// scaleGrad sets dst = g ∘ dK/d(r²) for the kernel values k = σ² f and
// (except for SE, whose derivative is −k/2) r², without another
// exponential; dst may be r2. With ρ = √(c r²) for the Matérn order's c,
//
//	½:  −k/(2r)          (0 at r = 0: the symmetric subgradient, which also
//	                      multiplies x − z = 0 there)
//	3/2: −(3/2) k/(1+ρ)
//	5/2: −(5/6) k (1+ρ)/(1+ρ+ρ²/3).
func (p profile) scaleGrad(dst, g, k, r2 []float64) {
	switch p {
	case se:
		for j, kv := range k {
			dst[j] = g[j] * (-kv / 2)
		}
	case matern12:
		for j, kv := range k {
			if r2[j] == 0 {
				dst[j] = 0
				continue
			}
			dst[j] = g[j] * (-kv / (2 * math.Sqrt(r2[j])))
		}
	case matern32:
		for j, kv := range k {
			dst[j] = g[j] * (-1.5 * kv / (1 + math.Sqrt(3*r2[j])))
		}
	case matern52:
		for j, kv := range k {
			r := math.Sqrt(5 * r2[j])
			dst[j] = g[j] * (-5.0 / 6 * kv * (1 + r) / (1 + r + r*r/3))
		}
	default:
		panic("kernels: unknown profile " + string(p))
	}
}

func (b *stationaryBound) K(x, z *ad.Node) *ad.Node {
	k := b.k
	checkInputs(k.Name(), k.dim, x, z)
	ls := expand(b.ls, k.dim)
	inv := make([]float64, k.dim)
	for d, l := range ls {
		inv[d] = 1 / l
	}
	sv := b.variance.Scalar()
	t := x.Tape()
	sd := newScaledDist(t, x.Value(), z.Value(), inv)
	n, _ := x.Dims()
	m, _ := z.Dims()
	out := t.NewDenseNonZeroed(n, m)
	parallelRows(n, m, func(r0, r1 int) {
		sd.fillEach(out.Slice(r0, r1, 0, m).(*mat.Dense), r0, r1, func(row []float64) {
			k.prof.value(row, sv)
		})
	})
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 4)
		needVar := b.variance.NeedsGrad()
		needA := x.NeedsGrad() || z.NeedsGrad() || b.ls.NeedsGrad()
		if !needVar && !needA {
			return grads
		}
		// One pass over the rows on every core: a = G ∘ dK/d(r²), the
		// derivative rebuilt from K (and from r², formed again in a's rows,
		// for the Matérn kernels), with its row sums, its column sums per
		// chunk of rows and Σ_j g_ij k_ij per row, summed in a fixed order
		// afterwards (the chunks are fixed by n).
		var a *mat.Dense
		if needA {
			a = t.NewDenseNonZeroed(n, m)
			defer t.Recycle(a)
		}
		sums := t.NewDenseNonZeroed(2, n) // Σ_j g_ij k_ij, then the row sums of a
		defer t.Recycle(sums)
		dots, rsum := sums.RawRowView(0), sums.RawRowView(1)
		chunks := rowChunks(n, m)
		parts := t.NewDense(chunks, m) // column sums of a, per chunk
		defer t.Recycle(parts)
		parallelRows(n, m, func(r0, r1 int) {
			if needA && k.prof != se {
				sd.fill(a.Slice(r0, r1, 0, m).(*mat.Dense), r0, r1)
			}
			part := parts.RawRowView(r0 / chunkRows)
			for i := r0; i < r1; i++ {
				gi, ki := g.RawRowView(i), out.RawRowView(i)
				if needA && k.prof == se {
					// One pass: with p = g·k, dK/d(r²)·g = −p/2 and the
					// row sum is −½Σp, exactly (halving commutes with
					// rounding), the same bits as the passes below.
					ai := a.RawRowView(i)
					d := 0.0
					for j, v := range gi {
						p := v * ki[j]
						d += p
						h := -0.5 * p
						ai[j] = h
						part[j] += h
					}
					dots[i] = d
					rsum[i] = -0.5 * d
					continue
				}
				if needVar {
					d := 0.0
					for j, v := range gi {
						d += v * ki[j]
					}
					dots[i] = d
				}
				if !needA {
					continue
				}
				ai := a.RawRowView(i)
				k.prof.scaleGrad(ai, gi, ki, ai)
				rs := 0.0
				for j, v := range ai {
					rs += v
					part[j] += v
				}
				rsum[i] = rs
			}
		})
		if needVar {
			tot := 0.0
			for _, d := range dots {
				tot += d
			}
			grads[0] = t.NewDenseNonZeroed(1, 1)
			grads[0].Set(0, 0, tot/sv)
		}
		if !needA {
			return grads
		}
		csum := parts.RawRowView(0)
		for c := 1; c < chunks; c++ {
			for j, v := range parts.RawRowView(c) {
				csum[j] += v
			}
		}
		xs, zs := sd.scaled(t)
		var gxs, gzs *mat.Dense
		if x.NeedsGrad() || b.ls.NeedsGrad() {
			gxs = pairwiseGrad(t, a, rsum, xs, zs)
			defer t.Recycle(gxs)
		}
		if z.NeedsGrad() || b.ls.NeedsGrad() {
			gzs = pairwiseGrad(t, a.T(), csum, zs, xs)
			defer t.Recycle(gzs)
		}
		if x.NeedsGrad() {
			grads[2] = scaleCols(t, gxs, inv)
		}
		if z.NeedsGrad() {
			grads[3] = scaleCols(t, gzs, inv)
		}
		if b.ls.NeedsGrad() {
			// xs = (x − c)/ℓ, so d xs_nd/dℓ_d = −xs_nd/ℓ_d (the shift c
			// drops out: the gradients of x and z sum to zero).
			gl := make([]float64, k.dim)
			for _, p := range [][2]*mat.Dense{{gxs, xs}, {gzs, zs}} {
				r, _ := p[0].Dims()
				for i := 0; i < r; i++ {
					gi, si := p[0].RawRowView(i), p[1].RawRowView(i)
					for d := range gl {
						gl[d] -= gi[d] * si[d] * inv[d]
					}
				}
			}
			grads[1] = collapse(gl, b.ls)
		}
		return grads
	}, b.variance, b.ls, x, z)
}

func elemProd(a, b *mat.Dense) *mat.Dense {
	r, c := a.Dims()
	o := mat.NewDense(r, c, nil)
	o.MulElem(a, b)
	return o
}
