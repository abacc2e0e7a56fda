package methods

import (
	"sgplab/gp/features"
)

// iff is Cheema & Rasmussen (2023): integrated Fourier features with the
// collapsed bound from ΦΦᵀ, Φy, yᵀy precomputed once, O(M³) per step.
var iffDecl = &sparseDecl{
	name: "iff", tasks: []Task{Regression},
	kernel:    standardKernel,
	blocks:    []blockDecl{{feature: builder("iff")}},
	objective: always(collapsed), exactLML: true,
	size: &sizeRule{param: "freqs_per_dim", min: 1},
}

// iffKernelDefaults: kernels with a spectral density, starting where
// the other methods do (the paper's initial lengthscale is 0.2).
var iffKernelDefaults = KernelDefaults{
	Choices:   []string{"se", "matern12", "matern32", "matern52"},
	KernelDoc: "stationary kernel with a spectral density",
}

func init() {
	Register(iffDecl.method(Method{
		Summary: "integrated Fourier features: collapsed bound from ΦΦᵀ precomputed once, O(M³) per step",
		Paper:   "Cheema & Rasmussen (2023)",
		// The frequency grid grows as 2^D × freqs_per_dim^D: implemented
		// and meaningful for D ≤ 2 (the paper's 1-D and 2-D studies).
		MaxDim: 2,
		Params: concat(KernelParamsFor(iffKernelDefaults), NoiseParams(), []ParamDoc{
			{Name: "freqs_per_dim", Kind: Int, Default: 16, Range: Count,
				Doc: "positive frequencies (j+½)ε_d per dimension, j < freqs_per_dim; cos and sin each, so M = 2^D × kept grid points"},
			{Name: "mask", Kind: Bool, Default: true, Doc: "keep only grid points inside the sphere Σ_d ((j_d+½)/M_d)² ≤ 1 (no effect in 1-D)"},
			{Name: "eps_factor", Kind: Float, Default: features.DefaultIFFEpsilonFactor, Range: Positive,
				Doc: "frequency spacing ε_d = eps_factor / (data width W_d in dimension d); the paper's 0.95 leaves 1/ε − W = 0.053 W, so on data only a few lengthscales wide the features' kernel wraps around (use ≤ 0.5 there)"},
			{Name: "eps", Kind: Floats, Range: Positive, Doc: "explicit frequency spacing (1 value or one per dimension); overrides eps_factor"},
			sizeParam(iffDecl.size, "2^D × the grid of freqs_per_dim^D frequencies, inside the sphere with mask = true: 2·freqs_per_dim in 1-D"),
		}),
	}))
}
