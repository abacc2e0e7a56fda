package features

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/gp/sphere"
)

// Activation are the spherical neural-network activation features of
// activated SVGP (Dutordoir, Hensman, van der Wilk et al. 2021; Sun et
// al. 2020), as specified by Tiao, Dutordoir & Picheny (2023, eqs. 6–7):
// u_m = ⟨f, H_m⟩_H with the hidden unit H_m(x) = ρ(x)^p σ(ẑ_mᵀx̂) of a
// direction z_m in the augmented input space, σ ∈ {relu, softplus}, for a
// zonal kernel k = ρ^pρ'^p s(x̂ᵀx̂') with coefficients λ_ℓ. With the
// activation's Funk–Hecke coefficients ζ_ℓ and the level set
// 𝓛 = {ℓ < L : λ_ℓ ≠ 0} (truncation L),
//
//	Kuu[m, m'] = Σ_{ℓ∈𝓛} ζ_ℓ²/λ_ℓ · N(d,ℓ)/Ω_{d−1} R_ℓ(ẑ_mᵀẑ_m'),
//	Kuf[m, n]  = ρ(x_n)^p Σ_{ℓ∈𝓛} ζ_ℓ N(d,ℓ)/Ω_{d−1} R_ℓ(ẑ_mᵀx̂_n)  = H_m^{(L)}(x_n),
//
// the truncated unit in both, so that the joint prior of (u, f) stays
// positive semi-definite (spherical-odgp-spec §6.4). The cross-covariance
// with function values at other inputs W (orthogonal inducing points) is
// the same forward pass, Kuv = H^{(L)}(W) (eq. 47), which features.Kuv
// finds through Kuf at the points (no pair method needed). The norm of
// z_m is absorbed by q(u) (§6.3): only its direction matters. ReLU units
// have an infinite RKHS norm: Kuu grows without bound with L (Warning).
type Activation struct {
	act   string
	d     int
	trunc int
	z0    *mat.Dense
	zeta  []float64 // ζ_ℓ, ℓ < trunc, surface measure
}

// Activations are the activation names NewActivation accepts.
func Activations() []string { return []string{"relu", "softplus"} }

func activation(name string) (sphere.Shape, error) {
	switch name {
	case "relu":
		return func(t float64) (float64, float64) { return math.Max(t, 0), 0 }, nil
	case "softplus":
		return func(t float64) (float64, float64) { return math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t))), 0 }, nil
	}
	return nil, fmt.Errorf("features: unknown activation %q; valid: %s", name, strings.Join(Activations(), ", "))
}

// NewActivation returns M = rows of z activation features with initial
// directions z (M×d, d the kernel's sphere dimension) and truncation L
// (levels 0…L−1).
func NewActivation(act string, z *mat.Dense, truncation int) (*Activation, error) {
	shape, err := activation(act)
	if err != nil {
		return nil, err
	}
	if z == nil {
		return nil, fmt.Errorf("features: activation: no directions")
	}
	m, d := z.Dims()
	if m < 1 || d < 2 {
		return nil, fmt.Errorf("features: activation: directions are %d×%d, want M ≥ 1 rows in d ≥ 2 augmented dimensions", m, d)
	}
	if truncation < 1 || truncation > sphere.MaxQuadratureLevel+1 {
		return nil, fmt.Errorf("features: activation: truncation L = %d levels, want 1…%d", truncation, sphere.MaxQuadratureLevel+1)
	}
	for i := 0; i < m; i++ {
		row := z.RawRowView(i)
		n := math.Sqrt(dotRow(row, row))
		if !(n > 0) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("features: activation: direction %d has norm %v", i, n)
		}
	}
	zeta, err := activationZeta(shape, d, truncation)
	if err != nil {
		return nil, err
	}
	return &Activation{act: act, d: d, trunc: truncation, z0: mat.DenseCopyOf(z), zeta: zeta}, nil
}

// ActivationZeta returns the Funk–Hecke coefficients ζ_ℓ, ℓ < levels, of
// the activation act on S^{d−1} (surface measure): the spectrum of a unit
// σ(ẑᵀx̂), whatever its direction.
func ActivationZeta(act string, d, levels int) ([]float64, error) {
	shape, err := activation(act)
	if err != nil {
		return nil, err
	}
	if d < 2 || levels < 1 || levels > sphere.MaxQuadratureLevel+1 {
		return nil, fmt.Errorf("features: activation: %d levels on S^%d, want 1…%d levels and d ≥ 2", levels, d-1, sphere.MaxQuadratureLevel+1)
	}
	return activationZeta(shape, d, levels)
}

func activationZeta(shape sphere.Shape, d, levels int) ([]float64, error) {
	zeta, _, err := sphere.FunkHecke(d, levels-1, shape, sphere.EvenPlusLinear)
	if err != nil {
		return nil, fmt.Errorf("features: activation: %w", err)
	}
	return zeta, nil
}

