package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// logDensityConst is log of S(ξ)/(σ² Πℓ_d) at ξ = 0 for D dimensions, and
// the exponent of the Matérn denominator.
func (p profile) logDensityConst(dim int) (c, power float64) {
	dd := float64(dim)
	if p == se {
		return dd / 2 * math.Log(2*math.Pi), 0
	}
	nu := p.nu()
	lg1, _ := math.Lgamma(nu + dd/2)
	lg2, _ := math.Lgamma(nu)
	return dd*math.Ln2 + dd/2*math.Log(math.Pi) + lg1 - lg2 - dd/2*math.Log(2*nu), nu + dd/2
}

// density evaluates S at the rows of omega for the dimensions dims (the
// columns of omega, in order), returning values and d log S/dℓ for each of
// those dimensions.
func (p profile) density(omega *mat.Dense, sv float64, ls []float64) (s []float64, dlog *mat.Dense) {
	m, dim := omega.Dims()
	c, power := p.logDensityConst(dim)
	for _, l := range ls {
		c += math.Log(l)
	}
	s = make([]float64, m)
	dlog = mat.NewDense(m, dim, nil)
	const fourPi2 = 4 * math.Pi * math.Pi
	for i := 0; i < m; i++ {
		xi := omega.RawRowView(i)
		q := 0.0 // Σ 4π²ℓ²ξ²
		for d, l := range ls {
			q += fourPi2 * l * l * xi[d] * xi[d]
		}
		di := dlog.RawRowView(i)
		if p == se {
			s[i] = sv * math.Exp(c-q/2)
			for d, l := range ls {
				di[d] = 1/l - fourPi2*l*xi[d]*xi[d]
			}
			continue
		}
		nu := p.nu()
		a := 1 + q/(2*nu)
		s[i] = sv * math.Exp(c-power*math.Log(a))
		for d, l := range ls {
			di[d] = 1/l - power/a*fourPi2*l*xi[d]*xi[d]/nu
		}
	}
	return s, dlog
}

func (b *stationaryBound) Density(omega *mat.Dense) *ad.Node {
	if _, c := omega.Dims(); c != b.k.dim {
		panic(fmt.Sprintf("kernels: %s: Density of %d-column frequencies, kernel dimension is %d", b.k.Name(), c, b.k.dim))
	}
	ls := expand(b.ls, b.k.dim)
	return b.densityNode(omega, ls, func(gl []float64) []float64 { return gl })
}

func (b *stationaryBound) Density1D(omega *mat.Dense, d int) *ad.Node {
	if _, c := omega.Dims(); c != 1 {
		panic(fmt.Sprintf("kernels: %s: Density1D of %d-column frequencies, want 1", b.k.Name(), c))
	}
	if d < 0 || d >= b.k.dim {
		panic(fmt.Sprintf("kernels: %s: Density1D of dimension %d, kernel has %d", b.k.Name(), d, b.k.dim))
	}
	ls := expand(b.ls, b.k.dim)
	return b.densityNode(omega, ls[d:d+1], func(gl []float64) []float64 {
		full := make([]float64, b.k.dim)
		full[d] = gl[0]
		return full
	})
}

// densityNode records S(omega) with gradients for the variance and the
// lengthscales; scatter maps gradients for ls to all D lengthscales.
func (b *stationaryBound) densityNode(omega *mat.Dense, ls []float64, scatter func([]float64) []float64) *ad.Node {
	if b.k.prof.nu() == 0 && b.k.prof != se {
		panic("kernels: no spectral density for " + b.k.Name())
	}
	sv := b.variance.Scalar()
	s, dlog := b.k.prof.density(omega, sv, ls)
	m := len(s)
	return ad.Custom(mat.NewDense(m, 1, s), func(g *mat.Dense) []*mat.Dense {
		grads := make([]*mat.Dense, 2)
		gs := make([]float64, m)
		tot := 0.0
		for i := range gs {
			gs[i] = g.At(i, 0) * s[i]
			tot += gs[i]
		}
		if b.variance.NeedsGrad() {
			grads[0] = mat.NewDense(1, 1, []float64{tot / sv})
		}
		if b.ls.NeedsGrad() {
			gl := make([]float64, len(ls))
			for i, v := range gs {
				for d, dl := range dlog.RawRowView(i) {
					gl[d] += v * dl
				}
			}
			grads[1] = collapse(scatter(gl), b.ls)
		}
		return grads
	}, b.variance, b.ls)
}
