package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// VOF defaults (vof-spec §6 D13: the prior q(u) and unit hyperparameters).
const (
	vofDefaultLearningRate = 5e-4
	vofDefaultEvalSamples  = 200
)

// vofParams are the parameters shared by both VOF bases; kern holds the
// basis' kernel choices and both use the paper's initial noise variance 0.1.
func vofParams(kern KernelDefaults) []ParamDoc {
	kern.OneD = true
	return concat(KernelParamsFor(kern), NoiseParamsFor(0.1), []ParamDoc{
		{Name: "num_features", Kind: Int, Default: 31, Range: Count, Doc: "number of features M (odd for the trigonometric basis: M = 2J+1)"},
		{Name: "covariance", Kind: String, Default: "dense", Choices: []string{"dense", "diagonal"},
			Doc: "structure of S in q(u) = N(m, S): dense (S = LLᵀ) or diagonal (mean field)"},
		{Name: "train_hyper", Kind: Bool, Default: true, Doc: "train kernel variance, lengthscale and noise variance with q(u)"},
		{Name: "mc_samples", Kind: Int, Default: inference.DefaultVOFSamples, Range: Count,
			Doc: "T: points per stratified sample set (two sets: 2T samples for the mean, T² pairs for the variance)"},
		{Name: "eval_samples", Kind: Int, Default: vofDefaultEvalSamples, Range: NonNegative,
			Doc: "Monte-Carlo ELBO evaluations averaged for the reported elbo_mc after training (the paper used 5000)"},
		{Name: "eval_mc_samples", Kind: Int, Default: 0, Range: NonNegative,
			Doc: "T of each evaluation averaged into elbo_mc; 0 = mc_samples. The shifted grid of T points on [−a, a] aliases once the integrand's frequency max|x| exceeds πT/(2a), and one evaluation's spread then grows by orders of magnitude (TrigVOF, M = 71, T = 50: sd 2.4e4 nats against 4 at M = 41)"},
		{Name: "q_update", Kind: String, Default: "optimizer", Choices: []string{"optimizer", "optimal"},
			Doc: "how q(u) is trained: optimizer (jointly with the other parameters, as in the paper) or optimal (set to its closed-form optimum for the current kernel, noise and features before every step: a natural-gradient step of length 1 for the Gaussian likelihood; the optimiser then moves only the other parameters)"},
	})
}

func init() {
	Register(Method{
		Name:    "vof-hermite",
		Summary: "variational orthogonal features, Hermite basis (SE kernel): Kuu = I, closed-form Kuf, dense or diagonal S",
		Paper:   "Burt, Rasmussen & van der Wilk (2020)",
		Tasks:   []Task{Regression},
		Params: append(vofParams(KernelDefaults{Kernel: "se", Fixed: true}),
			ParamDoc{Name: "sigma_x", Kind: Float, Default: 0.0, Range: NonNegative,
				Doc: "initial σx of the matching eigenfunction input density (r² = ℓ√(σx² + ℓ²/4)); 0 = std of the training inputs"},
			ParamDoc{Name: "fix_sigma_x", Kind: Bool, Default: false, Doc: "keep σx at its initial value"},
			ParamDoc{Name: "estimator", Kind: String, Default: "exact", Choices: []string{"exact", "mc"},
				Doc: "ELBO used for training: exact (closed-form Kuf, O(NM²) dense / O(NM) diagonal) or mc (the stratified Monte-Carlo estimator; needs adam)"},
		),
		New:        func(p Params) (Model, error) { return newVOFModel(p, true) },
		Fit:        vofRecipe,
		FitDoc:     vofFitDoc,
		MaxDim:     1,
		Needs:      vofNeeds("vof-hermite"),
		KernelName: fixedKernel("se"),
	})
	Register(Method{
		Name:    "vof-trig",
		Summary: "variational orthogonal features, trigonometric basis on [−a, a]: Kuu = I, Monte-Carlo ELBO, dense or diagonal S",
		Paper:   "Burt, Rasmussen & van der Wilk (2020)",
		Tasks:   []Task{Regression},
		Params: append(vofParams(KernelDefaults{Choices: []string{"se", "matern12", "matern32", "matern52"},
			KernelDoc: "1-D stationary kernel"}),
			ParamDoc{Name: "a", Kind: Float, Default: 0.0, Range: NonNegative,
				Doc: "initial half-width a of the frequency interval; 0 = πJ / max|x| with J = (M−1)/2"},
			ParamDoc{Name: "fix_a", Kind: Bool, Default: false, Doc: "keep a at its initial value"},
			ParamDoc{Name: "estimator", Kind: String, Default: "mc", Choices: []string{"mc", "quadrature"},
				Doc: "ELBO used for training: mc (the paper's unbiased estimator; needs adam) or quadrature (deterministic Gauss–Legendre Kuf)"},
		),
		New:    func(p Params) (Model, error) { return newVOFModel(p, false) },
		Fit:    vofRecipe,
		FitDoc: vofFitDoc,
		MaxDim: 1,
		Needs:  vofNeeds("vof-trig"),
		Check: func(p Params) error {
			if m := p.Int("num_features"); m%2 == 0 {
				return paramErr("num_features", fmt.Errorf("must be odd (M = 2J+1: a constant, J cosines and J sines), got %d", m))
			}
			return nil
		},
	})
}

