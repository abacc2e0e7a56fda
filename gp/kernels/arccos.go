package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// ArcCosine is the arc-cosine kernel of order 0, 1 or 2 (Cho & Saul 2009)
// with GPflow's weight and bias variances; see the package documentation.
type ArcCosine struct {
	order    int
	dim      int
	variance float64
	weights  []float64 // 1 or dim values
	bias     float64
	diag     radialCache // Σρ^{2n} of the last inputs (arccos_zonal.go)
}

func newArcCosine(order, dim int, opts Options) (*ArcCosine, error) {
	if order < 0 || order > 2 {
		return nil, fmt.Errorf("kernels: arc-cosine order %d, want 0, 1 or 2", order)
	}
	v, err := positive("variance", opts.Variance, 1)
	if err != nil {
		return nil, err
	}
	w, err := perDim("weight variances", opts.WeightVariances, dim, opts.ARD)
	if err != nil {
		return nil, err
	}
	bias, err := positive("bias variance", opts.BiasVariance, 1)
	if err != nil {
		return nil, err
	}
	return &ArcCosine{order: order, dim: dim, variance: v, weights: w, bias: bias}, nil
}

func (k *ArcCosine) Name() string { return "arccos" + itoa(k.order) }
func (k *ArcCosine) Dim() int     { return k.dim }
func (k *ArcCosine) Order() int   { return k.order }

func (k *ArcCosine) Declare(s *param.Set, prefix string) error {
	if err := s.AddScalar(prefix+"variance", k.variance, param.DefaultPositive); err != nil {
		return err
	}
	if err := s.Add(prefix+"weight_variances", row(k.weights), param.DefaultPositive); err != nil {
		return err
	}
	return s.AddScalar(prefix+"bias_variance", k.bias, param.DefaultPositive)
}

func (k *ArcCosine) Bind(b *param.Bound, prefix string) Bound {
	ab := &arcCosineBound{k: k, variance: b.Get(prefix + "variance"), w: b.Get(prefix + "weight_variances"), bias: b.Get(prefix + "bias_variance")}
	if r, c := ab.w.Dims(); r != 1 || (c != 1 && c != k.dim) {
		panic(fmt.Sprintf("kernels: %s: %sweight_variances is %d×%d, want 1×1 or 1×%d", k.Name(), prefix, r, c, k.dim))
	}
	return ab
}

type arcCosineBound struct {
	k                 *ArcCosine
	variance, w, bias *ad.Node
}

func (b *arcCosineBound) Variance() *ad.Node { return b.variance }

// angular returns J_n(θ) and dJ_n/d(cos θ) for t = cos θ and s = sin θ.
// The order-0 derivative is infinite at θ ∈ {0, π}; there it multiplies a
// vanishing direction and 0 (the symmetric subgradient) is returned.
func angular(order int, th, t, s float64) (j, dj float64) {
	switch order {
	case 0:
		if s == 0 {
			return math.Pi - th, 0
		}
		return math.Pi - th, 1 / s
	case 1:
		return s + (math.Pi-th)*t, math.Pi - th
	default:
		j1 := s + (math.Pi-th)*t
		return 3*s*t + (math.Pi-th)*(1+2*t*t), 4 * j1
	}
}

// angle returns θ between x̂ and ẑ given p = x̂ᵀẑ and the norms. Near 0 and π,
// where acos loses half the digits, it uses θ = 2 atan2(‖u − v‖, ‖u + v‖)
// for the unit vectors u, v, so identical inputs give exactly θ = 0.
func angle(p, nx, nz float64, xs, zs []float64, bias float64) (th, t, s float64) {
	t = math.Max(-1, math.Min(1, p/(nx*nz)))
	if 1-math.Abs(t) > 1e-6 {
		th = math.Acos(t)
		return th, t, math.Sqrt(1 - t*t)
	}
	var dm, dp float64
	for d, xv := range xs {
		a, b := xv/nx, zs[d]/nz
		dm += (a - b) * (a - b)
		dp += (a + b) * (a + b)
	}
	sb := math.Sqrt(bias)
	a, b := sb/nx, sb/nz
	dm += (a - b) * (a - b)
	dp += (a + b) * (a + b)
	th = 2 * math.Atan2(math.Sqrt(dm), math.Sqrt(dp))
	s, t = math.Sincos(th)
	return th, t, s
}

// diagFactor is J_n(0)/π.
var diagFactor = [3]float64{1, 1, 3}

func (b *arcCosineBound) Diag(x *ad.Node) *ad.Node {
	k := b.k
	checkInputs(k.Name(), k.dim, x)
	w := expand(b.w, k.dim)
	sw := sqrtAll(w)
	xs := scaleCols(x.Tape(), x.Value(), sw)
	bias, sv := b.bias.Scalar(), b.variance.Scalar()
	nx2 := rowSqNorms(x.Tape(), xs)
	n := len(nx2)
	out := mat.NewDense(n, 1, nil)
	pow := func(v float64, p int) float64 { return math.Pow(v, float64(p)) }
	for i := range nx2 {
		nx2[i] += bias
		out.Set(i, 0, sv*diagFactor[k.order]*pow(nx2[i], k.order))
	}
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 4)
		if b.variance.NeedsGrad() {
			grads[0] = mat.NewDense(1, 1, []float64{mat.Dot(g.ColView(0), out.ColView(0)) / sv})
		}
		if k.order == 0 {
			return grads
		}
		// d out / d(nx²) = σ² c n (nx²)^{n−1}.
		gn := make([]float64, n)
		for i := range gn {
			gn[i] = g.At(i, 0) * sv * diagFactor[k.order] * float64(k.order) * pow(nx2[i], k.order-1)
		}
		gw, gb, gx := normGrads(gn, x.Value(), w)
		grads[1], grads[2], grads[3] = collapse(mat.Row(nil, 0, gw), b.w), gb, gx
		return grads
	}, b.variance, b.w, b.bias, x)
}

