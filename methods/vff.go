package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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

// Interval features (VFF, A-VFF, B-splines) share one model: a fixed box,
// a θ-independent Kuf = Φ(x), a structured Matérn Kuu, and either the
// collapsed bound from ΦΦᵀ, Φy, yᵀy precomputed once (O(M³) per step) or the
// uncollapsed SVGP ELBO.

func init() {
	Register(Method{
		Name:    "vff",
		Summary: "variational Fourier features on a box: 1-D, Kronecker (optionally masked) or additive; collapsed from ΦΦᵀ precomputed once, or SVGP",
		Paper:   "Hensman, Durrande & Solin (2017)",
		Tasks:   []Task{Regression},
		Params: intervalParams("matern52", "kronecker", []ParamDoc{
			{Name: "frequencies", Kind: Int, Default: 16,
				Doc: "frequencies per dimension, including 0: cos(ω_m(x−a)) for m < frequencies and sin for 1 ≤ m, so 2·frequencies−1 features per dimension"},
			{Name: "mask", Kind: Bool, Default: false,
				Doc: "Kronecker only: keep the grid points with Σ_d (m_d/(frequencies−1))² ≤ 1 (the IFF paper's refined VFF grid)"},
		}),
		New: func(p Params) (Model, error) { return newIntervalModel("vff", p) },
	})
}

// intervalParams are the parameters shared by the interval-feature methods.
func intervalParams(kernel, structure string, extra []ParamDoc) []ParamDoc {
	// The shared kernel parameters (kernel, variance, lengthscales) with
	// interval-specific documentation; no ard: every dimension has its own
	// 1-D kernel and hence its own lengthscale.
	var docs []ParamDoc
	for _, d := range KernelParamsFor(KernelDefaults{Kernel: kernel, Choices: []string{"matern12", "matern32", "matern52"},
		KernelDoc: "1-D Matérn kernel of each dimension (VFF and B-spline Gram matrices exist for these only)", Lengthscale: 0.2}) {
		switch d.Name {
		case "ard":
			continue
		case "variance":
			d.Doc = "initial prior variance k(x,x): the product kernel's first component (others fixed at 1), or split evenly over additive components"
		case "lengthscales":
			d.Doc = "initial lengthscale of each dimension's 1-D kernel: one value for all, or one per input dimension (the IFF paper's 0.2)"
		}
		docs = append(docs, d)
	}
	docs = append(docs, NoiseParams()...)
	docs = append(docs, []ParamDoc{
		{Name: "structure", Kind: String, Default: structure, Choices: []string{"kronecker", "additive"},
			Doc: "kronecker: separable product kernel Π_d k_d, Kuu = ⊗ Kuu_d; additive: f = Σ_d f_d, block-diagonal Kuu"},
		{Name: "interval_margin", Kind: Float, Default: 0.1,
			Doc: "box per dimension [min − margin, max + margin] of the training inputs (the IFF paper's 0.1 for real data); VFF's harmonics are periodic on the box and miss part of the Matérn prior within about a lengthscale of its ends, so a margin of a few lengthscales avoids a floor on the bound"},
		{Name: "interval_lower", Kind: Floats, Doc: "explicit lower ends a_d (1 value or one per dimension); overrides interval_margin"},
		{Name: "interval_upper", Kind: Floats, Doc: "explicit upper ends b_d (1 value or one per dimension); overrides interval_margin"},
		{Name: "objective", Kind: String, Default: "collapsed", Choices: []string{"collapsed", "svgp"},
			Doc: "collapsed: Titsias bound from statistics precomputed once (O(M³) per step); svgp: uncollapsed ELBO with q(u) = N(m, S) trained jointly"},
		{Name: "whiten", Kind: Bool, Default: true, Doc: "svgp: whitened parameterisation u = L v with L the feature's structured square root of Kuu (no dense Cholesky); false: q over u, which needs a dense factorisation of Kuu every step"},
	}...)
	return append(docs, extra...)
}

type intervalModel struct {
	method string
	p      Params
	kern   kernels.Kernel
	feat   *features.IntervalFeature
	set    *param.Set
	stats  *inference.Stats
	post   *inference.Posterior
	noise  float64
	lik    *likelihoods.Gaussian
	train  gp.Data
}