// vofRecipe is VOF's fit: L-BFGS on a deterministic objective, Adam at
// the paper's 5·10⁻⁴ on a stochastic one (the Monte-Carlo estimator or
// minibatches), and at that step whenever a grid names adam.
func vofRecipe(p Params, c FitCase) Recipe {
	if p.String("estimator") == "mc" || c.Minibatch {
		return Recipe{Optimizer: optim.Adam, LearningRate: vofDefaultLearningRate, Iterations: 5000, StopTol: DefaultStopTol}
	}
	return Recipe{Optimizer: optim.LBFGS, LearningRate: vofDefaultLearningRate, Iterations: 1000, StopTol: DefaultStopTol}
}

const vofFitDoc = "estimator = \"mc\" trains by Adam, a deterministic estimator by L-BFGS"

// QSqrtDiagName is the diagonal of S^½ for covariance = diagonal.
const QSqrtDiagName = "q_sqrt_diag"

// vofFeaturePrefix is the features' parameter prefix (the single block's).
var vofFeaturePrefix = Block{}.FeaturePrefix()

// vofNeeds is M = num_features of the builder's feature (odd for the
// trigonometric basis) and the memory of Kuf (M×N) and its Monte-Carlo
// counterpart.
func vofNeeds(feature string) func(p Params, s Shape) (Plan, error) {
	return func(p Params, s Shape) (Plan, error) {
		fb, err := Feature(feature)
		if err != nil {
			return Plan{}, err
		}
		m, err := fb.Count(CountContext{Params: p, Shape: s})
		if err != nil {
			return Plan{}, err
		}
		mm, n := float64(m), float64(s.N)
		plan := Plan{M: m, Memory: floatBytes(2*mm*n + 2*mm*mm), MemoryWhat: fmt.Sprintf("Kuf (M×N) and S (M×M) for M = %d features", m),
			Params: vofTrained(p, m)}
		if p.String("estimator") == "mc" {
			// T samples of u ~ q(u) (one M×M factor) each mapped through
			// Φ (N×M): T·N·M + M³, not the N·M² of a collapsed bound.
			b := n
			if s.Batch > 0 {
				b = min(b, float64(s.Batch))
			}
			plan.StepFlops = float64(p.Int("mc_samples"))*b*mm + mm*mm*mm
		}
		return plan, nil
	}
}

// vofTrained is about how many numbers a VOF fit trains (Plan.Params):
// q(u)'s mean and S^½ (M(M+1)/2 dense, M diagonal) unless q(u) is held at
// its optimum, the kernel variance, lengthscale and noise variance when
// train_hyper is set, and the feature's scale (a or σx) unless it is fixed.
func vofTrained(p Params, m int) int {
	n := 0
	if p.String("q_update") != "optimal" {
		n = m + m*(m+1)/2
		if p.String("covariance") == "diagonal" {
			n = 2 * m
		}
	}
	if p.Bool("train_hyper") {
		n += 3
	}
	for _, fixed := range []string{"fix_a", "fix_sigma_x"} {
		if p.Has(fixed) && !p.Bool(fixed) {
			n++
		}
	}
	return max(n, 1)
}