// normGrads maps gradients with respect to nx²_n = Σ_d w_d x_nd² + b to the
// weight variances (1×D), the bias (1×1) and x.
func normGrads(gn []float64, x *mat.Dense, w []float64) (gw, gb, gx *mat.Dense) {
	r, dim := x.Dims()
	gx = mat.NewDense(r, dim, nil)
	gwv := make([]float64, dim)
	sb := 0.0
	for i := 0; i < r; i++ {
		xi, gi := x.RawRowView(i), gx.RawRowView(i)
		sb += gn[i]
		for d, v := range xi {
			gi[d] = 2 * gn[i] * w[d] * v
			gwv[d] += gn[i] * v * v
		}
	}
	return mat.NewDense(1, dim, gwv), mat.NewDense(1, 1, []float64{sb}), gx
}

func sqrtAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Sqrt(x)
	}
	return out
}

func (b *arcCosineBound) K(x, z *ad.Node) *ad.Node {
	k := b.k
	checkInputs(k.Name(), k.dim, x, z)
	w := expand(b.w, k.dim)
	sw := sqrtAll(w)
	xs, zs := scaleCols(x.Tape(), x.Value(), sw), scaleCols(x.Tape(), z.Value(), sw)
	bias, sv := b.bias.Scalar(), b.variance.Scalar()
	nx, nz := rowSqNorms(x.Tape(), xs), rowSqNorms(x.Tape(), zs)
	for i := range nx {
		nx[i] = math.Sqrt(nx[i] + bias)
	}
	for j := range nz {
		nz[j] = math.Sqrt(nz[j] + bias)
	}
	n, m := len(nx), len(nz)
	c := sv / math.Pi
	out := mat.NewDense(n, m, nil)
	needGrad := x.NeedsGrad() || z.NeedsGrad() || b.w.NeedsGrad() || b.bias.NeedsGrad()
	// kp = ∂k/∂P with P = x̂ᵀẑ, and e = n·k − kp·P, so that
	// ∂k/∂(‖x̂‖²) = e/(2‖x̂‖²) (and likewise for z).
	var kp, e *mat.Dense
	if needGrad {
		kp, e = mat.NewDense(n, m, nil), mat.NewDense(n, m, nil)
	}
	order := k.order
	parallelRows(n, m, func(r0, r1 int) {
		blk := out.Slice(r0, r1, 0, m).(*mat.Dense)
		blk.Mul(xs.Slice(r0, r1, 0, k.dim), zs.T())
		for i := r0; i < r1; i++ {
			row := blk.RawRowView(i - r0)
			for jj := range row {
				p := row[jj] + bias
				q := nx[i] * nz[jj]
				th, t, st := angle(p, nx[i], nz[jj], xs.RawRowView(i), zs.RawRowView(jj), bias)
				j, dj := angular(order, th, t, st)
				qn := 1.0
				for o := 0; o < order; o++ {
					qn *= q
				}
				v := c * qn * j
				row[jj] = v
				if needGrad {
					d := c * qn / q * dj
					kp.Set(i, jj, d)
					e.Set(i, jj, float64(order)*v-d*p)
				}
			}
		}
	})
	return ad.Custom(out, func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 5)
		if b.variance.NeedsGrad() {
			grads[0] = mat.NewDense(1, 1, []float64{mat.Sum(elemProd(g, out)) / sv})
		}
		if !needGrad {
			return grads
		}
		a := elemProd(g, kp)
		ge := elemProd(g, e)
		bx, bz := rowSums(ge), colSums(ge)
		for i := range bx {
			bx[i] /= 2 * nx[i] * nx[i]
		}
		for j := range bz {
			bz[j] /= 2 * nz[j] * nz[j]
		}
		// Norm terms, then the inner-product terms P = Σ_d w_d x_d z_d + b.
		gwx, gbx, gx := normGrads(bx, x.Value(), w)
		gwz, gbz, gz := normGrads(bz, z.Value(), w)
		az := mat.NewDense(n, k.dim, nil)
		az.Mul(a, z.Value())
		atx := mat.NewDense(m, k.dim, nil)
		atx.Mul(a.T(), x.Value())
		gw := make([]float64, k.dim)
		for d := range gw {
			gw[d] = gwx.At(0, d) + gwz.At(0, d)
		}
		for i := 0; i < n; i++ {
			xi, ai, gi := x.Value().RawRowView(i), az.RawRowView(i), gx.RawRowView(i)
			for d := range gw {
				gw[d] += xi[d] * ai[d]
				gi[d] += w[d] * ai[d]
			}
		}
		for j := 0; j < m; j++ {
			ai, gj := atx.RawRowView(j), gz.RawRowView(j)
			for d := range gw {
				gj[d] += w[d] * ai[d]
			}
		}
		if b.w.NeedsGrad() {
			grads[1] = collapse(gw, b.w)
		}
		if b.bias.NeedsGrad() {
			grads[2] = mat.NewDense(1, 1, []float64{gbx.At(0, 0) + gbz.At(0, 0) + mat.Sum(a)})
		}
		if x.NeedsGrad() {
			grads[3] = gx
		}
		if z.NeedsGrad() {
			grads[4] = gz
		}
		return grads
	}, b.variance, b.w, b.bias, x, z)
}
