package methods

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inducing"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
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
func init() {
	Register(Method{
		Name:    "activated-svgp",
		Summary: "SVGP with spherical ReLU/softplus activation inducing features (a one-hidden-layer network mean); L-BFGS with an initialisation phase, or Adam on minibatches",
		Paper:   "Dutordoir et al. (2021); Tiao, Dutordoir & Picheny (2023)",
		Tasks:   []Task{Regression, Classification},
		Params: concat(zonalKernelParams("arccos1"), NoiseParams(), NumericParams(), VariationalParams(), []ParamDoc{
			{Name: "activation", Kind: String, Default: "softplus", Choices: features.Activations(),
				Doc: "σ of the units H_m(x) = ρ(x)σ(ẑ_mᵀx̂); relu has an infinite RKHS norm, so Kuu grows without bound with activation_levels (reported as metric relu_rkhs_divergent = 1); softplus converges"},
			{Name: "num_inducing", Kind: Int, Default: 128, Doc: "number of units M"},
			{Name: "activation_levels", Kind: Int, Default: 6, Doc: "truncation L: the units and Kuu use the Funk–Hecke levels 0…L−1 whose kernel coefficient is non-zero (the paper's L = 6; L = 8 and 16 on Snelson)"},
			{Name: "directions_init", Kind: String, Default: "data", Choices: []string{"data", "random"},
				Doc: "initial directions z_m: the augmented inputs x̃ of M random training points, or N(0, I) draws (both seeded)"},
			{Name: "train_directions", Kind: Bool, Default: true, Doc: "optimise the directions z_m (the network's first-layer weights)"},
			{Name: "train_weights", Kind: Bool, Default: true, Doc: "optimise the kernel's weight and bias variances"},
			{Name: "init_iterations", Kind: Int, Default: 100, Doc: "iterations of the first phase (q(u) and the directions only, kernel and likelihood fixed; the paper's up to 100 L-BFGS steps); 0 skips it"},
			{Name: "whiten", Kind: Bool, Default: false, Doc: "parametrise q over v with u = Lv, L = chol(Kuu), q(v) = N(0, I) at the start (converges in far fewer steps); false (the paper, App. B.3): q(u) = N(0, I), whose KL starts of order M/jitter when M exceeds the rank of the truncated units (Kuu is then singular up to jitter), so expect steep early steps and many iterations"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "auto: gaussian for regression, bernoulli (probit, labels ±1) for classification"},
		}),
		New: func(p Params) (Model, error) {
			if err := checkPositive("activated-svgp", p, "variance", "noise_variance", "bias_variance"); err != nil {
				return nil, err
			}
			if err := checkJitter("activated-svgp", p); err != nil {
				return nil, err
			}
			if err := checkNatGradStep("activated-svgp", p); err != nil {
				return nil, err
			}
			if v := p.Int("num_inducing"); v < 1 {
				return nil, fmt.Errorf("activated-svgp: num_inducing must be ≥ 1, got %d", v)
			}
			if v := p.Int("activation_levels"); v < 1 {
				return nil, fmt.Errorf("activated-svgp: activation_levels must be ≥ 1, got %d", v)
			}
			if v := p.Int("init_iterations"); v < 0 {
				return nil, fmt.Errorf("activated-svgp: init_iterations must be ≥ 0, got %d", v)
			}
			return &activatedModel{p: p}, nil
		},
	})
}

type activatedModel struct {
	p    Params
	kern kernels.Kernel
	feat *features.Activation
	lik  likelihoods.Likelihood
	set  *param.Set
	post *inference.Posterior
	dim  int
}

// activatedDirections is the parameter name of the units' directions.
const activatedDirections = inducingPfx + "directions"

func (m *activatedModel) opts() inference.Options {
	return inference.Options{Jitter: m.p.Float("jitter")}
}

func (m *activatedModel) q(b *param.Bound) inference.Variational {
	return (Group{}).Variational(b, m.p.Bool("whiten"))
}

func (m *activatedModel) binder() inference.Binder {
	return func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx)
	}
}

// initialDirections returns M directions in the augmented space.
func (m *activatedModel) initialDirections(train gp.Data, opt FitOptions) (*mat.Dense, error) {
	kb := m.kern.Bind(m.set.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)
	return initialDirections(m.p.String("directions_init"), m.p.Int("num_inducing"), kb, train, fitRNG(opt, 1))
}