func (f *Activation) Name() string { return "activation-" + f.act }

// M is the number of features.
func (f *Activation) M() int { r, _ := f.z0.Dims(); return r }

// Zeta returns the activation's coefficients ζ_ℓ, ℓ < L (surface measure).
func (f *Activation) Zeta() []float64 { return append([]float64(nil), f.zeta...) }

// Warning explains a divergent construction, or is empty.
func (f *Activation) Warning() string {
	if f.act != "relu" {
		return ""
	}
	return fmt.Sprintf("relu activation features have an infinite RKHS norm: ζ_ℓ decays like √λ_ℓ, so Kuu's diagonal Σ_ℓ ζ_ℓ²/λ_ℓ N(d,ℓ)/Ω grows without bound with the truncation (L = %d here) and the model depends on L; softplus converges (Tiao et al. 2023, §3)", f.trunc)
}

// Declare registers prefix+"directions" (M×d, unconstrained).
func (f *Activation) Declare(s *param.Set, prefix string) error {
	return s.Add(prefix+"directions", mat.DenseCopyOf(f.z0), param.Identity{})
}

func (f *Activation) Bind(b *param.Bound, prefix string) Bound {
	z := b.Get(prefix + "directions")
	if r, c := z.Dims(); r != f.M() || c != f.d {
		panic(fmt.Sprintf("features: %sdirections is %d×%d, want %d×%d", prefix, r, c, f.M(), f.d))
	}
	return activationBound{f: f, z: z}
}

// CheckKernel reports whether the zonal kernel k fits: the same sphere
// dimension, and every level of the truncation with a usable coefficient
// (positive and above the quadrature noise, or exactly zero by parity).
func (f *Activation) CheckKernel(k kernels.ZonalBound) error {
	if k.SphereDim() != f.d {
		return fmt.Errorf("features: activation directions live in %d dimensions, the kernel's augmented inputs in %d", f.d, k.SphereDim())
	}
	lam, err := k.Coefficients(f.trunc - 1)
	if err != nil {
		return fmt.Errorf("features: activation: %w", err)
	}
	v := mat.Col(nil, 0, lam.Value())
	for l := range v {
		if k.Parity().Zero(l) || f.zeta[l] == 0 {
			continue
		}
		if !(v[l] > 0) || !sphere.Accurate(v, l) {
			return fmt.Errorf("features: activation: the kernel's coefficient of level %d is %.3g (level 0: %.3g), not usable in float64; lower the truncation below %d", l, v[l], v[0], l+1)
		}
	}
	return nil
}

type activationBound struct {
	f *Activation
	z *ad.Node
}

func (b activationBound) M() int { return b.f.M() }

// Directions is the M×d node of the (unnormalised) directions z_m.
func (b activationBound) Directions() *ad.Node { return b.z }

// coefficients returns the series coefficients of Kuu (ζ²/λ) and of the
// units (ζ), zero outside 𝓛.
func (b activationBound) coefficients(k kernels.ZonalBound) (kuu, units *ad.Node) {
	L := b.f.trunc
	num := make([]float64, L)
	for l, z := range b.f.zeta[:L] {
		num[l] = z * z
	}
	kuu, err := overLambda(k, num)
	if err != nil {
		panic(err.Error())
	}
	u := mat.NewDense(L, 1, nil)
	for l := 0; l < L; l++ {
		if kuu.Value().At(l, 0) != 0 {
			u.Set(l, 0, b.f.zeta[l])
		}
	}
	return kuu, kuu.Tape().Const(u)
}

func (b activationBound) directions() *ad.Node {
	_, zh, err := kernels.Radius(b.z)
	if err != nil {
		panic(fmt.Sprintf("features: activation: %v", err))
	}
	return zh
}

func (b activationBound) Kuu(k kernels.Bound) *ad.Node {
	zk := zonal(k)
	c, _ := b.coefficients(zk)
	zh := b.directions()
	return kernels.ZonalSeries(kernels.Cosines(zh, zh), c, b.f.d)
}

// Kuf is H^{(L)}(x), M×N.
func (b activationBound) Kuf(k kernels.Bound, x *ad.Node) *ad.Node {
	zk := zonal(k)
	_, units := b.coefficients(zk)
	rho, xh, err := kernels.Radius(zk.Augment(x))
	if err != nil {
		panic(err.Error())
	}
	out := kernels.ZonalSeries(kernels.Cosines(b.directions(), xh), units, b.f.d)
	if p := zk.RadialPower(); p != 0 {
		out = ad.MulRowVec(out, ad.T(ad.Pow(rho, float64(p))))
	}
	return out
}
