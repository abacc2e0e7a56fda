package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// Periodic is σ² exp(−½ Σ_d sin²(π(x_d − z_d)/p_d)/ℓ_d²) (GPflow's form; see
// the package documentation for the mapping to MacKay's). Lengthscales and
// periods are 1×D with ARD and 1×1 otherwise.
type Periodic struct {
	dim          int
	variance     float64
	lengthscales []float64
	period       []float64
}

func newPeriodic(dim int, opts Options) (*Periodic, error) {
	v, err := positive("variance", opts.Variance, 1)
	if err != nil {
		return nil, err
	}
	ls, err := perDim("lengthscales", opts.Lengthscales, dim, opts.ARD)
	if err != nil {
		return nil, err
	}
	p, err := positive("period", opts.Period, 1)
	if err != nil {
		return nil, err
	}
	per, _ := perDim("period", []float64{p}, dim, opts.ARD || len(ls) == dim && dim > 1)
	return &Periodic{dim: dim, variance: v, lengthscales: ls, period: per}, nil
}

func (k *Periodic) Name() string { return "periodic" }
func (k *Periodic) Dim() int     { return k.dim }

func (k *Periodic) Declare(s *param.Set, prefix string) error {
	if err := s.AddScalar(prefix+"variance", k.variance, param.DefaultPositive); err != nil {
		return err
	}
	if err := s.Add(prefix+"lengthscales", row(k.lengthscales), param.DefaultPositive); err != nil {
		return err
	}
	return s.Add(prefix+"period", row(k.period), param.DefaultPositive)
}

func (k *Periodic) Bind(b *param.Bound, prefix string) Bound {
	pb := &periodicBound{k: k, variance: b.Get(prefix + "variance"), ls: b.Get(prefix + "lengthscales"), period: b.Get(prefix + "period")}
	for _, n := range []*ad.Node{pb.ls, pb.period} {
		if r, c := n.Dims(); r != 1 || (c != 1 && c != k.dim) {
			panic(fmt.Sprintf("kernels: periodic: parameter is %d×%d, want 1×1 or 1×%d", r, c, k.dim))
		}
	}
	return pb
}

type periodicBound struct {
	k                    *Periodic
	variance, ls, period *ad.Node
}

func (b *periodicBound) Variance() *ad.Node { return b.variance }

func (b *periodicBound) Diag(x *ad.Node) *ad.Node {
	checkInputs("periodic", b.k.dim, x)
	n, _ := x.Dims()
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	return scaledColumn(b.variance, ones)
}

// trigFeatures returns F = [u∘cos a, u∘sin a] and the angles a = 2πx/p,
// where u_d = 1/(√2 ℓ_d). Then Σ_d sin²(π(x_d−z_d)/p_d)/ℓ_d² = Σu² − F_x F_zᵀ,
// so the pairwise sum is one matrix product.
func trigFeatures(x *mat.Dense, u, p []float64) (f, a *mat.Dense) {
	r, dim := x.Dims()
	f = mat.NewDense(r, 2*dim, nil)
	a = mat.NewDense(r, dim, nil)
	for i := 0; i < r; i++ {
		xi, fi, ai := x.RawRowView(i), f.RawRowView(i), a.RawRowView(i)
		for d, v := range xi {
			ang := 2 * math.Pi * v / p[d]
			s, c := math.Sincos(ang)
			ai[d] = ang
			fi[d], fi[dim+d] = u[d]*c, u[d]*s
		}
	}
	return f, a
}

func (b *periodicBound) K(x, z *ad.Node) *ad.Node {
	dim := b.k.dim
	checkInputs("periodic", dim, x, z)
	ls, per := expand(b.ls, dim), expand(b.period, dim)
	u := make([]float64, dim)
	c := 0.0
	for d, l := range ls {
		u[d] = 1 / (math.Sqrt2 * l)
		c += u[d] * u[d]
	}
	sv := b.variance.Scalar()
	fx, ax := trigFeatures(x.Value(), u, per)
	fz, az := trigFeatures(z.Value(), u, per)
	n, _ := fx.Dims()
	m, _ := fz.Dims()
	out := mat.NewDense(n, m, nil)
	parallelRows(n, m, func(r0, r1 int) {
		blk := out.Slice(r0, r1, 0, m).(*mat.Dense)
		blk.Mul(fx.Slice(r0, r1, 0, 2*dim), fz.T())
		for i := 0; i < r1-r0; i++ {
			row := blk.RawRowView(i)
			for j, v := range row {
				row[j] = sv * math.Exp(-0.5*math.Max(c-v, 0))
			}
		}
	})
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 5)
		gk := elemProd(g, out)
		if b.variance.NeedsGrad() {
			grads[0] = mat.NewDense(1, 1, []float64{mat.Sum(gk) / sv})
		}
		if !(x.NeedsGrad() || z.NeedsGrad() || b.ls.NeedsGrad() || b.period.NeedsGrad()) {
			return grads
		}
		// dL/dS = −½ G∘K where S = c − F_x F_zᵀ.
		gk.Scale(-0.5, gk)
		gc := mat.Sum(gk)
		gfx := mat.NewDense(n, 2*dim, nil)
		gfx.Mul(gk, fz)
		gfx.Scale(-1, gfx)
		gfz := mat.NewDense(m, 2*dim, nil)
		gfz.Mul(gk.T(), fx)
		gfz.Scale(-1, gfz)
		gu := make([]float64, dim)
		gp := make([]float64, dim)
		for d := range gu {
			gu[d] = 2 * u[d] * gc
		}
		// angle gradient: d/da of (u cos a, u sin a) is (−u sin a, u cos a).
		angleGrad := func(gf, f, a *mat.Dense) *mat.Dense {
			r, _ := f.Dims()
			ga := mat.NewDense(r, dim, nil)
			for i := 0; i < r; i++ {
				gfi, fi, ai, gai := gf.RawRowView(i), f.RawRowView(i), a.RawRowView(i), ga.RawRowView(i)
				for d := 0; d < dim; d++ {
					gai[d] = -gfi[d]*fi[dim+d] + gfi[dim+d]*fi[d]
					gu[d] += (gfi[d]*fi[d] + gfi[dim+d]*fi[dim+d]) / u[d]
					gp[d] -= gai[d] * ai[d] / per[d]
				}
			}
			return ga
		}
		gax := angleGrad(gfx, fx, ax)
		gaz := angleGrad(gfz, fz, az)
		if x.NeedsGrad() {
			grads[3] = scaleAngles(x.Tape(), gax, per)
		}
		if z.NeedsGrad() {
			grads[4] = scaleAngles(x.Tape(), gaz, per)
		}
		if b.ls.NeedsGrad() {
			gl := make([]float64, dim)
			for d := range gl {
				gl[d] = -gu[d] * u[d] / ls[d]
			}
			grads[1] = collapse(gl, b.ls)
		}
		if b.period.NeedsGrad() {
			grads[2] = collapse(gp, b.period)
		}
		return grads
	}, b.variance, b.ls, b.period, x, z)
}

// scaleAngles maps angle gradients to input gradients (a = 2πx/p).
func scaleAngles(t *ad.Tape, ga *mat.Dense, per []float64) *mat.Dense {
	s := make([]float64, len(per))
	for d, p := range per {
		s[d] = 2 * math.Pi / p
	}
	return scaleCols(t, ga, s)
}
