package methods

import (
	"fmt"

	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Orthogonally decoupled methods (ODVGP, ODVFF, SOLVE-GP,
// spherical-orthogonal) are sparse models of two blocks: a base set u with
// q(u) = N(m, C), an orthogonal set v with q(v') on v' = v − Kvu Kuu⁻¹ u
// (full Gaussian, or mean-only for ODVGP/ODVFF), and the two-block ELBO of
// inference.BlockELBO built from the sets' Kuu (with structure), Kuf and
// Kvu = features.Kuv. Both q's start at N(0, I) (or a_γ = 0): the papers'
// m = 0, C = I (Tiao et al. App. B.3; Salimbeni's ODVGP code).
//
// In the ODVGP/ODVFF papers' notation, the base set is β (mean and
// covariance basis) and the orthogonal set is γ (mean-only basis); their
// parameters are named by the blocks, e.g. beta.q_mu, gamma.inducing.z,
// u.q_sqrt. A mean-only set's q_mu holds the weights a_γ (m_v' = S_vv a_γ),
// as the ODVGP code does.

// decoupledDecl declares a two-block method: the base and orthogonal
// blocks' names, builders and sizes, the mean-only orthogonal q of
// ODVGP/ODVFF, and L-BFGS with the initialisation phase (the
// spherical-orthogonal recipe, also with Adam: spec §6.11) or Adam.
func decoupledDecl(name string, kernel kernelBuilder, base, orth blockDecl, meanOnly, lbfgs bool) *sparseDecl {
	base.size, orth.size, orth.sizeFallback = "num_inducing", "num_orthogonal", "num_inducing"
	base.stream, orth.stream = 4, 5 // the activation units' directions
	orth.meanOnly = meanOnly
	d := &sparseDecl{
		name: name, tasks: []Task{Regression, Classification},
		kernel: kernel, blocks: []blockDecl{base, orth},
		objective: always(elbo), optimizer: optim.Adam,
	}
	if lbfgs {
		d.optimizer, d.initPhase = optim.LBFGS, true
	}
	return d
}

var (
	beta, gamma = Block{Name: "beta"}, Block{Name: "gamma"}
	uBlock      = Block{Name: "u"}
	vBlock      = Block{Name: "v"}
)

func init() {
	// The orthogonal set's size: as many as the base set (an even split of
	// M = num_inducing + num_orthogonal), or 100 where the base is not
	// sized by num_inducing.
	orthogonal := func(def any, doc string) ParamDoc {
		return ParamDoc{Name: "num_orthogonal", Kind: Int, Default: def, Range: Count, Doc: "number of orthogonal inducing inputs K (the mean basis γ of ODVGP/ODVFF); " + doc}
	}
	evenSplit := orthogonal(nil, "unset: num_inducing, so that a sweep of num_inducing sweeps M = 2·num_inducing, split evenly")
	hundred := orthogonal(100, "M = the base set's size + K")
	common := func(orth ParamDoc) []ParamDoc {
		return concat(NoiseParams(), NumericParams(), VariationalParams(), []ParamDoc{
			orth,
			{Name: "inducing_init", Kind: String, Default: "kmeans", Choices: []string{"kmeans", "random"},
				Doc: "initial inducing inputs: k-means centres of the training inputs (one run with M + K centres split base-first, as the SOLVE-GP code does) or a random subset"},
			{Name: "train_inducing", Kind: Bool, Default: true, Doc: "optimise the inducing inputs with the hyperparameters"},
			{Name: "whiten", Kind: Bool, Default: true, Doc: "parametrise q(u) (and a full q(v')) over whitened variables (u = L w, Kuu = LLᵀ; v' = R w, S_vv = RRᵀ); the papers' own runs are unwhitened, which converges far more slowly (on banana with 300 Adam steps test NLPD 0.20–0.26 whitened against 0.29–0.57)"},
			likelihoodParam(),
			{Name: "init_iterations", Kind: Int, Default: 100, Range: NonNegative,
				Doc: "solvegp and spherical-orthogonal (the Tiao et al. 2023 recipe, App. B.3): first optimise only q and the inducing inputs / unit directions for up to this many iterations, kernel and likelihood fixed, then everything; 0 skips it (odvgp/odvff ignore it)"},
		})
	}
	pointsBase := []ParamDoc{{Name: "num_inducing", Kind: Int, Default: 100, Range: Count, Doc: "number of base inducing inputs M (the mean-and-covariance basis β of ODVGP)"}}
	points := func(b Block) blockDecl { return blockDecl{Block: b, feature: builder("points")} }
	Register(decoupledDecl("odvgp", standardKernel, points(beta), points(gamma), true, false).method(Method{
		Summary: "orthogonally decoupled variational GP: inducing points β (mean and covariance) and γ (mean only, orthogonal to β)",
		Paper:   "Salimbeni, Cheng, Boots & Deisenroth (2018)",
		Params:  concat(KernelParams(), pointsBase, common(evenSplit)),
	}))
	Register(decoupledDecl("solvegp", standardKernel, points(uBlock), points(vBlock), false, true).method(Method{
		Summary: "SOLVE-GP: inducing points u with q(u) and orthogonal inducing points v with a full q(v')",
		Paper:   "Shi, Titsias & Mnih (2020)",
		Params:  concat(KernelParams(), pointsBase, common(evenSplit)),
	}))
	sets := []string{"activation", "harmonics", "points"}
	Register(decoupledDecl("spherical-orthogonal", zonalKernel,
		blockDecl{Block: uBlock, feature: builderParam("base")}, blockDecl{Block: vBlock, feature: builderParam("orthogonal")}, false, true).method(Method{
		Summary: "orthogonally decoupled GP with spherical features: base set u and orthogonal set v each of activation units, spherical harmonics or inducing points " +
			"(default: activation base, inducing-point orthogonal set, the paper's proposal), one zonal kernel, full q(u) and q(v')",
		Paper: "Tiao, Dutordoir & Picheny (2023)",
		Params: concat(zonalKernelParams("arccos1"), []ParamDoc{trainLengthscaleParam()}, activationParams(128), []ParamDoc{
			{Name: "base", Kind: String, Default: "activation", Choices: sets,
				Doc: "base set u (App. A rows): activation units H_m, spherical harmonics Y_m, or inducing points k(z_m, ·)"},
			{Name: "orthogonal", Kind: String, Default: "points", Choices: sets,
				Doc: "orthogonal set v (App. A columns); the pair needs a cross-covariance Kvu: inducing points against anything (the feature evaluated at the points), or a pair the features define"},
			{Name: "max_level", Kind: Int, Default: 3, Range: NonNegative, Doc: "spherical harmonics: the complete levels 0…max_level (levels with a zero kernel coefficient dropped)"},
			{Name: "train_weights", Kind: Bool, Default: true, Doc: "optimise the kernel's weight and bias variances"},
		}, common(hundred)),
		Check: func(p Params) error {
			if p.String("base") == "harmonics" && p.String("orthogonal") == "harmonics" {
				return paramErr("orthogonal", fmt.Errorf("base = orthogonal = harmonics (App. A.2.2) has Kvu = Kuu, so S_vv = 0 and the model collapses to SVGP with harmonics (method vish); choose another orthogonal set"))
			}
			return nil
		},
	}))
	var vffDocs []ParamDoc
	for _, d := range intervalParams("matern52", "additive", vffMargin, []ParamDoc{{Name: "frequencies", Kind: Int, Default: 51, Range: Count,
		Doc: "frequencies per dimension including 0: |β| = 2·frequencies − 1 features per dimension (the paper's |β| = 100 → 51)"},
		{Name: "beta", Kind: String, Default: "vff", Choices: []string{"vff", "hybrid"},
			Doc: "vff: Fourier features of the Matérn kernel per dimension; hybrid (1-D, App. C): kernel + periodic, with Fourier features of the Matérn part and periodic_inducing inducing points of the periodic part"},
		{Name: "periodic_inducing", Kind: Int, Default: 20, Range: Count, Doc: "hybrid: inducing points of the periodic component (half of |β| in App. C)"},
		{Name: "period", Kind: Float, Default: 0.5, Range: Positive, Doc: "hybrid: initial period of the periodic component"},
		{Name: "periodic_variance", Kind: Float, Default: 1.0, Range: Positive, Doc: "hybrid: initial variance of the periodic component"},
		{Name: "periodic_lengthscale", Kind: Float, Default: 0.2, Range: Positive, Doc: "hybrid: initial lengthscale of the periodic component"}}) {
		switch d.Name {
		case "objective", "whiten", "noise_variance", "natgrad_step", "warm_start_iterations", "warm_start_points":
			continue
		}
		vffDocs = append(vffDocs, d)
	}
	odvffBeta := func(p Params) string {
		if p.String("beta") == "hybrid" {
			return "vff+periodic"
		}
		return "vff"
	}
	odvff := decoupledDecl("odvff", odvffKernel, blockDecl{Block: beta, feature: odvffBeta}, points(gamma), true, false)
	odvff.extrapolate = true
	odvff.size = frequenciesRule // Φ(Z_γ) beyond the box by the edge formulas, and test inputs too
	Register(odvff.method(Method{
		KernelName: func(p Params) string {
			if p.String("beta") == "hybrid" {
				return "sum(" + p.String("kernel") + ",periodic)"
			}
			return p.String("kernel")
		},
		Summary: "orthogonally decoupled variational Fourier features: VFF β (mean and covariance) and inducing points γ (mean only)",
		Paper:   "Azzimonti, Schürch, Benavoli & Zaffalon (2020)",
		Params:  concat(vffDocs, []ParamDoc{sizeParam(odvff.size, "D·(2f − 1) of β, plus periodic_inducing with beta = \"hybrid\"; the orthogonal set γ adds num_orthogonal")}, common(hundred)),
		Check: func(p Params) error {
			if p.Bool("mask") && p.String("structure") == "additive" {
				return paramErr("mask", fmt.Errorf("the frequency mask applies to the Kronecker structure only"))
			}
			return nil
		},
	}))
}

// odvffKernel is the interval kernel of VFF β, plus a periodic component
// for the hybrid β of App. C (k = k_S + k_P, 1-D).
func odvffKernel(p Params, dim int, s *param.Set) (kernels.Kernel, error) {
	if p.String("beta") != "hybrid" {
		return intervalKernel(p, dim, s)
	}
	if dim != 1 {
		return nil, paramErr("beta", fmt.Errorf("hybrid is the 1-D basis of App. C; inputs have %d dimensions (use beta = vff)", dim))
	}
	k, err := newIntervalKernel(p, dim)
	if err != nil {
		return nil, err
	}
	per, err := kernels.New("periodic", 1, kernels.Options{Variance: p.Float("periodic_variance"),
		Lengthscales: []float64{p.Float("periodic_lengthscale")}, Period: p.Float("period")})
	if err != nil {
		return nil, err
	}
	sum, err := kernels.Sum(k, per)
	if err != nil {
		return nil, err
	}
	return sum, sum.Declare(s, KernelPrefix)
}
