package features

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// IFF are the integrated Fourier features of Cheema & Rasmussen (2023) in
// their practical real form (App. B): on a regular frequency grid with
// spacing ε_d, for every kept positive-orthant frequency z and every subset S
// of the dimensions,
//
//	Kuf[(S,z), n] = Π_{d∈S} √2 sin(2π z_d x_nd) · Π_{d∉S} √2 cos(2π z_d x_nd),
//	Kuu = diag(1 / (ε_vol S_θ(z))),   ε_vol = Π_d ε_d,
//
// with S_θ the kernel's spectral density (kernels.SpectralBound). Kuf does
// not depend on the hyperparameters, so the collapsed bound needs ΦΦᵀ only
// once (inference.ComputeStats). The positive frequencies per dimension are
// (j + ½)ε_d, j = 0 … M_d − 1; with the spherical mask a grid point is kept
// iff Σ_d ((j_d + ½)/M_d)² ≤ 1. Features are ordered subset-major: row
// s·K + k is subset s (bit d set: sin in dimension d) of frequency k.
//
// The kernel must have a spectral density that is even in every coordinate
// (SE and Matérn, isotropic or ARD).
//
// The collapsed bound on these features is the paper's 𝔉̂, not a bound in
// general: ΦᵀKuu⁻¹Φ is Σ_n (−1)ⁿ k(τ − n/ε) (Poisson summation over the
// half-offset grid) minus the PSD spectral mass beyond the grid. While the
// data span is several lengthscales below 1/ε only n = 0 matters and 𝔉̂ is
// Titsias' bound for K minus a PSD matrix, so 𝔉̂ ≤ L; when the span nears
// 1/ε (ε = 0.95/width on a short domain) the wrap-around terms can make
// 𝔉̂ > L.
type IFF struct {
	eps    []float64
	perDim []int
	idx    [][]int    // K index tuples j_d
	freqs  *mat.Dense // K×D
}

// DefaultIFFEpsilonFactor is the paper's ε_d = 0.95 / data width (§4.2,
// used in all its experiments). It is relative to the data width only, so
// the wrap-around margin 1/ε − W = 0.053 W scales with the domain: 7λ or
// more on the paper's 1-D data, but only 0.26λ on a square 5 lengthscales
// wide, where inputs at opposite edges are strongly anti-correlated under
// Φᵀ Kuu⁻¹ Φ and the gap to L has a floor that more features do not lower.
// On domains a few lengthscales wide use a smaller factor (0.5 leaves a
// margin of W).
const DefaultIFFEpsilonFactor = 0.95

// IFFEpsilon returns ε_d = factor / (max_n x_nd − min_n x_nd) for every
// dimension of x, the paper's default with factor 0.95.
func IFFEpsilon(x *mat.Dense, factor float64) ([]float64, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("features: IFF: ε factor must be positive and finite, got %v", factor)
	}
	n, d := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("features: IFF: need at least 2 inputs to set ε from the data width, got %d", n)
	}
	eps := make([]float64, d)
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			v := x.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("features: IFF: input [%d,%d] = %v is not finite", i, j, v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if !(hi > lo) {
			return nil, fmt.Errorf("features: IFF: inputs have zero width in dimension %d (all %v); set ε explicitly", j, lo)
		}
		eps[j] = factor / (hi - lo)
	}
	return eps, nil
}

