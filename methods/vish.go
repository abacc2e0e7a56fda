package methods

import (
	"context"
	"fmt"
	"math"
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
		Params: concat(zonalKernelParams("sphere-matern32"), NoiseParams(), []ParamDoc{
			{Name: "max_level", Kind: Int, Default: 3, Doc: "harmonics of the complete levels 0…max_level (levels whose kernel coefficient vanishes are dropped): M = Σ N(d,ℓ), e.g. 210 for d = 9 and max_level 3, 660 for 4"},
			{Name: "objective", Kind: String, Default: "collapsed", Choices: []string{"collapsed", "svgp"},
				Doc: "collapsed: Titsias bound (regression; O(M³) per step after one O(NM²) pass when the weights are fixed); svgp: uncollapsed ELBO with q(u) = N(m, S), S full, minibatches with batch_size"},
			{Name: "train_weights", Kind: Bool, Default: false,
				Doc: "train the weight and bias variances (the input scaling; then the harmonics move and each collapsed step costs O(NM²)); false fixes them at their initial values"},
			{Name: "likelihood", Kind: String, Default: "auto", Choices: []string{"auto", "gaussian", "bernoulli"},
				Doc: "svgp: auto = gaussian for regression, bernoulli (probit, labels ±1) for classification"},
			{Name: "whiten", Kind: Bool, Default: true, Doc: "svgp: q over v = Λ^{−1/2}u·… with u = Lv, L = diag(1/√λ) (better conditioned: λ spans orders of magnitude); false: q over u (the authors' parameterisation)"},
		}),
		New: func(p Params) (Model, error) {
			if err := checkPositive("vish", p, "variance", "noise_variance", "bias_variance"); err != nil {
				return nil, err
			}
			if l := p.Int("max_level"); l < 0 {
				return nil, fmt.Errorf("vish: max_level must be ≥ 0, got %d", l)
			}
			return &vishModel{p: p}, nil
		},
	})
}

