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

// vish is Dutordoir, Durrande & Hensman (2020): inducing variables are the
// RKHS projections of f = ρ(x) g(x̂) onto the spherical harmonics of
// complete levels 0…max_level on the sphere of the bias-augmented inputs.
// Kuu = diag(1/λ_ℓ) is never factorised. The collapsed objective with
// fixed weight and bias variances computes ΦΦᵀ, Φy, yᵀy and Σρ² once in
// O(NM²) (chunked, both cores) and every step is O(M³); with them trained
// it is the O(NM²) SGPR bound per step. The svgp objective is the
// (whitened) uncollapsed ELBO with a full S, minibatches and a Gaussian or
// probit likelihood. Predictions are in input space: the harmonics'
// cross-covariances carry ρ(x), so the mean is ρ·μ_g and the variance ρ²·σ²_g.
func init() {
	Register(Method{
		Name:    "vish",
		Summary: "variational inducing spherical harmonics: diagonal Kuu; collapsed from ΦΦᵀ precomputed once (O(M³) per step), or SVGP (Gaussian or probit)",
		Paper:   "Dutordoir, Durrande & Hensman (2020)",
		Tasks:   []Task{Regression, Classification},
		Params: concat(zonalKernelParams("sphere-matern32"), NoiseParams(), VariationalParams(), WarmStartParams(), []ParamDoc{
			{Name: "max_level", Kind: Int, Default: 3, Doc: "harmonics of the complete levels 0…max_level (levels whose kernel coefficient vanishes are dropped): M = Σ N(d,ℓ), e.g. 210 for d = 9 and max_level 3, 660 for 4"},
			{Name: "objective", Kind: String, Default: "collapsed", Choices: []string{"collapsed", "svgp"},
				Doc: "collapsed: Titsias bound (regression; O(M³) per step after one O(NM²) pass when the weights are fixed); svgp: uncollapsed ELBO with q(u) = N(m, S), S full, minibatches with batch_size"},
			{Name: "train_weights", Kind: Bool, Default: false,
				Doc: "train the weight and bias variances (the input scaling; then the harmonics move and each collapsed step costs O(NM²)); false fixes them at their initial values"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "svgp: auto = gaussian for regression, bernoulli (probit, labels ±1) for classification"},
			{Name: "whiten", Kind: Bool, Default: true, Doc: "svgp: q over v with u = Lv, L = diag(1/√λ_ℓ), q(v) = N(0, I) at the start (better conditioned: the λ_ℓ span orders of magnitude; our deviation); false: q over u, starting at the prior N(0, Λ⁻¹) (the authors' parameterisation)"},
		}),
		New: func(p Params) (Model, error) {
			if err := checkPositive("vish", p, "variance", "noise_variance", "bias_variance"); err != nil {
				return nil, err
			}
			if err := checkNatGradStep("vish", p); err != nil {
				return nil, err
			}
			if p.Has("natgrad_step") && p.String("objective") != "svgp" {
				return nil, fmt.Errorf("vish: natgrad_step trains q(u) of the svgp objective; the collapsed objective has no q(u) (set objective = \"svgp\")")
			}
			if err := checkWarmStart("vish", p); err != nil {
				return nil, err
			}
			if p.Int("warm_start_iterations") > 0 && p.String("objective") == "collapsed" {
				return nil, fmt.Errorf("vish: warm_start_iterations needs objective = \"svgp\" (the collapsed bound is trained by one L-BFGS run on all rows)")
			}
			if l := p.Int("max_level"); l < 0 {
				return nil, fmt.Errorf("vish: max_level must be ≥ 0, got %d", l)
			}
			return &vishModel{p: p}, nil
		},
	})
}

type vishModel struct {
	p     Params
	kern  kernels.Kernel
	feat  *features.SphericalHarmonics
	lik   likelihoods.Likelihood
	set   *param.Set
	stats *collapsedStats
	post  *inference.Posterior
	dim   int
	train gp.Data
}

const vishKernelPfx = KernelPrefix

func (m *vishModel) bind(t *ad.Tape) (kernels.ZonalBound, features.Bound, *param.Bound) {
	b := m.set.Bind(t)
	kb := m.kern.Bind(b, vishKernelPfx).(kernels.ZonalBound)
	return kb, m.feat.Bind(b, ""), b
}

