package methods

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Names of the variational parameters of svgp.
const (
	QMuName   = "q_mu"
	QSqrtName = "q_sqrt"
)

func init() {
	Register(Method{
		Name:    "svgp",
		Summary: "stochastic variational GP with inducing points: uncollapsed ELBO, minibatches, Gaussian or probit likelihood",
		Paper:   "Hensman et al. (2013, 2015)",
		Tasks:   []Task{Regression, Classification},
		Params: concat(KernelParams(), NoiseParams(), InducingParams(100), NumericParams(), VariationalParams(), WarmStartParams(), []ParamDoc{
			{Name: "whiten", Kind: Bool, Default: true, Doc: "parametrise q over v with u = Lv, Kuu = LLᵀ"},
			{Name: "init_iterations", Kind: Int, Default: 0,
				Doc: "first optimise only q(u) and Z (when trained) for up to this many iterations, kernel and likelihood fixed, then everything (the Tiao et al. 2023 recipe, App. B.3: up to 100 L-BFGS steps); 0 skips it"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "auto: gaussian for regression, bernoulli (probit) for classification"},
		}),
		New: func(p Params) (Model, error) {
			if err := checkPositive("svgp", p, "variance", "noise_variance"); err != nil {
				return nil, err
			}
			if err := checkJitter("svgp", p); err != nil {
				return nil, err
			}
			if err := checkNatGradStep("svgp", p); err != nil {
				return nil, err
			}
			if err := checkWarmStart("svgp", p); err != nil {
				return nil, err
			}
			if v := p.Int("init_iterations"); v < 0 {
				return nil, fmt.Errorf("svgp: init_iterations must be ≥ 0, got %d", v)
			}
			return &svgpModel{p: p}, nil
		},
	})
}

type svgpModel struct {
	p    Params
	kern kernels.Kernel
	feat *features.InducingPoints
	lik  likelihoods.Likelihood
	set  *param.Set
	post *inference.Posterior
	dim  int
}

func (m *svgpModel) opts() inference.Options { return inference.Options{Jitter: m.p.Float("jitter")} }

func (m *svgpModel) q(b *param.Bound) inference.Variational {
	return Group{}.Variational(b, m.p.Bool("whiten"))
}

func (m *svgpModel) likelihood(task Task) (likelihoods.Likelihood, error) {
	name := m.p.String("likelihood")
	if name == "auto" {
		name = "gaussian"
		if task == Classification {
			name = "bernoulli"
		}
	}
	if name == "gaussian" {
		return likelihoods.NewGaussian(m.p.Float("noise_variance")), nil
	}
	return likelihoods.New(name)
}

// initQ sets q(u) to the prior: N(0, I) over v when whitened, N(0, Kuu)
// otherwise (q_sqrt = chol(Kuu + jitter·I)), so the KL term starts at zero.
func (m *svgpModel) initQ() error {
	if err := (Group{}).DeclareQ(m.set, m.kern, m.feat, m.p.Bool("whiten"), m.p.Float("jitter")); err != nil {
		return fmt.Errorf("svgp: %w", err)
	}
	return nil
}