type vishModel struct {
	p      Params
	kern   kernels.Kernel
	feat   *features.SphericalHarmonics
	lik    likelihoods.Likelihood
	set    *param.Set
	stats  *inference.Stats
	sumR2p float64 // Σ ρ^{2p} at the fixed weights
	post   *inference.Posterior
	dim    int
	train  gp.Data
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
	defaultOpt := optim.LBFGS
	if !collapsed && opt.BatchSize > 0 && opt.BatchSize < train.N() {
		defaultOpt = optim.Adam
	}
	st, err := Settings(opt, defaultOpt)
	if err != nil {
		return FitResult{}, fmt.Errorf("vish: %w", err)
	}
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
	extra := map[string]float64{"num_features": float64(m.feat.M()), "sphere_dim": float64(kb0.SphereDim())}

	var obj func(*ad.Tape, *param.Bound) (*ad.Node, error)
	phases := []optim.Phase{{Name: st.Method, Trainable: trainableNames(m.set), Settings: st}}
	switch {
	case collapsed && !m.p.Bool("train_weights"):
		if opt.BatchSize > 0 && opt.BatchSize < train.N() {
			return FitResult{}, fmt.Errorf("vish: the collapsed objective is full-batch; batch_size %d needs objective = svgp", opt.BatchSize)
		}
		// The O(NM²) precompute, once; every step below is O(M³).
		if m.stats, err = inference.ComputeStats(train.X, train.Y, m.feat.M(), func(x *mat.Dense) (*mat.Dense, error) { return m.feat.Phi(kb0, x) }); err != nil {
			return FitResult{}, fmt.Errorf("vish: %w", err)
		}
		// Σ k(x_n, x_n) = s(1)·Σρ^{2p}: the sum is fixed with the weights.
		m.sumR2p = kernels.DiagSum(ad.NewTape(), kb0, train.X).Scalar() / kb0.ShapeAtOne().Scalar()
		extra["precompute_seconds"] = time.Since(start).Seconds()
		obj = m.collapsedFromStats
	case collapsed:
		x := mat.DenseCopyOf(train.X)
		obj = func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
			kb := m.kern.Bind(b, vishKernelPfx)
			out, _, err := inference.SGPR(kb, m.feat.Bind(b, ""), t.Const(x), train.Y, b.Get(noiseName), inference.Options{})
			return out, err
		}
	default:
		if obj, err = m.svgpSetup(train, opt, st); err != nil {
			return FitResult{}, err
		}
		phases[0].Trainable = trainableNames(m.set)
	}
	offset := time.Since(start)
	rep, terr := optim.Train(ctx, m.set, obj, phases, func(p optim.Progress) {
		if progress != nil {
			progress(Progress{Phase: p.Phase, Iteration: p.Iteration, Objective: p.Objective, Elapsed: time.Since(start)})
		}
	})
	res := NewFitResult(rep, m.set, QMuName, QSqrtName)
	for k, v := range extra {
		res.Extra[k] = v
	}
	for i := range res.Trace {
		res.Trace[i].Elapsed += offset.Seconds()
	}
	if terr != nil && rep.Trace == nil {
		return res, trainErr("vish", terr)
	}
	if err := m.condition(); err != nil {
		return res, fmt.Errorf("vish: posterior: %w", err)
	}
	if !collapsed && opt.BatchSize > 0 && opt.BatchSize < train.N() {
		full, err := m.fullELBO(train)
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

// collapsedFromStats is the Titsias bound from ΦΦᵀ, Φy, yᵀy with the
// diagonal precision Kuu⁻¹ = Λ and the trace term s(1)Σρ²:
//
//	ELBO = −(N/2)log 2πσ² − ½Σ log(1/λ) … (inference.CollapsedFromStats),
//	tr(Kff − Qff)/(2σ²) = [s(1)Σ_n ρ_n² − tr(ΛΦΦᵀ)]/(2σ²).
func (m *vishModel) collapsedFromStats(_ *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.kern.Bind(b, vishKernelPfx).(kernels.ZonalBound)
	kuu, err := features.StructureOf(kb, m.feat.Bind(b, ""), 0, features.AllForms)
	if err != nil {
		return nil, err
	}
	kd := ad.Scale(m.sumR2p, kb.ShapeAtOne())
	out, _, err := inference.CollapsedFromStats(m.stats, kuu, kd, b.Get(noiseName), inference.Options{})
	return out, err
}

// svgpSetup declares q(u) at the prior (m = 0, S = I over v when whitened,
// S = Kuu = Λ⁻¹ over u otherwise) and returns the minibatch ELBO.
func (m *vishModel) svgpSetup(train gp.Data, opt FitOptions, st optim.Settings) (func(*ad.Tape, *param.Bound) (*ad.Node, error), error) {
	if err := (Group{}).DeclareQ(m.set, m.kern, m.feat, m.p.Bool("whiten"), 0); err != nil {
		return nil, fmt.Errorf("vish: %w", err)
	}
	n := train.N()
	batch := opt.BatchSize
	if batch <= 0 || batch > n {
		batch = n
	}
	if st.Method == optim.LBFGS && batch < n {
		return nil, fmt.Errorf("vish: L-BFGS needs full-batch gradients; got batch size %d of %d (use adam)", batch, n)
	}
	bt := &batcher{data: train, size: batch, rng: fitRNG(opt, 2)}
	// Full batch with fixed weights: Kuf is fixed, evaluate it once.
	var phiAll *mat.Dense
	if batch == n && !m.p.Bool("train_weights") {
		kb, _, _ := m.bind0()
		var err error
		if phiAll, err = m.feat.Phi(kb, train.X); err != nil {
			return nil, fmt.Errorf("vish: %w", err)
		}
	}
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		x, y := bt.next()
		kb := m.kern.Bind(b, vishKernelPfx)
		var fb features.Bound = m.feat.Bind(b, "")
		if phiAll != nil {
			fb = fixedKuf{Bound: fb, phi: phiAll}
		}
		ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, y) }
		out, _, err := inference.SVGP(kb, fb, t.Const(x), ve, m.q(b), n, inference.Options{})
		return out, err
	}, nil
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
		var kuu features.KuuStructure
		if kuu, err = features.StructureOf(kb, fb, 0, features.AllForms); err != nil {
			return err
		}
		m.post, err = inference.StatsPosterior(m.stats, kuu, b.Get(noiseName), inference.Options{})
	case m.set.Has(QMuName):
		m.post, err = inference.SVGPPosterior(kb, fb, m.q(b), inference.Options{})
	default:
		// Collapsed with trained weights: Titsias' posterior at the final
		// weights (one more O(NM²) pass).
		m.post, _, err = inference.SGPRPosterior(kb, fb, t.Const(m.train.X), m.train.Y, b.Get(noiseName), inference.Options{})
	}
	return err
}

func (m *vishModel) fullELBO(data gp.Data) (float64, error) {
	return posteriorELBO(m.post, m.binder(), m.set, m.lik, data, func(b *param.Bound) (*ad.Node, error) {
		return inference.KL(m.kern.Bind(b, vishKernelPfx), m.feat.Bind(b, ""), m.q(b), inference.Options{})
	})
}

func (m *vishModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("vish", m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := m.post.Predict(x, m.binder())
	if err != nil {
		return Prediction{}, fmt.Errorf("vish: %w", err)
	}
	for i, v := range varf {
		varf[i] = math.Max(v, 0)
	}
	if m.lik.Name() == "gaussian" {
		return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
	}
	p, _ := m.lik.Predict(m.set, likelihoodPfx, mean, varf)
	return Prediction{Mean: mean, VarF: varf, ProbPositive: p}, nil
}
