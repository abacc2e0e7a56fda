package methods

import (
	"fmt"

	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// The spherical methods (vish, activated-svgp) share a zonal kernel on the
// bias-augmented inputs x̃ = (√w∘x, √b[, √b]): k = ρρ' s(x̂ᵀx̂').

// zonalKernelChoices are the kernels with a Funk–Hecke expansion.
var zonalKernelChoices = []string{
	"sphere-matern12", "sphere-matern32", "sphere-matern52", "sphere-se",
	"chordal-matern12", "chordal-matern32", "chordal-matern52", "chordal-se",
	"arccos0", "arccos1", "arccos2",
}

// zonalKernelParams documents the zonal kernel and its initial values.
func zonalKernelParams(kernel string) []ParamDoc {
	return []ParamDoc{
		{Name: "kernel", Kind: String, Default: kernel, Choices: zonalKernelChoices,
			Doc: "zonal kernel k = ρ(x)ρ(x') s(x̂ᵀx̂') on the sphere of x̃ = (√w∘x, √b): sphere-* = Matérn/SE by the spectral route λ_ℓ ∝ S(√(ℓ(ℓ+d−2))) (VISH), normalised to s(1) = variance; chordal-* = Matérn/SE of the chordal distance (spherical ODGP); arccos0/1/2 = Cho & Saul (radial power 0/1/2; odd levels ≥ 3 of arccos1 vanish)"},
		{Name: "variance", Kind: Float, Default: 1.0, Range: Positive, Doc: "initial s(1): k(x, x) = variance·‖x̃‖² (arccos: GPflow's σ²)"},
		{Name: "lengthscales", Kind: Floats, Default: []float64{1.0}, Range: Positive, Doc: "initial lengthscale (one value): κ of the spectral density (sphere-*) or of the chordal distance (chordal-*); unused by arccos"},
		{Name: "weight_variances", Kind: Floats, Default: []float64{1.0}, Range: Positive, Doc: "initial input weight variances w (one value, or one per input dimension): x̃ = (√w∘x, √b); they act as inverse squared lengthscales"},
		{Name: "ard", Kind: Bool, Default: true, Doc: "one weight variance per input dimension (a single initial value is repeated), as the VISH authors train them; false: one shared weight variance"},
		{Name: "bias_variance", Kind: Float, Default: 1.0, Range: Positive, Doc: "initial bias variance b, the appended coordinate √b (the VISH bias; ratio to the input scale sets how much of the hemisphere the data cover)"},
		{Name: "bias_columns", Kind: Int, Default: 0, Range: Between(0, 2), Doc: "copies of √b appended (1 or 2); 0 = automatic: 2 for 1-D inputs (so that d ≥ 3, as the VISH authors do), else 1; zonal sphere-*/chordal-* kernels only (arccos always appends 1)"},
		{Name: "truncation", Kind: Int, Default: kernels.DefaultTruncation, Range: Count, Doc: "sphere-* kernels: number of levels of the Mercer series that defines the kernel (k(x,x) = variance·ρ² exactly); must exceed the feature levels"},
	}
}

// trainLengthscaleParam documents the choice to fix a zonal kernel's
// lengthscale (methods that train the kernel).
func trainLengthscaleParam() ParamDoc {
	return ParamDoc{Name: "train_lengthscale", Kind: Bool,
		Doc: "unset or true: the lengthscale is trained with the other hyperparameters; false fixes it at its initial value (the VISH authors' spherical Matérn has no lengthscale parameter: κ = 1)"}
}

// newZonalKernel builds the zonal kernel of p on dim input dimensions.
func newZonalKernel(p Params, dim int) (kernels.Kernel, error) {
	w := p.Floats("weight_variances")
	if len(w) != 1 && len(w) != dim {
		return nil, paramErr("weight_variances", fmt.Errorf("%d values for %d input dimensions; give 1 or %d", len(w), dim, dim))
	}
	cols := p.Int("bias_columns")
	if cols == 0 {
		cols = 1
		if dim == 1 {
			cols = 2
		}
	}
	return kernels.New(p.String("kernel"), dim, kernels.Options{
		Variance: p.Float("variance"), Lengthscales: initialLengthscales(p), WeightVariances: w, ARD: p.Bool("ard") || len(w) > 1,
		BiasVariance: p.Float("bias_variance"), BiasColumns: cols, Truncation: p.Int("truncation"),
	})
}

// zonalKernel is the kernel builder of the spherical methods: the zonal
// kernel, with its weight and bias variances trained as train_weights says
// (trained when the method has no such parameter) and its lengthscale as
// train_lengthscale says (trained when unset).
func zonalKernel(p Params, dim int, s *param.Set) (kernels.Kernel, error) {
	k, err := newZonalKernel(p, dim)
	if err != nil {
		return nil, err
	}
	if err := k.Declare(s, KernelPrefix); err != nil {
		return nil, err
	}
	if p.Has("train_weights") {
		s.SetTrainable(p.Bool("train_weights"), zonalAugmentation...)
	}
	if p.Has("train_lengthscale") {
		s.SetTrainable(p.Bool("train_lengthscale"), KernelPrefix+"lengthscales")
	}
	return k, nil
}