func (m *vishModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	collapsed := m.p.String("objective") == "collapsed"
	tasks := []Task{Regression, Classification}
	if collapsed {
		tasks = tasks[:1]
	}
	if err := checkTask("vish", opt, tasks...); err != nil {
		return FitResult{}, fmt.Errorf("%w; classification needs objective = svgp", err)
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
	if collapsed && batchSize(opt, train.N()) < train.N() {
		return FitResult{}, fmt.Errorf("vish: the collapsed objective is full-batch; batch_size %d needs objective = svgp", opt.BatchSize)
	}
	var err error
	m.dim, m.train = train.D(), train
	if m.kern, err = newZonalKernel("vish", m.p, m.dim); err != nil {
		return FitResult{}, err
	}
	m.set = param.NewSet()
	if err := m.kern.Declare(m.set, vishKernelPfx); err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
	if collapsed {
		m.lik = likelihoods.NewGaussian(m.p.Float("noise_variance"))
	} else if m.lik, err = zonalLikelihood("vish", m.p.String("likelihood"), opt.Task, m.p.Float("noise_variance"), train.Y); err != nil {
		return FitResult{}, err
	}
	if err := m.lik.Declare(m.set, likelihoodPfx); err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
	if !m.p.Bool("train_weights") {
		m.set.SetTrainable(false, vishKernelPfx+"weight_variances", vishKernelPfx+"bias_variance")
	}
	kb0, _, _ := m.bind0()
	if m.feat, err = features.NewSphericalHarmonicsFor(kb0, m.p.Int("max_level")); err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
	var res FitResult
	var terr error
	switch {
	case collapsed && !m.p.Bool("train_weights"):
		// The O(NM²) precompute, once (features fixed with the weights);
		// every step is O(M³) (the shared collapsed recipe).
		m.stats = &collapsedStats{kern: m.kern, feat: m.feat, set: m.set}
		if err := m.stats.precompute(train, m.feat.M(), func(x *mat.Dense) (*mat.Dense, error) { return m.feat.Phi(kb0, x) }); err != nil {
			return FitResult{}, fmt.Errorf("vish: %w", err)
		}
		res, terr = m.stats.fit(ctx, opt, start, time.Since(start).Seconds(), progress)
	case collapsed:
		// Trained weights move the harmonics: the O(NM²) bound every step.
		st, err := Settings(opt, optim.LBFGS)
		if err != nil {
			return FitResult{}, fmt.Errorf("vish: %w", err)
		}
		x := mat.DenseCopyOf(train.X)
		rep, err := Train(ctx, m.set, func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
			out, _, err := inference.SGPR(m.kern.Bind(b, vishKernelPfx), m.feat.Bind(b, ""), t.Const(x), train.Y, b.Get(noiseName), inference.Options{})
			return out, err
		}, st, st.Method, start, progress)
		res, terr = NewFitResult(rep, m.set), err
	default:
		res, terr = m.fitSVGP(ctx, train, opt, start, progress)
	}
	res.Extra["num_features"] = float64(m.feat.M())
	res.Extra["sphere_dim"] = float64(kb0.SphereDim())
	if terr != nil && len(res.Trace) == 0 {
		return res, trainErr("vish", terr)
	}
	if err := m.condition(); err != nil {
		return res, fmt.Errorf("vish: posterior: %w", err)
	}
	if !collapsed && batchSize(opt, train.N()) < train.N() {
		full, err := fullDataELBO(train, m.set, m.post, m.binder(), m.lik, func(b *param.Bound) (*ad.Node, error) {
			return inference.KL(m.kern.Bind(b, vishKernelPfx), m.feat.Bind(b, ""), m.q(b), inference.Options{})
		})
		if err != nil {
			return res, fmt.Errorf("vish: full-data ELBO: %w", err)
		}
		res.Extra["last_minibatch_objective"] = res.Objective
		res.Objective = full
	}
	return res, trainErr("vish", terr)
}

func (m *vishModel) bind0() (kernels.ZonalBound, *param.Bound, *ad.Tape) {
	t := ad.NewTape()
	b := m.set.Bind(t)
	return m.kern.Bind(b, vishKernelPfx).(kernels.ZonalBound), b, t
}

// fitSVGP trains the uncollapsed ELBO with the shared variational recipe:
// q(u) at the prior (N(0, I) over v whitened, N(0, Λ⁻¹) over u otherwise),
// minibatches, L-BFGS or Adam, or natural gradients (natgrad_step). On the
// whole training set with fixed weights Kuf is evaluated once.
func (m *vishModel) fitSVGP(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (FitResult, error) {
	if err := (Group{}).DeclareQ(m.set, m.kern, m.feat, m.p.Bool("whiten"), 0); err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
	var phiAll *mat.Dense
	if batchSize(opt, train.N()) == train.N() && !m.p.Bool("train_weights") {
		kb, _, _ := m.bind0()
		var err error
		if phiAll, err = m.feat.Phi(kb, train.X); err != nil {
			return FitResult{}, fmt.Errorf("vish: %w", err)
		}
	}
	fit := variationalFit{method: "vish", set: m.set, groups: []Group{{}}, defaultOptimizer: optim.LBFGS,
		objective: func(t *ad.Tape, b *param.Bound, batch Batch) (*ad.Node, error) {
			var fb features.Bound = m.feat.Bind(b, "")
			if batch.Full && phiAll != nil {
				fb = fixedKuf{Bound: fb, phi: phiAll}
			}
			ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, batch.Y) }
			out, _, err := inference.SVGP(m.kern.Bind(b, vishKernelPfx), fb, t.Const(batch.X), ve, m.q(b), batch.N, inference.Options{})
			return out, err
		}}
	rep, err := fit.withWarmStart(m.p).train(ctx, m.p, train, opt, start, progress)
	return NewFitResult(rep, m.set, QMuName, QSqrtName), err
}

func (m *vishModel) q(b *param.Bound) inference.Variational {
	return inference.Variational{Mu: b.Get(QMuName), Sqrt: b.Get(QSqrtName), Whiten: m.p.Bool("whiten")}
}

func (m *vishModel) binder() inference.Binder {
	return func(t *ad.Tape) (kernels.Bound, features.Bound) {
		kb, fb, _ := m.bind(t)
		return kb, fb
	}
}

// condition stores the predictive posterior at the current parameters.
func (m *vishModel) condition() error {
	t := ad.NewTape()
	kb, fb, b := m.bind(t)
	var err error
	switch {
	case m.stats != nil:
		m.post, err = m.stats.posterior()
	case m.set.Has(QMuName):
		m.post, err = inference.SVGPPosterior(kb, fb, m.q(b), inference.Options{})
	default:
		// Collapsed with trained weights: Titsias' posterior at the final
		// weights (one more O(NM²) pass).
		m.post, _, err = inference.SGPRPosterior(kb, fb, t.Const(m.train.X), m.train.Y, b.Get(noiseName), inference.Options{})
	}
	return err
}

func (m *vishModel) Predict(x *mat.Dense) (Prediction, error) {
	return variationalPredict("vish", m.post, m.binder(), m.set, m.lik, m.dim, x)
}
