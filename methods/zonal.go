package methods

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
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
		{Name: "variance", Kind: Float, Default: 1.0, Doc: "initial s(1): k(x, x) = variance·‖x̃‖² (arccos: GPflow's σ²)"},
		{Name: "lengthscales", Kind: Floats, Default: []float64{1.0}, Doc: "initial lengthscale (one value): κ of the spectral density (sphere-*) or of the chordal distance (chordal-*); unused by arccos"},
		{Name: "weight_variances", Kind: Floats, Default: []float64{1.0}, Doc: "initial input weight variances w (one value, or one per input dimension): x̃ = (√w∘x, √b); they act as inverse squared lengthscales"},
		{Name: "ard", Kind: Bool, Default: true, Doc: "one weight variance per input dimension (a single initial value is repeated), as the VISH authors train them; false: one shared weight variance"},
		{Name: "bias_variance", Kind: Float, Default: 1.0, Doc: "initial bias variance b, the appended coordinate √b (the VISH bias; ratio to the input scale sets how much of the hemisphere the data cover)"},
		{Name: "bias_columns", Kind: Int, Default: 0, Doc: "copies of √b appended (1 or 2); 0 = automatic: 2 for 1-D inputs (so that d ≥ 3, as the VISH authors do), else 1; zonal sphere-*/chordal-* kernels only (arccos always appends 1)"},
		{Name: "truncation", Kind: Int, Default: kernels.DefaultTruncation, Doc: "sphere-* kernels: number of levels of the Mercer series that defines the kernel (k(x,x) = variance·ρ² exactly); must exceed the feature levels"},
	}
}

// newZonalKernel builds the zonal kernel of p on dim input dimensions.
func newZonalKernel(method string, p Params, dim int) (kernels.Kernel, error) {
	if err := checkPositive(method, p, "variance", "bias_variance"); err != nil {
		return nil, err
	}
	w := p.Floats("weight_variances")
	if len(w) != 1 && len(w) != dim {
		return nil, fmt.Errorf("%s: weight_variances has %d values for %d input dimensions; give 1 or %d", method, len(w), dim, dim)
	}
	for _, v := range w {
		if !(v > 0) {
			return nil, fmt.Errorf("%s: weight_variances must be positive, got %v", method, w)
		}
	}
	cols := p.Int("bias_columns")
	if cols == 0 {
		cols = 1
		if dim == 1 {
			cols = 2
		}
	}
	if cols < 1 || cols > 2 {
		return nil, fmt.Errorf("%s: bias_columns = %d, want 0 (automatic), 1 or 2", method, p.Int("bias_columns"))
	}
	k, err := kernels.New(p.String("kernel"), dim, kernels.Options{
		Variance: p.Float("variance"), Lengthscales: initialLengthscales(p), WeightVariances: w, ARD: p.Bool("ard") || len(w) > 1,
		BiasVariance: p.Float("bias_variance"), BiasColumns: cols, Truncation: p.Int("truncation"),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return k, nil
}

// zonalLikelihood resolves likelihood = auto and checks classification
// labels (±1).
func zonalLikelihood(method, name string, task Task, noise float64, y []float64) (likelihoods.Likelihood, error) {
	if name == "auto" || name == "" {
		name = "gaussian"
		if task == Classification {
			name = "bernoulli"
		}
	}
	if name == "gaussian" {
		return likelihoods.NewGaussian(noise), nil
	}
	lik, err := likelihoods.New(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if lik.Name() == "bernoulli" {
		for i, v := range y {
			if v != 1 && v != -1 {
				return nil, fmt.Errorf("%s: bernoulli likelihood needs labels ±1; y[%d] = %v", method, i, v)
			}
		}
	}
	return lik, nil
}

// variationalPredict returns the predictive marginals of a posterior at x:
// the latent mean and variance (clamped at 0), plus the noise for a
// Gaussian likelihood or p(y = +1) for a probit one.
func variationalPredict(method string, post *inference.Posterior, bind inference.Binder, s *param.Set, lik likelihoods.Likelihood, dim int, x *mat.Dense) (Prediction, error) {
	if err := checkInputs(method, post != nil, x, dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := post.Predict(x, bind)
	if err != nil {
		return Prediction{}, fmt.Errorf("%s: %w", method, err)
	}
	for i, v := range varf {
		varf[i] = max(v, 0)
	}
	if lik.Name() == "gaussian" {
		return regressionPrediction(mean, varf, s.Scalar(noiseName)), nil
	}
	p, _ := lik.Predict(s, likelihoodPfx, mean, varf)
	return Prediction{Mean: mean, VarF: varf, ProbPositive: p}, nil
}