func newIntervalModel(method string, p Params) (Model, error) {
	if err := checkPositive(method, p, "variance", "noise_variance"); err != nil {
		return nil, err
	}
	if v := p.Float("interval_margin"); !(v >= 0) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: interval_margin must be finite and ≥ 0, got %v", method, v)
	}
	if p.Has("frequencies") && p.Int("frequencies") < 1 {
		return nil, fmt.Errorf("%s: frequencies must be ≥ 1, got %d", method, p.Int("frequencies"))
	}
	if p.Has("bases") && p.Int("bases") < 4 {
		return nil, fmt.Errorf("%s: bases must be ≥ 4 for cubic B-splines, got %d", method, p.Int("bases"))
	}
	return &intervalModel{method: method, p: p}, nil
}

var errAVFFStructure = errors.New("avff: structure must be additive (use method vff for Kronecker features)")

// intervals returns the box from the explicit ends or the padded data range.
func (m *intervalModel) intervals(x *mat.Dense) ([]features.Interval, error) {
	ivs, err := features.PaddedIntervals(x, m.p.Float("interval_margin"))
	if err != nil {
		return nil, err
	}
	d := len(ivs)
	for _, end := range []string{"interval_lower", "interval_upper"} {
		v := m.p.Floats(end)
		if len(v) == 0 {
			continue
		}
		if len(v) != 1 && len(v) != d {
			return nil, fmt.Errorf("%s has %d values for %d input dimensions; give 1 or %d", end, len(v), d, d)
		}
		for i := range ivs {
			e := v[0]
			if len(v) == d {
				e = v[i]
			}
			if end == "interval_lower" {
				ivs[i].A = e
			} else {
				ivs[i].B = e
			}
		}
	}
	return ivs, nil
}

// build constructs the kernel and feature for d input dimensions.
func (m *intervalModel) build(x *mat.Dense) error {
	_, d := x.Dims()
	ivs, err := m.intervals(x)
	if err != nil {
		return err
	}
	structure := features.Kronecker
	if m.p.String("structure") == "additive" {
		structure = features.Additive
	}
	variance := m.p.Float("variance")
	ls := initialLengthscales(m.p)
	if len(ls) != 1 && len(ls) != d {
		return fmt.Errorf("lengthscales has %d values for %d input dimensions; give 1 or %d", len(ls), d, d)
	}
	parts := make([]kernels.Kernel, d)
	for i := range parts {
		v := 1.0
		switch {
		case structure == features.Additive:
			v = variance / float64(d)
		case i == 0:
			v = variance
		}
		l := ls[0]
		if len(ls) == d {
			l = ls[i]
		}
		if parts[i], err = kernels.New(m.p.String("kernel"), 1, kernels.Options{Variance: v, Lengthscales: []float64{l}}); err != nil {
			return err
		}
	}
	switch {
	case d == 1:
		m.kern = parts[0]
	case structure == features.Additive:
		if m.kern, err = kernels.Additive(parts...); err != nil {
			return err
		}
	default:
		if m.kern, err = features.NewSeparable(parts...); err != nil {
			return err
		}
	}
	switch m.method {
	case "bspline":
		m.feat, err = features.NewBSplines(m.kern, ivs, m.p.Int("bases"), structure)
	default:
		m.feat, err = features.NewVFF(m.kern, ivs, m.p.Int("frequencies"), structure, m.p.Bool("mask"))
	}
	if err != nil {
		return err
	}
	m.set = param.NewSet()
	if err := m.kern.Declare(m.set, KernelPrefix); err != nil {
		return err
	}
	if d > 1 && structure == features.Kronecker {
		// Only the product of the component variances is identifiable.
		for i := 1; i < d; i++ {
			m.set.SetTrainable(false, features.ComponentPrefix(KernelPrefix, i)+"variance")
		}
	}
	return nil
}

