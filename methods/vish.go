package methods

import (
	"fmt"

	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// vish is Dutordoir, Durrande & Hensman (2020): inducing variables are the
// RKHS projections of f = ρ(x) g(x̂) onto the spherical harmonics of
// complete levels 0…max_level on the sphere of the bias-augmented inputs.
// Kuu = diag(1/λ_ℓ) is never factorised. The collapsed objective with
// fixed weight and bias variances computes ΦΦᵀ, Φy, yᵀy and Σρ² once in
// O(NM²) (chunked, both cores) and every step is O(M³); with them trained
// it is the O(NM²) SGPR bound per step. The svgp objective is the
// uncollapsed ELBO with a full S, minibatches and a Gaussian or probit
// likelihood. Predictions are in input space: the harmonics'
// cross-covariances carry ρ(x), so the mean is ρ·μ_g and the variance ρ²·σ²_g.
var vishDecl = &sparseDecl{
	name: "vish", tasks: []Task{Regression, Classification},
	kernel:    zonalKernel,
	blocks:    []blockDecl{{feature: builder("harmonics")}},
	objective: objectiveParam, optimizer: optim.LBFGS,
	qPrior: true,
	size:   &sizeRule{param: "max_level", min: 0, limit: usableLevels},
}

// usableLevels is the largest max_level whose harmonics the kernel of p
// admits on data of shape s (features.UsableLevels at the initial
// hyperparameters): the levels num_inducing may choose.
func usableLevels(p Params, s Shape, kernel func() (kernels.Kernel, *param.Set, error)) (int, error) {
	k, set, err := kernel()
	if err != nil {
		return 0, err
	}
	kb, ok := k.Bind(set.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)
	if !ok {
		return 0, fmt.Errorf("harmonics features need a zonal kernel, not %s", k.Name())
	}
	last, err := features.UsableLevels(kb, max(p.Int("truncation")-1, 0))
	if err != nil {
		return 0, err
	}
	if last < 0 {
		return 0, fmt.Errorf("%s has no usable level-0 coefficient at its initial hyperparameters", k.Name())
	}
	return last, nil
}

func init() {
	Register(vishDecl.method(Method{
		Summary: "variational inducing spherical harmonics: diagonal Kuu; collapsed from ΦΦᵀ precomputed once (O(M³) per step), or SVGP (Gaussian or probit)",
		Paper:   "Dutordoir, Durrande & Hensman (2020)",
		Params: concat(zonalKernelParams("sphere-se"), []ParamDoc{trainLengthscaleParam()}, NoiseParams(), VariationalParams(), []ParamDoc{
			{Name: "max_level", Kind: Int, Default: 3, Range: NonNegative, Doc: "harmonics of the complete levels 0…max_level (levels whose kernel coefficient vanishes are dropped): M = Σ N(d,ℓ), e.g. 210 for d = 9 and max_level 3, 660 for 4"},
			sizeParam(vishDecl.size, "Σ_{ℓ ≤ max_level} N(d, ℓ): complete levels on the sphere S^{d−1} of the inputs and the bias columns; only levels whose kernel coefficient is usable in float64"),
			{Name: "objective", Kind: String, Default: "collapsed", Choices: []string{"collapsed", "svgp"},
				Doc: "collapsed: Titsias bound (regression; O(M³) per step after one O(NM²) pass when the weights are fixed); svgp: uncollapsed ELBO with q(u) = N(m, S), S full, minibatches with batch_size"},
			{Name: "train_weights", Kind: Bool, Default: true,
				Doc: "train the weight and bias variances (the input scaling, as the VISH authors do; then the harmonics move and each collapsed step costs O(NM²)); false fixes them at their initial values (each step O(M³) after one O(NM²) pass; on standardised UCI inputs test NLPD 0.6–1.4 nats worse)"},
			likelihoodParam(),
			{Name: "whiten", Kind: Bool, Default: true, Doc: "svgp: q over v with u = Lv, L = diag(1/√λ_ℓ), q(v) = N(0, I) at the start (better conditioned: the λ_ℓ span orders of magnitude; our deviation); false: q over u, starting at the prior N(0, Λ⁻¹) (the authors' parameterisation)"},
		}),
		Check: func(p Params) error {
			if p.Int("warm_start_iterations") > 0 && p.String("objective") == "collapsed" {
				return paramErr("warm_start_iterations", fmt.Errorf("needs objective = \"svgp\" (the collapsed bound is trained by one L-BFGS run on all rows)"))
			}
			if p.Has("natgrad_step") && p.String("objective") == "collapsed" {
				return paramErr("natgrad_step", fmt.Errorf("trains q(u) of the svgp objective; the collapsed objective has no q(u) (set objective = \"svgp\")"))
			}
			return nil
		},
	}))
}
