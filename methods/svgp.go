package methods

import (
	"sgplab/gp/optim"
)

// Names of the variational parameters of a single-block model.
const (
	QMuName   = "q_mu"
	QSqrtName = "q_sqrt"
)

// svgp is the uncollapsed ELBO with inducing points (Hensman et al. 2013,
// 2015): q(u) at the prior, minibatches, a Gaussian or probit likelihood.
var svgpDecl = &sparseDecl{
	name: "svgp", tasks: []Task{Regression, Classification},
	kernel:    standardKernel,
	blocks:    []blockDecl{{feature: builder("points"), size: "num_inducing", stream: 1}},
	objective: always(elbo), optimizer: optim.Adam,
	qPrior: true, initPhase: true,
}

func init() {
	Register(svgpDecl.method(Method{
		Summary: "stochastic variational GP with inducing points: uncollapsed ELBO, minibatches, Gaussian or probit likelihood",
		Paper:   "Hensman et al. (2013, 2015)",
		Params: concat(KernelParams(), NoiseParams(), InducingParams(100), NumericParams(), VariationalParams(), []ParamDoc{
			{Name: "whiten", Kind: Bool, Default: true, Doc: "parametrise q over v with u = Lv, Kuu = LLᵀ"},
			{Name: "q_init", Kind: String, Choices: []string{"prior", "identity"},
				Doc: "where q starts: prior (unset: the prior, N(0, Kuu) over u, N(0, I) over v when whitened, so the KL starts at zero) or identity (m = 0, C = I in the parameterisation used: GPflow's SVGP default, the Tiao et al. 2023 App. B.3 and the VISH authors' baselines; unwhitened, the KL starts at tr(Kuu⁻¹)/2 + …)"},
			{Name: "init_iterations", Kind: Int, Default: 0, Range: NonNegative,
				Doc: "first optimise only q(u) and Z (when trained) for up to this many iterations, kernel and likelihood fixed, then everything (the Tiao et al. 2023 recipe, App. B.3: up to 100 L-BFGS steps); 0 skips it"},
			likelihoodParam(),
		}),
	}))
}

// likelihoodParam documents the likelihood choice of the ELBO methods.
func likelihoodParam() ParamDoc {
	return ParamDoc{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
		Doc: "auto: gaussian for regression, bernoulli (probit, labels ±1) for classification"}
}