func (m *intervalModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if opt.Task != "" && opt.Task != Regression {
		return FitResult{}, fmt.Errorf("%s: task %q not supported (regression only)", m.method, opt.Task)
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
	}
	start := time.Now()
	if err := m.build(train.X); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
	}
	if err := m.feat.CheckInputs(train.X); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
	}
	m.train = train
	var (
		obj    func(*ad.Tape, *param.Bound) (*ad.Node, error)
		phases []optim.Phase
		extra  = map[string]float64{"num_features": float64(m.feat.M())}
	)
	if m.p.String("objective") == "svgp" {
		var err error
		if obj, phases, err = m.svgpSetup(train, opt); err != nil {
			return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
		}
	} else {
		if err := m.set.AddScalar("noise_variance", m.p.Float("noise_variance"), param.DefaultPositive); err != nil {
			return FitResult{}, err
		}
		var err error
		// The O(NM²) precompute, once; every step below is O(M³).
		if m.stats, err = inference.ComputeStats(train.X, train.Y, m.feat.M(), m.feat.Phi); err != nil {
			return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
		}
		extra["precompute_seconds"] = time.Since(start).Seconds()
		obj = m.collapsed
		phases = []optim.Phase{{Name: "lbfgs", Settings: optim.Settings{Method: optim.LBFGS, MaxIter: opt.Iterations, GradTol: opt.GradTol}}}
	}
	// Trace times count from the start of Fit, so they include the
	// precompute (the IFF paper's timing protocol).
	offset := time.Since(start)
	rep, trainErr := optim.Train(ctx, m.set, obj, phases, func(p optim.Progress) {
		if progress != nil {
			progress(Progress{Phase: p.Phase, Iteration: p.Iteration, Objective: p.Objective, Elapsed: time.Since(start)})
		}
	})
	res := FitResult{Objective: rep.Objective, Iterations: rep.Iterations, Hyper: m.set.Natural(), Extra: extra}
	for _, p := range rep.Trace {
		res.Trace = append(res.Trace, TracePoint{Iteration: p.Iteration, Elapsed: (offset + p.Elapsed).Seconds(), Objective: p.Objective})
	}
	if trainErr != nil && !errors.Is(trainErr, context.Canceled) && !errors.Is(trainErr, context.DeadlineExceeded) {
		return res, fmt.Errorf("%s: %w", m.method, trainErr)
	}
	if err := m.condition(); err != nil {
		return res, fmt.Errorf("%s: %w", m.method, err)
	}
	if m.p.String("objective") == "svgp" && opt.BatchSize > 0 && opt.BatchSize < train.N() {
		// After minibatch training the last step's value is one noisy
		// minibatch estimate: report the full-data ELBO, as svgp does.
		full, err := m.fullELBO(train)
		if err != nil {
			return res, fmt.Errorf("%s: full-data ELBO: %w", m.method, err)
		}
		res.Extra["minibatch_objective"] = res.Objective
		res.Objective = full
	}
	return res, trainErr
}

// fullELBOChunk bounds the rows of Φ formed at once by fullELBO (a
// variable so that tests can exercise several chunks).
var fullELBOChunk = 4096

// fullELBO is the SVGP ELBO over the whole training set at the current
// parameters, from chunks of rows: svgpELBO on a chunk of b rows is
// (n/b)·(its data term) − KL, so the chunks weighted by b/n sum to the
// full data term − KL, with O(M·chunk) memory.
func (m *intervalModel) fullELBO(train gp.Data) (float64, error) {
	n := train.N()
	total := 0.0
	for lo := 0; lo < n; lo += fullELBOChunk {
		hi := min(lo+fullELBOChunk, n)
		x := train.X.Slice(lo, hi, 0, train.D()).(*mat.Dense)
		t := ad.NewTape()
		out, err := m.svgpELBO(t, m.set.Bind(t), mat.DenseCopyOf(x), train.Y[lo:hi], nil, n, true)
		if err != nil {
			return 0, err
		}
		total += float64(hi-lo) / float64(n) * out.Scalar()
	}
	return total, nil
}