type vofModel struct {
	p       Params
	hermite bool
	name    string
	kern    kernels.Kernel
	feat    features.Feature
	set     *param.Set
	post    *inference.Posterior
	noise   float64
	m       int
}

func newVOFModel(p Params, hermite bool) (Model, error) {
	name := "vof-trig"
	if hermite {
		name = "vof-hermite"
	}
	return &vofModel{p: p, hermite: hermite, name: name, m: p.Int("num_features")}, nil
}

func (m *vofModel) errf(format string, a ...any) error {
	return fmt.Errorf(m.name+": "+format, a...)
}

func (m *vofModel) diagonal() bool { return m.p.String("covariance") == "diagonal" }

func (m *vofModel) monteCarlo() bool { return m.p.String("estimator") == "mc" }

// trainSamples is T of the training objective: 0 for a deterministic one.
func (m *vofModel) trainSamples() int {
	if m.monteCarlo() {
		return m.p.Int("mc_samples")
	}
	return 0
}

// evalSamples is T of each evaluation averaged into elbo_mc.
func (m *vofModel) evalSamples() int {
	if t := m.p.Int("eval_mc_samples"); t > 0 {
		return t
	}
	return m.p.Int("mc_samples")
}

// optimalQ reports whether q(u) is held at its closed-form optimum rather
// than trained by the optimiser.
func (m *vofModel) optimalQ() bool { return m.p.String("q_update") == "optimal" }

// qNames are the parameters of q(u) in the set.
func (m *vofModel) qNames() []string {
	if m.diagonal() {
		return []string{QMuName, QSqrtDiagName}
	}
	return []string{QMuName, QSqrtName}
}

// build creates the kernel, the feature and the parameter set for train.
func (m *vofModel) build(train gp.Data) error {
	kname := "se"
	if !m.hermite {
		kname = m.p.String("kernel")
	}
	var err error
	if m.kern, err = NewKernelNamed(kname, m.p, 1); err != nil {
		return m.errf("%w", err)
	}
	feature := "vof-trig"
	if m.hermite {
		feature = "vof-hermite"
	}
	fb, err := Feature(feature)
	if err != nil {
		return m.errf("%w", err)
	}
	built, err := fb.Build(&FeatureContext{Params: m.p, Request: m.m, Kernel: m.kern, Train: train})
	if err != nil {
		return m.errf("%w", err)
	}
	m.feat = built.Feature
	if m.set, err = newRegressionSet(m.kern, m.p); err != nil {
		return m.errf("%w", err)
	}
	if err := m.feat.Declare(m.set, vofFeaturePrefix); err != nil {
		return m.errf("%w", err)
	}
	// q(u) starts at the prior N(0, I) (vof-spec D13).
	if err := m.set.Add(QMuName, mat.NewDense(m.m, 1, nil), param.Identity{}); err != nil {
		return err
	}
	if m.diagonal() {
		ones := make([]float64, m.m)
		for i := range ones {
			ones[i] = 1
		}
		err = m.set.Add(QSqrtDiagName, mat.NewDense(m.m, 1, ones), param.Identity{})
	} else {
		l := mat.NewDense(m.m, m.m, nil)
		for i := range m.m {
			l.Set(i, i, 1)
		}
		err = m.set.Add(QSqrtName, l, param.Identity{})
	}
	if err != nil {
		return err
	}
	if !m.p.Bool("train_hyper") {
		m.set.SetTrainable(false, KernelPrefix+"variance", KernelPrefix+"lengthscales", noiseName)
	}
	if m.optimalQ() {
		m.set.SetTrainable(false, m.qNames()...)
	}
	return nil
}

