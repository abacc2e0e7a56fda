package features

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// TraceResidual is implemented by bound features that know the trace term
// of the collapsed bound,
//
//	tr(Kff − Qff) = Σ_n [k(x_n, x_n) − k_nᵀ Kuu⁻¹ k_n],   k_n = Kuf[:, n],
//
// in a closed form. Inference otherwise computes it as Σ_n k(x_n, x_n)
// minus ‖L⁻¹Kuf‖²_F: two sums that agree in their leading digits when the
// features explain most of the prior variance, so that at large kernel
// scales (Σ k/σ² ~ 10¹²) the difference, and the bound with it, keeps only
// a few digits and moves in steps of its last bit.
type TraceResidual interface {
	// TraceResidual returns tr(Kff − Qff) over the rows of x, 1×1 on t and
	// differentiable in k's parameters, for the feature's own Kuu without
	// jitter, and true; or false when it has no closed form under k.
	TraceResidual(t *ad.Tape, k kernels.Bound, x *mat.Dense) (*ad.Node, bool)
}

// TraceResidualOf returns the closed-form trace term of f (or of a feature
// it wraps) under k at the rows of x, or false.
func TraceResidualOf(t *ad.Tape, k kernels.Bound, f Bound, x *mat.Dense) (*ad.Node, bool) {
	r, ok := As[TraceResidual](f)
	if !ok {
		return nil, false
	}
	return r.TraceResidual(t, k, x)
}