// initialDirections returns mm directions in the augmented space of kb:
// the augmented inputs x̃ of mm random training points (init "data"), or
// N(0, I) draws ("random"). The decoupled methods draw their activation
// sets with it too.
func initialDirections(init string, mm int, kb kernels.ZonalBound, train gp.Data, rng *rand.Rand) (*mat.Dense, error) {
	d := kb.SphereDim()
	if init == "random" {
		z := mat.NewDense(mm, d, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return z, nil
	}
	if mm > train.N() {
		return nil, fmt.Errorf("%d directions exceed the %d training points that directions_init = data draws from; use directions_init = random", mm, train.N())
	}
	idx, err := inducing.RandomIndices(train.X, mm, rng)
	if err != nil {
		return nil, err
	}
	return kb.AugmentValue(train.Subset(idx).X), nil
}

func (m *activatedModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask("activated-svgp", opt, Regression, Classification); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	n := train.N()
	if _, err := variationalSettings(opt, n, optim.LBFGS); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	var err error
	m.dim = train.D()
	if m.kern, err = newZonalKernel("activated-svgp", m.p, m.dim); err != nil {
		return FitResult{}, err
	}
	if m.lik, err = zonalLikelihood("activated-svgp", m.p.String("likelihood"), opt.Task, m.p.Float("noise_variance"), train.Y); err != nil {
		return FitResult{}, err
	}
	m.set = param.NewSet()
	if err := m.kern.Declare(m.set, KernelPrefix); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	if err := m.lik.Declare(m.set, likelihoodPfx); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	z, err := m.initialDirections(train, opt)
	if err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: directions: %w", err)
	}
	if m.feat, err = features.NewActivation(m.p.String("activation"), z, m.p.Int("activation_levels")); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	if err := m.feat.CheckKernel(m.kern.Bind(m.set.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	if err := m.feat.Declare(m.set, inducingPfx); err != nil {
		return FitResult{}, fmt.Errorf("activated-svgp: %w", err)
	}
	// q(u) = N(0, I) (App. B.3), whitened or not.
	mm := m.feat.M()
	if err := m.set.Add(QMuName, mat.NewDense(mm, 1, nil), param.Identity{}); err != nil {
		return FitResult{}, err
	}
	if err := m.set.Add(QSqrtName, identity(mm), param.Identity{}); err != nil {
		return FitResult{}, err
	}
	m.set.SetTrainable(m.p.Bool("train_directions"), activatedDirections)
	m.set.SetTrainable(m.p.Bool("train_weights"), KernelPrefix+"weight_variances", KernelPrefix+"bias_variance")

	fit := variationalFit{method: "activated-svgp", set: m.set, groups: []Group{{}}, defaultOptimizer: optim.LBFGS,
		objective: func(t *ad.Tape, b *param.Bound, batch Batch) (*ad.Node, error) {
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, batch.Y) }
			out, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(batch.X), ve, m.q(b), batch.N, m.opts())
			return out, err
		},
		// The paper's first phase: q(u) and the directions only.
		initNames:      []string{QMuName, QSqrtName},
		initIterations: m.p.Int("init_iterations"),
	}
	if m.set.Trainable(activatedDirections) {
		fit.initNames = append(fit.initNames, activatedDirections)
	}
	rep, terr := fit.train(ctx, m.p, train, opt, start, progress)
	res := NewFitResult(rep, m.set, activatedDirections, QMuName, QSqrtName)
	res.Extra["num_features"] = float64(mm)
	if m.feat.Warning() != "" {
		res.Extra["relu_rkhs_divergent"] = 1
	}
	if terr != nil && rep.Trace == nil {
		return res, trainErr("activated-svgp", terr)
	}
	pt := ad.NewTape()
	pb := m.set.Bind(pt)
	if m.post, err = inference.SVGPPosterior(m.kern.Bind(pb, KernelPrefix), m.feat.Bind(pb, inducingPfx), m.q(pb), m.opts()); err != nil {
		return res, fmt.Errorf("activated-svgp: posterior: %w", err)
	}
	if batchSize(opt, n) < n {
		full, err := fullDataELBO(train, m.set, m.post, m.binder(), m.lik, func(b *param.Bound) (*ad.Node, error) {
			return inference.KL(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), m.q(b), m.opts())
		})
		if err != nil {
			return res, fmt.Errorf("activated-svgp: full-data ELBO: %w", err)
		}
		res.Extra["last_minibatch_objective"] = res.Objective
		res.Objective = full
	}
	return res, trainErr("activated-svgp", terr)
}

func (m *activatedModel) Predict(x *mat.Dense) (Prediction, error) {
	return variationalPredict("activated-svgp", m.post, m.binder(), m.set, m.lik, m.dim, x)
}

// Artifact exports ArtifactVarianceTerms (1-D inputs): the SVGP terms of
// eq. (12) of Tiao et al. (2023) on a dense grid (Figs. 3–5).
func (m *activatedModel) Artifact(name string, train, _ gp.Data) (Artifact, error) {
	if m.post == nil {
		return Artifact{}, fmt.Errorf("activated-svgp: artifact %q before Fit", name)
	}
	if name != ArtifactVarianceTerms {
		return Artifact{}, unknownArtifact("activated-svgp", name, ArtifactVarianceTerms)
	}
	return varianceTermsArtifact("activated-svgp", train, singleBlock(func(t *ad.Tape) (kernels.Bound, inference.Block) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), inference.Block{Feature: m.feat.Bind(b, inducingPfx), Q: m.q(b)}
	}), m.opts())
}