// setOptimalQ sets q(u) in the set to its closed-form optimum (vof-spec
// §1.8) for the kernel, noise and features currently in the set: m* =
// (σ²I + KKᵀ)⁻¹Ky and S* = A⁻¹ (dense) or S*_mm = 1/A_mm (diagonal), A = I +
// KKᵀ/σ², with the feature's deterministic Kuf (closed form for Hermite,
// Gauss–Legendre quadrature for trigonometric features). For a Gaussian
// likelihood this is where one natural-gradient step of length 1 lands, so
// no optimiser is needed for q; the optimum of the (unbiased) Monte-Carlo
// ELBO's expectation is the optimum of the ELBO itself up to quadrature
// error. It returns the optimum.
func (m *vofModel) setOptimalQ(train gp.Data) (*inference.OrthoOptimum, error) {
	t := ad.NewTape()
	k, f, _ := m.bind(m.set.Bind(t))
	x := t.Const(train.X)
	opt, err := inference.OrthoOptimal(f.Kuf(k, x).Value(), k.Diag(x).Value().RawMatrix().Data, train.Y, m.set.Scalar(noiseName))
	if err != nil {
		return nil, m.errf("optimal q(u): %w", err)
	}
	if err := m.set.SetValue(QMuName, mat.NewDense(m.m, 1, opt.Mean)); err != nil {
		return nil, err
	}
	if m.diagonal() {
		d := make([]float64, m.m)
		for i, v := range opt.Diag {
			d[i] = math.Sqrt(v)
		}
		return opt, m.set.SetValue(QSqrtDiagName, mat.NewDense(m.m, 1, d))
	}
	var ch mat.Cholesky
	if !ch.Factorize(opt.Cov) {
		return nil, m.errf("optimal q(u): S* is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return opt, m.set.SetValue(QSqrtName, mat.DenseCopyOf(&l))
}

func (m *vofModel) bind(b *param.Bound) (kernels.Bound, features.Bound, inference.OrthoVariational) {
	q := inference.OrthoVariational{Mu: b.Get(QMuName)}
	if m.diagonal() {
		q.SqrtDiag = b.Get(QSqrtDiagName)
	} else {
		q.Sqrt = b.Get(QSqrtName)
	}
	return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, vofFeaturePrefix), q
}

// constQ returns q(u) as it is in the set, as constants on t.
func (m *vofModel) constQ(t *ad.Tape) inference.OrthoVariational {
	q := inference.OrthoVariational{Mu: t.Const(m.set.Value(QMuName))}
	if m.diagonal() {
		q.SqrtDiag = t.Const(m.set.Value(QSqrtDiagName))
	} else {
		q.Sqrt = t.Const(m.set.Value(QSqrtName))
	}
	return q
}

// elbo evaluates the training objective on the rows idx of train (nil: all)
// with two stratified sets of t1 Monte-Carlo samples drawn from rng when
// t1 > 0 (deterministic Kuf when t1 = 0), and with qc in place of the bound
// q(u) when it is not nil.
func (m *vofModel) elbo(t *ad.Tape, b *param.Bound, train gp.Data, idx []int, t1 int, rng *rand.Rand, qc *inference.OrthoVariational) (*ad.Node, error) {
	k, f, q := m.bind(b)
	if qc != nil {
		q = *qc
	}
	x, y := train.X, train.Y
	if idx != nil {
		sub := train.Subset(idx)
		x, y = sub.X, sub.Y
	}
	xn := t.Const(x)
	if t1 > 0 {
		s1, s2 := inference.StratifiedSamples(rng, t1), inference.StratifiedSamples(rng, t1)
		return inference.VOFMonteCarlo(k, f.(features.SpectralFeature), xn, y, b.Get(noiseName), q, s1, s2, train.N())
	}
	return inference.VOFELBO(k, f, xn, y, b.Get(noiseName), q, train.N())
}

// buildTrigVOF builds the trigonometric VOF basis of num_features = 2J+1
// features on [−a, a] (a = 0: πJ / max|x| from the training inputs); fix_a
// keeps a fixed.
func buildTrigVOF(c *FeatureContext) (Built, error) {
	j := (c.Params.Int("num_features") - 1) / 2
	a := c.Params.Float("a")
	if a == 0 {
		var err error
		if a, err = features.DefaultTrigA(j, c.Train.X); err != nil {
			return Built{}, fmt.Errorf("%w; set a", err)
		}
	}
	f, err := features.NewTrigVOF(c.Kernel, j, a)
	if err != nil {
		return Built{}, err
	}
	f.Fixed = c.Params.Bool("fix_a")
	return Built{Feature: f}, nil
}

// buildHermiteVOF builds the Hermite VOF basis of num_features features
// for input density N(0, σx²) (sigma_x = 0: the training inputs' standard
// deviation); fix_sigma_x keeps σx fixed.
func buildHermiteVOF(c *FeatureContext) (Built, error) {
	sx := c.Params.Float("sigma_x")
	if sx == 0 {
		sx = stat.PopStdDev(mat.Col(nil, 0, c.Train.X), nil)
		if !(sx > 0) {
			return Built{}, fmt.Errorf("cannot initialise σx from training inputs with zero spread; set sigma_x")
		}
	}
	h, err := features.NewHermiteVOF(c.Kernel, c.Params.Int("num_features"), sx)
	if err != nil {
		return Built{}, err
	}
	h.Fixed = c.Params.Bool("fix_sigma_x")
	return Built{Feature: h}, nil
}

func (m *vofModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if err := checkTask(m.name, opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, m.errf("%w", err)
	}
	if d := train.D(); d != 1 {
		return FitResult{}, m.errf("VOF is implemented for 1-D inputs (as in the paper); the data have %d dimensions", d)
	}
	start := time.Now()
	stochastic := m.monteCarlo() || (opt.BatchSize > 0 && opt.BatchSize < train.N())
	defaultMethod := optim.LBFGS
	if stochastic {
		defaultMethod = optim.Adam
	}
	st, err := Settings(opt, defaultMethod)
	if err != nil {
		return FitResult{}, m.errf("%w", err)
	}
	if st.Method == optim.LBFGS && stochastic {
		return FitResult{}, m.errf("the objective is stochastic (Monte-Carlo estimator or minibatches) and L-BFGS needs a deterministic one; use optimizer \"adam\" or a deterministic estimator with full batches")
	}
	if st.LearningRate == 0 {
		st.LearningRate = vofDefaultLearningRate
	}
	if err := m.build(train); err != nil {
		return FitResult{}, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x766f66)) // "vof"
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		var idx []int
		if opt.BatchSize > 0 && opt.BatchSize < train.N() {
			idx = rng.Perm(train.N())[:opt.BatchSize]
		}
		if m.optimalQ() {
			// The set holds the point being evaluated; q(u) enters the tape
			// as constants at its optimum there. By the envelope theorem the
			// gradient with respect to the other parameters is then that of
			// the ELBO maximised over q.
			if _, err := m.setOptimalQ(train); err != nil {
				return nil, err
			}
			q := m.constQ(t)
			return m.elbo(t, b, train, idx, m.trainSamples(), rng, &q)
		}
		return m.elbo(t, b, train, idx, m.trainSamples(), rng, nil)
	}
	var rep optim.Report
	var terr error
	skipped := m.optimalQ() && len(trainableNames(m.set)) == 0
	if skipped {
		// Nothing but q(u) to fit: its optimum is the fit (iterations = 0).
		if _, err := m.setOptimalQ(train); err != nil {
			return FitResult{}, err
		}
	} else {
		rep, terr = Train(ctx, m.set, obj, st, st.Method, start, progress)
		if m.optimalQ() && (terr == nil || rep.Trace != nil) {
			// Train leaves the other parameters at its final (or last good)
			// point; q(u) follows them.
			if _, err := m.setOptimalQ(train); err != nil && terr == nil {
				return FitResult{}, err
			}
		}
	}
	res := NewFitResult(rep, m.set, QMuName, QSqrtName, QSqrtDiagName)
	res.Extra["num_features"] = float64(m.m)
	if m.hermite {
		res.Extra["sigma_x"] = m.set.Scalar(vofFeaturePrefix + "sigma_x")
	} else {
		res.Extra["a"] = m.set.Scalar(vofFeaturePrefix + "a")
	}
	if terr != nil && rep.Trace == nil {
		return res, trainErr(m.name, terr)
	}
	if err := m.summarise(train, opt.Seed, skipped, &res); err != nil {
		return res, err
	}
	return res, trainErr(m.name, terr)
}