// collapsed is the Titsias bound from the precomputed statistics.
func (m *intervalModel) collapsed(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.kern.Bind(b, KernelPrefix)
	kuu, err := m.structuredKuu(kb)
	if err != nil {
		return nil, err
	}
	out, _, err := inference.CollapsedFromStats(m.stats, kuu, kernels.DiagSum(t, kb, m.train.X), b.Get(noiseName), inference.Options{})
	return out, err
}

// structuredKuu hands the feature's structured square root of Kuu to the
// collapsed bound instead of the dense M×M matrix: the VFF cos/sin blocks
// are diagonal plus rank ≤ 2 (whitened in O(M) per column, no
// factorisation), A-VFF is block diagonal over dimensions and Kronecker VFF
// is whitened by mode products with the small per-dimension factors. Only
// A = I + L⁻¹PL⁻ᵀ/σ² is factorised densely. B-spline Grams are banded and
// get a dense Cholesky per dimension (still per-dimension, never of the
// full Kronecker product).
func (m *intervalModel) structuredKuu(kb kernels.Bound) (inference.Kuu, error) {
	return features.StructureOf(kb, m.feat.Bind(nil, ""), inference.DefaultMaxTries, features.AllForms)
}

// svgpSetup declares q(u) and the likelihood and returns the ELBO.
func (m *intervalModel) svgpSetup(train gp.Data, opt FitOptions) (func(*ad.Tape, *param.Bound) (*ad.Node, error), []optim.Phase, error) {
	mm := m.feat.M()
	m.lik = likelihoods.NewGaussian(m.p.Float("noise_variance"))
	if err := m.lik.Declare(m.set, ""); err != nil {
		return nil, nil, err
	}
	if err := m.set.Add(QMuName, mat.NewDense(mm, 1, nil), param.Identity{}); err != nil {
		return nil, nil, err
	}
	sq := mat.NewDense(mm, mm, nil)
	if m.p.Bool("whiten") {
		for i := 0; i < mm; i++ {
			sq.Set(i, i, 1)
		}
	} else {
		// S = Kuu at the initial hyperparameters: its Cholesky factor.
		kuu := m.feat.Kuu(m.kern.Bind(m.set.Bind(ad.NewTape()), KernelPrefix))
		l, err := ad.Cholesky(kuu)
		if err != nil {
			return nil, nil, fmt.Errorf("initial Kuu: %w", err)
		}
		sq.Copy(l.Value())
	}
	if err := m.set.Add(QSqrtName, sq, param.Identity{}); err != nil {
		return nil, nil, err
	}
	n := train.N()
	batch := opt.BatchSize
	settings := optim.Settings{Method: optim.LBFGS, MaxIter: opt.Iterations, GradTol: opt.GradTol}
	if opt.Optimizer == optim.Adam || (batch > 0 && batch < n) {
		settings = optim.Settings{Method: optim.Adam, MaxIter: opt.Iterations, LearningRate: opt.LearningRate}
	}
	if batch <= 0 || batch > n {
		batch = n
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	xAll := mat.DenseCopyOf(train.X)
	var phiAll *mat.Dense // full batch: Kuf is fixed, so compute it once
	if batch == n {
		var err error
		if phiAll, err = m.feat.Phi(xAll); err != nil {
			return nil, nil, err
		}
	}
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		if batch < n {
			sub := train.Subset(rng.Perm(n)[:batch])
			return m.svgpELBO(t, b, sub.X, sub.Y, nil, n, true)
		}
		return m.svgpELBO(t, b, xAll, train.Y, phiAll, n, true)
	}
	return obj, []optim.Phase{{Name: settings.Method, Settings: settings}}, nil
}

// svgpELBO is the SVGP objective on the minibatch (x, y) of a training set
// of n points. phi, when not nil, is the precomputed Kuf = Φ(x). structured
// hands the whitened form the feature's structured square root of Kuu
// (svgpBound); Fit always sets it, and false (a dense Cholesky of Kuu) is
// the reference in tests and benchmarks.
func (m *intervalModel) svgpELBO(t *ad.Tape, b *param.Bound, x *mat.Dense, y []float64, phi *mat.Dense, n int, structured bool) (*ad.Node, error) {
	var fb features.Bound = m.feat.Bind(b, "")
	if phi != nil {
		fb = fixedKuf{Bound: fb, phi: phi}
	}
	if !structured {
		fb = features.DenseKuu(fb)
	}
	kb := m.kern.Bind(b, KernelPrefix)
	ycol := mat.NewDense(len(y), 1, append([]float64(nil), y...))
	ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, "", mu, v, ycol) }
	q := inference.Variational{Mu: b.Get(QMuName), Sqrt: b.Get(QSqrtName), Whiten: m.p.Bool("whiten")}
	out, _, err := inference.SVGP(kb, fb, t.Const(x), ve, q, n, inference.Options{})
	return out, err
}

