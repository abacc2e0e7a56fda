package features

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// Cross-covariances of activation units with the other spherical feature
// sets (Tiao, Dutordoir & Picheny 2023, App. A), for the orthogonally
// decoupled pairs the paper lists but never runs. With the units'
// coefficients ζ_ℓ and the kernel's λ_ℓ, the RKHS inner products are
//
//	⟨H_m, H'_k⟩_H = Σ_ℓ ζ_ℓ ζ'_ℓ/λ_ℓ · N(d,ℓ)/Ω_{d−1} R_ℓ(ẑ_mᵀŵ_k)   (A.3.3, eq. 53),
//	⟨H_m, Y_j⟩_H  = ζ_{ℓ(j)}/λ_{ℓ(j)} · Y_j(ẑ_m)                       (A.2.3/A.3.2, eqs. 42, 49),
//
// over the levels both sets keep (ℓ below each truncation, λ_ℓ ≠ 0). The
// second follows from H_m = Σ_ℓ ζ_ℓ Σ_j Y_ℓj(ẑ_m) Y_ℓj and ⟨Y_j, Y_j'⟩_H =
// δ_jj'/λ_ℓ(j), the harmonics' own Kuu.

// KnownPartners names the feature sets KuvWith knows.
func (b activationBound) KnownPartners() []string {
	return []string{"activation units", "spherical harmonics"}
}

// KuvWith returns Cov(u, v) for u the units of b and v other units or
// spherical harmonics under the same zonal kernel.
func (b activationBound) KuvWith(k kernels.Bound, v Bound) (*ad.Node, bool, error) {
	zk, ok := k.(kernels.ZonalBound)
	if !ok {
		return nil, false, nil
	}
	switch o := v.(type) {
	case activationBound:
		if o.f.d != b.f.d {
			return nil, true, fmt.Errorf("features: activation units in %d and %d augmented dimensions", b.f.d, o.f.d)
		}
		L := min(b.f.trunc, o.f.trunc)
		num := make([]float64, L)
		for l := range num {
			num[l] = b.f.zeta[l] * o.f.zeta[l]
		}
		c, err := overLambda(zk, num)
		if err != nil {
			return nil, true, err
		}
		return kernels.ZonalSeries(kernels.Cosines(b.directions(), o.directions()), c, b.f.d), true, nil
	case sphericalBound:
		if d := o.f.basis.Dim(); d != b.f.d {
			return nil, true, fmt.Errorf("features: activation units in %d augmented dimensions, spherical harmonics on S^%d", b.f.d, d-1)
		}
		maxL := 0
		for _, l := range o.f.levelOf {
			maxL = max(maxL, l)
		}
		num := make([]float64, maxL+1)
		copy(num, b.f.zeta[:min(len(num), len(b.f.zeta))])
		c, err := overLambda(zk, num)
		if err != nil {
			return nil, true, err
		}
		// Y(ẑ_m)ᵀ (M_act × M_Y), column j scaled by ζ_ℓ(j)/λ_ℓ(j).
		y := ad.T(harmonics(o.f.basis, b.directions()))
		return ad.MulRowVec(y, ad.T(gatherRows(c, o.f.levelOf))), true, nil
	}
	return nil, false, nil
}

// overLambda returns c_ℓ = num_ℓ/λ_ℓ (len(num)×1) on the tape of the
// kernel's coefficients, 0 where num_ℓ or λ_ℓ is 0 (a level the units or
// the kernel drop) or the kernel's parity removes the level.
func overLambda(k kernels.ZonalBound, num []float64) (*ad.Node, error) {
	L := len(num)
	lam, err := k.Coefficients(L - 1)
	if err != nil {
		return nil, err
	}
	lv := mat.Col(nil, 0, lam.Value())
	c := mat.NewDense(L, 1, nil)
	keep := make([]bool, L)
	for l := 0; l < L; l++ {
		keep[l] = !k.Parity().Zero(l) && num[l] != 0 && lv[l] > 0
		if keep[l] {
			c.Set(l, 0, num[l]/lv[l])
		}
	}
	return ad.Custom(c, func(g *mat.Dense) []*mat.Dense {
		gl := mat.NewDense(L, 1, nil)
		for l := 0; l < L; l++ {
			if keep[l] {
				gl.Set(l, 0, -g.At(l, 0)*c.At(l, 0)/lv[l])
			}
		}
		return []*mat.Dense{gl}
	}, lam), nil
}

var (
	_ CrossCovariance = activationBound{}
	_ PairLister      = activationBound{}
)