// summarise stores the posterior and the final ELBOs: the deterministic one
// (closed-form or quadrature Kuf), the average of eval_samples Monte-Carlo
// estimates with its standard error (vof-spec D15), and the closed-form
// optima over q(u) at the fitted hyperparameters (§1.8, D14). Without an
// optimiser run (untrained) the objective defaults to the deterministic ELBO.
func (m *vofModel) summarise(train gp.Data, seed uint64, untrained bool, res *FitResult) error {
	t := ad.NewTape()
	b := m.set.Bind(t)
	k, f, q := m.bind(b)
	x := t.Const(train.X)
	det, err := inference.VOFELBO(k, f, x, train.Y, b.Get(noiseName), q, 0)
	if err != nil {
		return m.errf("final ELBO: %w", err)
	}
	res.Extra["elbo_deterministic"] = det.Scalar()
	if !m.monteCarlo() || untrained {
		res.Objective = det.Scalar()
	}
	if n := m.p.Int("eval_samples"); n > 0 {
		rng := rand.New(rand.NewPCG(seed, 0x6576616c)) // "eval"
		vals := make([]float64, n)
		for i := range vals {
			ti := ad.NewTape()
			v, err := m.elbo(ti, m.set.Bind(ti), train, nil, m.evalSamples(), rng, nil)
			if err != nil {
				return m.errf("Monte-Carlo ELBO: %w", err)
			}
			vals[i] = v.Scalar()
		}
		mean, sd := stat.MeanStdDev(vals, nil)
		res.Extra["elbo_mc"] = mean
		if n > 1 {
			// sd is the spread of one evaluation, so the standard error of
			// any other number of evaluations k is sd/√k (the paper's 5000).
			res.Extra["elbo_mc_sd"] = sd
			res.Extra["elbo_mc_stderr"] = sd / math.Sqrt(float64(n))
		}
		if m.monteCarlo() {
			res.Objective = mean
		}
	}
	kuf := f.Kuf(k, x).Value()
	opt, err := inference.OrthoOptimal(kuf, k.Diag(x).Value().RawMatrix().Data, train.Y, m.set.Scalar(noiseName))
	if err != nil {
		return m.errf("optimal bounds: %w", err)
	}
	res.Extra["elbo_optimal_dense"] = opt.Full
	res.Extra["elbo_optimal_diagonal"] = opt.MeanField
	if m.post, err = inference.OrthoPosterior(q); err != nil {
		return m.errf("posterior: %w", err)
	}
	m.noise = m.set.Scalar(noiseName)
	return nil
}

func (m *vofModel) Predict(x *mat.Dense) (Prediction, error) {
	if m.post == nil {
		return Prediction{}, m.errf("Predict before Fit")
	}
	if _, d := x.Dims(); d != 1 {
		return Prediction{}, m.errf("test inputs have %d columns, model was fitted on 1", d)
	}
	if err := checkFinite(m.name, x); err != nil {
		return Prediction{}, err
	}
	mean, varF, err := m.post.Predict(x, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, vofFeaturePrefix)
	})
	if err != nil {
		return Prediction{}, m.errf("%w", err)
	}
	// A quadrature Kuf need not keep the variance non-negative (vof-spec D16).
	inference.ClampVariances(varF)
	varY := make([]float64, len(varF))
	for i, v := range varF {
		varY[i] = v + m.noise
	}
	return Prediction{Mean: mean, VarF: varF, VarY: varY}, nil
}

// ExactLML is the exact log marginal likelihood at the fitted kernel and
// noise (the "full ML" reference of the paper's Figure 3).
func (m *vofModel) ExactLML(train gp.Data) (float64, error) {
	return exactLMLOf(m.kern, m.set, KernelPrefix, noiseName, train)
}
