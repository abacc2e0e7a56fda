package methods

import (
	"sgplab/gp/features"
	"sgplab/gp/optim"
)

// activated-svgp is SVGP with spherical activation inducing features
// (Dutordoir et al. 2021, as specified by Tiao, Dutordoir & Picheny 2023
// §2.3): u_m = ⟨f, H_m⟩_H for hidden units H_m(x) = ρ(x) σ(ẑ_mᵀx̂),
// truncated at L levels, so the posterior mean is a one-hidden-layer
// network. Kuu is dense (eq. 7) and gets jitter. Training follows the
// paper (App. B.3): q(u) = N(0, I) without whitening, then an
// initialisation phase of up to init_iterations L-BFGS steps on q and the
// directions with the kernel and likelihood fixed, then everything; or
// Adam on minibatches.
var activatedDecl = &sparseDecl{
	name: "activated-svgp", tasks: []Task{Regression, Classification},
	kernel:    zonalKernel,
	blocks:    []blockDecl{{feature: builder("activation"), size: "num_inducing", stream: 1}},
	objective: always(elbo), optimizer: optim.LBFGS,
	initPhase: true,
}

func init() {
	Register(activatedDecl.method(Method{
		Summary: "SVGP with spherical ReLU/softplus activation inducing features (a one-hidden-layer network mean); L-BFGS with an initialisation phase, or Adam on minibatches",
		Paper:   "Dutordoir et al. (2021); Tiao, Dutordoir & Picheny (2023)",
		Params: concat(zonalKernelParams("arccos1"), []ParamDoc{trainLengthscaleParam()}, NoiseParams(), NumericParams(), VariationalParams(), activationParams(128), []ParamDoc{
			{Name: "train_weights", Kind: Bool, Default: true, Doc: "optimise the kernel's weight and bias variances"},
			{Name: "init_iterations", Kind: Int, Default: 100, Range: NonNegative, Doc: "iterations of the first phase (q(u) and the directions only, kernel and likelihood fixed; the paper's up to 100 L-BFGS steps); 0 skips it"},
			{Name: "whiten", Kind: Bool, Default: true, Doc: "parametrise q over v with u = Lv, L = chol(Kuu), q(v) = N(0, I) at the start (converges in far fewer steps); false (the paper, App. B.3): q(u) = N(0, I), whose KL starts of order M/jitter when M exceeds the rank of the truncated units (Kuu is then singular up to jitter), so expect steep early steps and many iterations"},
			likelihoodParam(),
		}),
	}))
}

// activationParams documents the activation units (the activation feature
// builder's parameters) with m units by default.
func activationParams(m int) []ParamDoc {
	return []ParamDoc{
		{Name: "activation", Kind: String, Default: "softplus", Choices: features.Activations(),
			Doc: "σ of the units H_m(x) = ρ(x)σ(ẑ_mᵀx̂); relu has an infinite RKHS norm, so Kuu grows without bound with activation_levels (reported as metric relu_rkhs_divergent = 1); softplus converges"},
		{Name: "num_inducing", Kind: Int, Default: m, Range: Count, Doc: "number of units M (of the base set, when it is activation units or inducing points)"},
		{Name: "activation_levels", Kind: Int, Default: 6, Range: Count, Doc: "truncation L: the units and Kuu use the Funk–Hecke levels 0…L−1 whose kernel coefficient is non-zero (the paper's L = 6; L = 8 and 16 on Snelson)"},
		{Name: "directions_init", Kind: String, Default: "data", Choices: []string{"data", "random"},
			Doc: "initial directions z_m: the augmented inputs x̃ of M random training points, or N(0, I) draws (both seeded)"},
		{Name: "train_directions", Kind: Bool, Default: true, Doc: "optimise the directions z_m (the network's first-layer weights)"},
	}
}