// NewIFF builds the feature set with perDim[d] positive frequencies and
// spacing eps[d] in dimension d, optionally masked to the sphere in grid
// coordinates (hyperparameter-free).
func NewIFF(perDim []int, eps []float64, mask bool) (*IFF, error) {
	dim := len(perDim)
	if dim == 0 || len(eps) != dim {
		return nil, fmt.Errorf("features: IFF: %d frequency counts and %d spacings; give one of each per input dimension", len(perDim), len(eps))
	}
	for d := range perDim {
		if !(eps[d] > 0) || math.IsInf(eps[d], 0) {
			return nil, fmt.Errorf("features: IFF: spacing ε in dimension %d must be positive and finite, got %v", d, eps[d])
		}
	}
	f := &IFF{eps: append([]float64(nil), eps...), perDim: append([]int(nil), perDim...)}
	err := iffGrid(perDim, mask, func(tuple []int) bool {
		f.idx = append(f.idx, append([]int(nil), tuple...))
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(f.idx) == 0 {
		return nil, iffEmptyMask(perDim)
	}
	f.freqs = mat.NewDense(len(f.idx), dim, nil)
	for k, t := range f.idx {
		for d, j := range t {
			f.freqs.Set(k, d, (float64(j)+0.5)*eps[d])
		}
	}
	return f, nil
}

// Dim is the input dimension.
func (f *IFF) Dim() int { return len(f.eps) }

// M is the number of real features, 2^D per kept frequency.
func (f *IFF) M() int { return len(f.idx) << f.Dim() }

// Frequencies returns the kept positive-orthant frequencies (K×D, cycles
// per unit).
func (f *IFF) Frequencies() *mat.Dense { return mat.DenseCopyOf(f.freqs) }

// Epsilon returns the grid spacing per dimension.
func (f *IFF) Epsilon() []float64 { return append([]float64(nil), f.eps...) }

// EpsVolume is ε_vol = Π_d ε_d.
func (f *IFF) EpsVolume() float64 {
	v := 1.0
	for _, e := range f.eps {
		v *= e
	}
	return v
}

// Name returns "iff".
func (f *IFF) Name() string { return "iff" }

// Declare registers nothing: the features have no parameters.
func (f *IFF) Declare(*param.Set, string) error { return nil }

// Bind returns the feature on a tape.
func (f *IFF) Bind(*param.Bound, string) Bound { return iffBound{f} }

// CheckKernel reports whether k can be used with IFF: it must be stationary
// with a spectral density on the feature's input dimension.
func (f *IFF) CheckKernel(k kernels.Kernel) error {
	s := param.NewSet()
	if err := k.Declare(s, ""); err != nil {
		return err
	}
	if _, ok := k.Bind(s.Bind(ad.NewTape()), "").(kernels.SpectralBound); !ok {
		return fmt.Errorf("features: IFF needs a stationary kernel with a spectral density (se, matern12, matern32, matern52, isotropic or ARD); %q has none", k.Name())
	}
	if d := kernels.Dim(k); d != 0 && d != f.Dim() {
		return fmt.Errorf("features: IFF: kernel has dimension %d, features %d", d, f.Dim())
	}
	return nil
}

// Phi returns Kuf (M×n) for the rows of x. It is safe for concurrent use;
// inference.Allocating(Phi) is the inference.FeatureMap of the feature.
func (f *IFF) Phi(x *mat.Dense) (*mat.Dense, error) {
	cs, err := f.trig(x)
	if err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	k := len(f.idx)
	out := mat.NewDense(f.M(), n, nil)
	for sub := 0; sub < 1<<dim; sub++ {
		for q, t := range f.idx {
			row := out.RawRowView(sub*k + q)
			first := cs[0][2*t[0]+sub&1]
			copy(row, first)
			for d := 1; d < dim; d++ {
				fac := cs[d][2*t[d]+(sub>>d)&1]
				for i, v := range fac {
					row[i] *= v
				}
			}
		}
	}
	return out, nil
}

func (f *IFF) checkInputs(x *mat.Dense) error {
	if x == nil {
		return fmt.Errorf("features: IFF: inputs are nil")
	}
	if _, dim := x.Dims(); dim != f.Dim() {
		return fmt.Errorf("features: IFF: inputs have %d columns, features have dimension %d", dim, f.Dim())
	}
	return nil
}

// trig returns cs[d][2j] and cs[d][2j+1], √2 cos and √2 sin of
// 2π(j+½)ε_d x_nd for all n, each a slice of length n.
func (f *IFF) trig(x *mat.Dense) ([][][]float64, error) {
	if err := f.checkInputs(x); err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	cs := make([][][]float64, dim)
	for d := 0; d < dim; d++ {
		cs[d] = make([][]float64, 2*f.perDim[d])
		for j := 0; j < f.perDim[d]; j++ {
			c, s := make([]float64, n), make([]float64, n)
			w := 2 * math.Pi * (float64(j) + 0.5) * f.eps[d]
			for i := 0; i < n; i++ {
				v := x.At(i, d)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("features: IFF: input [%d,%d] = %v is not finite", i, d, v)
				}
				si, ci := math.Sincos(w * v)
				c[i], s[i] = math.Sqrt2*ci, math.Sqrt2*si
			}
			cs[d][2*j], cs[d][2*j+1] = c, s
		}
	}
	return cs, nil
}

// phiGradX is ∂⟨g, Φ(x)⟩/∂x (n×D) for the adjoint g (M×n) of Φ.
func (f *IFF) phiGradX(x, _, g *mat.Dense) *mat.Dense {
	cs, err := f.trig(x)
	if err != nil {
		panic(err.Error())
	}
	n, dim := x.Dims()
	k := len(f.idx)
	out := mat.NewDense(n, dim, nil)
	row := make([]float64, n)
	for sub := 0; sub < 1<<dim; sub++ {
		for q, t := range f.idx {
			grow := g.RawRowView(sub*k + q)
			for d := 0; d < dim; d++ {
				// ∂ of factor d: (√2 cos)' = −w √2 sin, (√2 sin)' = w √2 cos.
				w := 2 * math.Pi * (float64(t[d]) + 0.5) * f.eps[d]
				if (sub>>d)&1 == 0 {
					for i, v := range cs[d][2*t[d]+1] {
						row[i] = -w * v
					}
				} else {
					for i, v := range cs[d][2*t[d]] {
						row[i] = w * v
					}
				}
				for e := 0; e < dim; e++ {
					if e == d {
						continue
					}
					for i, v := range cs[e][2*t[e]+(sub>>e)&1] {
						row[i] *= v
					}
				}
				for i := range row {
					out.Set(i, d, out.At(i, d)+grow[i]*row[i])
				}
			}
		}
	}
	return out
}

type iffBound struct{ f *IFF }

func (b iffBound) M() int { return b.f.M() }

func (b iffBound) spectral(k kernels.Bound) kernels.SpectralBound {
	s, ok := k.(kernels.SpectralBound)
	if !ok {
		panic(fmt.Sprintf("features: IFF needs a kernel with a spectral density (se, matern12, matern32, matern52), got %T", k))
	}
	return s
}

// Precision is the diagonal of Kuu⁻¹, ε_vol S_θ(z) repeated for the 2^D
// subsets (M×1). Unlike KuuDiag it stays finite when S underflows.
func (b iffBound) Precision(k kernels.Bound) *ad.Node {
	s := ad.Scale(b.f.EpsVolume(), b.spectral(k).Density(b.f.freqs))
	reps := make([]*ad.Node, 1<<b.f.Dim())
	for i := range reps {
		reps[i] = s
	}
	if len(reps) == 1 {
		return s
	}
	return ad.VCat(reps...)
}

// KuuStructure is the precision-diagonal form: Kuu⁻¹ = diag(ε_vol S_θ(z)),
// which stays finite where S underflows.
func (b iffBound) KuuStructure(k kernels.Bound, _ int, accept Forms) (KuuStructure, error) {
	if _, ok := k.(kernels.SpectralBound); !ok {
		return KuuStructure{}, fmt.Errorf("IFF needs a kernel with a spectral density (se, matern12, matern32, matern52), got %T", k)
	}
	if accept&FormPrecision == 0 {
		return KuuStructure{Dense: b.Kuu(k)}, nil
	}
	return KuuStructure{Precision: b.Precision(k)}, nil
}

func (b iffBound) Kuu(k kernels.Bound) *ad.Node { return ad.DiagMat(ad.Pow(b.Precision(k), -1)) }

func (b iffBound) Name() string                   { return b.f.Name() }
func (b iffBound) CheckInputs(x *mat.Dense) error { return b.f.checkInputs(x) }

// Kuf is Φ(x): a constant when x is, otherwise differentiable in x with
// ∂/∂x_nd of √2 cos(2πz_d x_nd) = −2πz_d √2 sin(2πz_d x_nd) (and cos for
// sin) times the other dimensions' factors. It does not depend on θ.
func (b iffBound) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node {
	phi, err := b.f.Phi(x.Value())
	if err != nil {
		panic(err.Error()) // KufChecked reports this as an error
	}
	if !x.NeedsGrad() {
		return x.Tape().Const(phi)
	}
	return ad.Custom(phi, func(g *mat.Dense) []*mat.Dense {
		return []*mat.Dense{b.f.phiGradX(x.Value(), phi, g)}
	}, x)
}

var _ StructuredKuu = iffBound{}