func (m *svgpModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask("svgp", opt, Regression, Classification); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("svgp: %w", err)
	}
	n := train.N()
	if _, err := variationalSettings(opt, n, optim.Adam); err != nil {
		return FitResult{}, fmt.Errorf("svgp: %w", err)
	}
	batch := batchSize(opt, n)
	var err error
	if m.lik, err = m.likelihood(opt.Task); err != nil {
		return FitResult{}, fmt.Errorf("svgp: %w", err)
	}
	if m.lik.Name() == "bernoulli" {
		for i, y := range train.Y {
			if y != 1 && y != -1 {
				return FitResult{}, fmt.Errorf("svgp: bernoulli likelihood needs labels ±1; y[%d] = %v", i, y)
			}
		}
	}
	m.dim = train.D()
	m.kern, m.feat, m.set, err = setupSparse("svgp", m.p, train, opt, m.lik)
	if err != nil {
		return FitResult{}, err
	}
	if err := m.initQ(); err != nil {
		return FitResult{}, err
	}
	fit := variationalFit{method: "svgp", set: m.set, groups: []Group{{}}, defaultOptimizer: optim.Adam,
		objective: func(t *ad.Tape, b *param.Bound, bt Batch) (*ad.Node, error) {
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, bt.Y) }
			out, _, err := inference.SVGP(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(bt.X), ve, m.q(b), bt.N, m.opts())
			return out, err
		},
		initIterations: m.p.Int("init_iterations")}
	fit = fit.withWarmStart(m.p)
	for _, nm := range trainableNames(m.set) {
		if nm == QMuName || nm == QSqrtName || nm == InducingName {
			fit.initNames = append(fit.initNames, nm)
		}
	}
	rep, terr := fit.train(ctx, m.p, train, opt, start, progress)
	res := NewFitResult(rep, m.set, InducingName, QMuName, QSqrtName)
	res.Extra["num_inducing"] = float64(m.feat.Z.RawMatrix().Rows)
	if terr != nil && rep.Trace == nil {
		return res, trainErr("svgp", terr)
	}
	t := ad.NewTape()
	b := m.set.Bind(t)
	if m.post, err = inference.SVGPPosterior(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), m.q(b), m.opts()); err != nil {
		return res, fmt.Errorf("svgp: posterior: %w", err)
	}
	// A minibatch objective is noisy: report the full-data ELBO.
	if batch < n {
		if res.Objective, err = m.fullELBO(train); err != nil {
			return res, fmt.Errorf("svgp: %w", err)
		}
		res.Extra["last_minibatch_objective"] = rep.Objective
	}
	return res, trainErr("svgp", terr)
}

// fullELBO evaluates the ELBO on all of data without gradients. The
// marginals of q(f) are those of the posterior m.post (set first), so Kuu is
// factorised once for all the data; Posterior.Predict works in chunks, and
// memory stays O(N + M·PredictChunk).
func (m *svgpModel) fullELBO(data gp.Data) (float64, error) {
	return fullDataELBO(data, m.set, m.post, pointsBinder(m.set, m.kern, m.feat), m.lik, func(b *param.Bound) (*ad.Node, error) {
		return inference.KL(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), m.q(b), m.opts())
	})
}

func (m *svgpModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("svgp", m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := m.post.Predict(x, pointsBinder(m.set, m.kern, m.feat))
	if err != nil {
		return Prediction{}, fmt.Errorf("svgp: %w", err)
	}
	if m.lik.Name() == "gaussian" {
		return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
	}
	p, _ := m.lik.Predict(m.set, likelihoodPfx, mean, varf)
	return Prediction{Mean: mean, VarF: varf, ProbPositive: p}, nil
}

// inducingZ returns the current inducing inputs.
func (m *svgpModel) inducingZ() *mat.Dense { return m.set.Value(InducingName) }

// Artifact exports ArtifactVarianceTerms (1-D inputs; Var g and Var h
// around the inducing inputs, Fig. 1 of Tiao et al. 2023) and
// ArtifactInducingInputs.
func (m *svgpModel) Artifact(name string, train, _ gp.Data) (Artifact, error) {
	if m.post == nil {
		return Artifact{}, fmt.Errorf("svgp: artifact %q before Fit", name)
	}
	switch name {
	case ArtifactVarianceTerms:
		return varianceTermsArtifact("svgp", train, singleBlock(func(t *ad.Tape) (kernels.Bound, inference.Block) {
			b := m.set.Bind(t)
			return m.kern.Bind(b, KernelPrefix), inference.Block{Feature: m.feat.Bind(b, inducingPfx), Q: m.q(b)}
		}), m.opts())
	case ArtifactInducingInputs:
		return inducingInputsArtifact(m.set.Value(InducingName))
	}
	return Artifact{}, unknownArtifact("svgp", name, ArtifactVarianceTerms, ArtifactInducingInputs)
}
