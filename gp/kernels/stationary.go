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

// eval returns f and df/d(r²) at r². The Matérn-½ derivative is infinite at
// r = 0 but always multiplies x − z there, so 0 is returned (the symmetric
// subgradient, which is also what central differences give).
func (p profile) eval(r2 float64) (f, d float64) {
	switch p {
	case se:
		f = math.Exp(-r2 / 2)
		return f, -f / 2
	case matern12:
		r := math.Sqrt(r2)
		f = math.Exp(-r)
		if r == 0 {
			return f, 0
		}
		return f, -f / (2 * r)
	case matern32:
		r := math.Sqrt(3 * r2)
		e := math.Exp(-r)
		return (1 + r) * e, -1.5 * e
	case matern52:
		r := math.Sqrt(5 * r2)
		e := math.Exp(-r)
		return (1 + r + r*r/3) * e, -5.0 / 6 * (1 + r) * e
	}
	panic("kernels: unknown profile " + string(p))
}

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
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	return scaledColumn(b.variance, ones)
}

// scaledDist holds x/ℓ, z/ℓ and their squared row norms.
type scaledDist struct {
	xs, zs *mat.Dense
	nx, nz []float64
}

func newScaledDist(x, z *mat.Dense, inv []float64) *scaledDist {
	s := &scaledDist{xs: scaleCols(x, inv), zs: scaleCols(z, inv)}
	s.nx, s.nz = rowSqNorms(s.xs), rowSqNorms(s.zs)
	return s
}

// fill computes r² for rows [r0, r1) of the N×M matrix out. Entries whose
// r² is at rounding level relative to the norms are recomputed directly, so
// x = z gives exactly 0.
func (s *scaledDist) fill(out *mat.Dense, r0, r1 int) {
	m := len(s.nz)
	blk := out.Slice(r0, r1, 0, m).(*mat.Dense)
	blk.Mul(s.xs.Slice(r0, r1, 0, s.xs.RawMatrix().Cols), s.zs.T())
	for i := r0; i < r1; i++ {
		row := blk.RawRowView(i - r0)
		nxi := s.nx[i]
		for j, dot := range row {
			r2 := nxi + s.nz[j] - 2*dot
			if r2 < 1e-8*(nxi+s.nz[j]) {
				r2 = 0
				xi, zj := s.xs.RawRowView(i), s.zs.RawRowView(j)
				for d, v := range xi {
					t := v - zj[d]
					r2 += t * t
				}
			}
			row[j] = r2
		}
	}
}

// apply overwrites r² in row with σ² f(r²) and, when drow is not nil,
// stores σ² df/d(r²) in drow.
func (p profile) apply(row, drow []float64, sv float64) {
	if drow == nil && p == se {
		for j, r2 := range row {
			row[j] = sv * math.Exp(-r2/2)
		}
		return
	}
	for j, r2 := range row {
		f, d := p.eval(r2)
		row[j] = sv * f
		if drow != nil {
			drow[j] = sv * d
		}
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
	sd := newScaledDist(x.Value(), z.Value(), inv)
	n, m := len(sd.nx), len(sd.nz)
	out := mat.NewDense(n, m, nil)
	needGrad := x.NeedsGrad() || z.NeedsGrad() || b.ls.NeedsGrad()
	var dk *mat.Dense // dK/d(r²)
	if needGrad {
		dk = mat.NewDense(n, m, nil)
	}
	parallelRows(n, m, func(r0, r1 int) {
		sd.fill(out, r0, r1)
		for i := r0; i < r1; i++ {
			var drow []float64
			if dk != nil {
				drow = dk.RawRowView(i)
			}
			k.prof.apply(out.RawRowView(i), drow, sv)
		}
	})
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 4)
		if b.variance.NeedsGrad() {
			grads[0] = mat.NewDense(1, 1, []float64{dotAll(g, out) / sv})
		}
		if !needGrad {
			return grads
		}
		a := mat.NewDense(n, m, nil)
		parallelRows(n, m, func(r0, r1 int) {
			for i := r0; i < r1; i++ {
				ai, gi, di := a.RawRowView(i), g.RawRowView(i), dk.RawRowView(i)
				for j := range ai {
					ai[j] = gi[j] * di[j]
				}
			}
		})
		var gxs, gzs *mat.Dense
		if x.NeedsGrad() || b.ls.NeedsGrad() {
			gxs = pairwiseGrad(a, rowSums(a), sd.xs, sd.zs)
		}
		if z.NeedsGrad() || b.ls.NeedsGrad() {
			gzs = pairwiseGrad(a.T(), colSums(a), sd.zs, sd.xs)
		}
		if x.NeedsGrad() {
			grads[2] = scaleCols(gxs, inv)
		}
		if z.NeedsGrad() {
			grads[3] = scaleCols(gzs, inv)
		}
		if b.ls.NeedsGrad() {
			// xs = x/ℓ, so d xs_nd/dℓ_d = −xs_nd/ℓ_d.
			gl := make([]float64, k.dim)
			for _, p := range [][2]*mat.Dense{{gxs, sd.xs}, {gzs, sd.zs}} {
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