// svgpBound attaches the feature's structured square root of Kuu for the
// whitened SVGP objective and posterior. They need L only through L⁻¹Kuf
// (and L⁻¹ for predictions), and any root with LLᵀ = Kuu gives the same
// ELBO for the same q(u); so a step costs no M×M Cholesky (O(M³)) and no
// dense triangular solve of Kuf (O(M²B)): the VFF cos/sin blocks are
// whitened in O(M) per column, A-VFF block by block, Kronecker VFF by mode
// products with the per-dimension factors (a masked grid and B-splines
// fall back to Cholesky factors inside Whitener). What remains is O(M²B)
// for q's square root, inherent to a full-rank S. v = L⁻¹u then refers to
// that root, so q_mu/q_sqrt are not interchangeable with a dense-whitened
// fit's. The non-whitened parameterisation needs log|Kuu| and Kuu⁻¹ and
// keeps the dense factorisation.
func (m *intervalModel) svgpBound(fb features.Bound) features.Bound {
	return fb // the bound feature's own KuuStructure is the structured root
}

// fixedKuf serves the precomputed Φ of the training inputs as Kuf.
type fixedKuf struct {
	features.Bound
	phi *mat.Dense
}

// Unwrap exposes the feature, whose Kuu structure the SVGP path reads.
func (f fixedKuf) Unwrap() features.Bound { return f.Bound }

func (f fixedKuf) Kuf(_ kernels.Bound, x *ad.Node) *ad.Node {
	if n, _ := x.Dims(); n != f.phi.RawMatrix().Cols {
		panic(fmt.Sprintf("methods: fixed Kuf of %d inputs used on %d", f.phi.RawMatrix().Cols, n))
	}
	return x.Tape().Const(f.phi)
}

// condition stores the predictive posterior at the current parameters.
func (m *intervalModel) condition() error {
	t := ad.NewTape()
	b := m.set.Bind(t)
	kb := m.kern.Bind(b, KernelPrefix)
	var err error
	if m.stats != nil {
		var kuu inference.Kuu
		if kuu, err = m.structuredKuu(kb); err != nil {
			return fmt.Errorf("posterior: %w", err)
		}
		m.post, err = inference.StatsPosterior(m.stats, kuu, b.Get("noise_variance"), inference.Options{})
	} else {
		q := inference.Variational{Mu: b.Get(QMuName), Sqrt: b.Get(QSqrtName), Whiten: m.p.Bool("whiten")}
		m.post, err = inference.SVGPPosterior(kb, m.svgpBound(m.feat.Bind(b, "")), q, inference.Options{})
	}
	if err != nil {
		return fmt.Errorf("posterior: %w", err)
	}
	m.noise = m.set.Scalar("noise_variance")
	return nil
}

func (m *intervalModel) Predict(x *mat.Dense) (Prediction, error) {
	if m.post == nil {
		return Prediction{}, fmt.Errorf("%s: Predict before Fit", m.method)
	}
	if err := m.feat.CheckInputs(x); err != nil {
		return Prediction{}, fmt.Errorf("%s: test inputs: %w", m.method, err)
	}
	mean, varF, err := m.post.Predict(x, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, "")
	})
	if err != nil {
		return Prediction{}, fmt.Errorf("%s: %w", m.method, err)
	}
	varY := make([]float64, len(varF))
	for i, v := range varF {
		varF[i] = math.Max(v, 0)
		varY[i] = varF[i] + m.noise
	}
	return Prediction{Mean: mean, VarF: varF, VarY: varY}, nil
}
