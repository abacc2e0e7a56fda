package methods

import (
	"context"
	"errors"
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
		New: func(p Params) (Model, error) { return newIntervalModel("vff", p, vffFeature) },
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
	docs = append(docs, VariationalParams()...)
	return append(docs, extra...)
}

type intervalModel struct {
	method     string
	newFeature intervalFeatureFunc
	p          Params
	kern       kernels.Kernel
	feat       *features.IntervalFeature
	set        *param.Set
	stats      *inference.Stats
	bound      *collapsedStats // the collapsed objective (nil for svgp)
	post       *inference.Posterior
	noise      float64
	lik        *likelihoods.Gaussian
	train      gp.Data
}

// intervalFeatureFunc builds a method's interval feature on the box.
type intervalFeatureFunc func(k kernels.Kernel, ivs []features.Interval, s features.Structure, p Params) (*features.IntervalFeature, error)

// vffFeature: Fourier features (vff, avff).
func vffFeature(k kernels.Kernel, ivs []features.Interval, s features.Structure, p Params) (*features.IntervalFeature, error) {
	return features.NewVFF(k, ivs, p.Int("frequencies"), s, p.Bool("mask"))
}

// bsplineFeature: cubic B-spline features.
func bsplineFeature(k kernels.Kernel, ivs []features.Interval, s features.Structure, p Params) (*features.IntervalFeature, error) {
	return features.NewBSplines(k, ivs, p.Int("bases"), s)
}

func newIntervalModel(method string, p Params, newFeature intervalFeatureFunc) (Model, error) {
	if err := checkPositive(method, p, "variance", "noise_variance"); err != nil {
		return nil, err
	}
	if v := p.Float("interval_margin"); !(v >= 0) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: interval_margin must be finite and ≥ 0, got %v", method, v)
	}
	if p.Has("frequencies") && p.Int("frequencies") < 1 {
		return nil, fmt.Errorf("%s: frequencies must be ≥ 1, got %d", method, p.Int("frequencies"))
	}
	if err := checkNatGradStep(method, p); err != nil {
		return nil, err
	}
	if p.Has("natgrad_step") && p.String("objective") != "svgp" {
		return nil, fmt.Errorf("%s: natgrad_step trains q(u) of the svgp objective; the collapsed objective has no q(u) (set objective = \"svgp\")", method)
	}
	if p.Has("bases") && p.Int("bases") < 4 {
		return nil, fmt.Errorf("%s: bases must be ≥ 4 for cubic B-splines, got %d", method, p.Int("bases"))
	}
	return &intervalModel{method: method, p: p, newFeature: newFeature}, nil
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
	if m.feat, err = m.newFeature(m.kern, ivs, structure, m.p); err != nil {
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
	svgp := m.p.String("objective") == "svgp"
	if svgp {
		if _, err := variationalSettings(opt, train.N(), optim.LBFGS); err != nil {
			return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
		}
	} else if _, err := Settings(opt, optim.LBFGS); err != nil {
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
	m.lik = likelihoods.NewGaussian(m.p.Float("noise_variance"))
	if err := m.lik.Declare(m.set, likelihoodPfx); err != nil {
		return FitResult{}, err
	}
	var (
		res FitResult
		err error
	)
	if svgp {
		res, err = m.fitSVGP(ctx, train, opt, start, progress)
	} else {
		m.bound = &collapsedStats{kern: m.kern, feat: m.feat, set: m.set}
		// The O(NM²) precompute, once; every step below is O(M³).
		if err := m.bound.precompute(train, m.feat.M(), m.feat.Phi); err != nil {
			return FitResult{}, fmt.Errorf("%s: %w", m.method, err)
		}
		m.stats = m.bound.stats
		res, err = m.bound.fit(ctx, opt, start, time.Since(start).Seconds(), progress)
	}
	if err != nil && res.Trace == nil {
		return res, trainErr(m.method, err)
	}
	if err := m.condition(); err != nil {
		return res, fmt.Errorf("%s: %w", m.method, err)
	}
	if svgp && batchSize(opt, train.N()) < train.N() {
		// After minibatch training the last step's value is one noisy
		// minibatch estimate: report the full-data ELBO, as svgp does.
		full, ferr := fullDataELBO(train, m.set, m.post, m.binder(), m.lik, func(b *param.Bound) (*ad.Node, error) {
			return inference.KL(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, ""), m.q(b), inference.Options{})
		})
		if ferr != nil {
			return res, fmt.Errorf("%s: full-data ELBO: %w", m.method, ferr)
		}
		res.Extra["last_minibatch_objective"] = res.Objective
		res.Objective = full
	}
	return res, trainErr(m.method, err)
}

// collapsed is the Titsias bound from the precomputed statistics, with the
// feature's structured square root of Kuu (features.StructureOf): the VFF
// cos/sin blocks are diagonal plus rank ≤ 2 (whitened in O(M) per column,
// no factorisation), A-VFF is block diagonal over dimensions and Kronecker
// VFF is whitened by mode products with the small per-dimension factors.
// Only A = I + L⁻¹PL⁻ᵀ/σ² is factorised densely. B-spline Grams are banded
// and get a dense Cholesky per dimension (still per-dimension, never of the
// full Kronecker product).
func (m *intervalModel) collapsed(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	return m.bound.objective(t, b)
}

func (m *intervalModel) q(b *param.Bound) inference.Variational {
	return Group{}.Variational(b, m.p.Bool("whiten"))
}

// fitSVGP declares q(u) and trains the uncollapsed ELBO by the variational
// recipe. On a full batch Kuf = Φ(X) is fixed, so it is computed once.
func (m *intervalModel) fitSVGP(ctx context.Context, train gp.Data, opt FitOptions, start time.Time, progress func(Progress)) (FitResult, error) {
	if err := (Group{}).DeclareQ(m.set, m.kern, m.feat, m.p.Bool("whiten"), 0); err != nil {
		return FitResult{}, err
	}
	n := train.N()
	var phiAll *mat.Dense
	if batchSize(opt, n) == n {
		var err error
		if phiAll, err = m.feat.Phi(train.X); err != nil {
			return FitResult{}, err
		}
	}
	fit := variationalFit{method: m.method, set: m.set, groups: []Group{{}}, defaultOptimizer: optim.LBFGS,
		objective: func(t *ad.Tape, b *param.Bound, bt Batch) (*ad.Node, error) {
			phi := phiAll
			if !bt.Full {
				phi = nil
			}
			return m.svgpELBOColumn(t, b, bt.X, bt.Y, phi, bt.N, true)
		}}
	rep, err := fit.train(ctx, m.p, train, opt, start, progress)
	res := NewFitResult(rep, m.set, QMuName, QSqrtName)
	res.Extra["num_features"] = float64(m.feat.M())
	return res, err
}

// binder evaluates covariances against the features, for predictions.
func (m *intervalModel) binder() inference.Binder {
	return func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, "")
	}
}

// svgpELBO is the SVGP objective on the minibatch (x, y) of a training set
// of n points. phi, when not nil, is the precomputed Kuf = Φ(x). structured
// hands the whitened form the feature's structured square root of Kuu
// (svgpBound); Fit always sets it, and false (a dense Cholesky of Kuu) is
// the reference in tests and benchmarks.
func (m *intervalModel) svgpELBO(t *ad.Tape, b *param.Bound, x *mat.Dense, y []float64, phi *mat.Dense, n int, structured bool) (*ad.Node, error) {
	return m.svgpELBOColumn(t, b, x, columnOf(y), phi, n, structured)
}

func (m *intervalModel) svgpELBOColumn(t *ad.Tape, b *param.Bound, x, ycol *mat.Dense, phi *mat.Dense, n int, structured bool) (*ad.Node, error) {
	var fb features.Bound = m.feat.Bind(b, "")
	if phi != nil {
		fb = fixedKuf{Bound: fb, phi: phi}
	}
	if !structured {
		fb = features.DenseKuu(fb)
	}
	kb := m.kern.Bind(b, KernelPrefix)
	ve := func(mu, v *ad.Node) *ad.Node { return m.lik.VarExp(b, likelihoodPfx, mu, v, ycol) }
	out, _, err := inference.SVGP(kb, fb, t.Const(x), ve, m.q(b), n, inference.Options{})
	return out, err
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

// condition stores the predictive posterior at the current parameters. The
// whitened SVGP posterior uses the feature's structured root of Kuu, as its
// ELBO does (v = L⁻¹u refers to that root, so q_mu/q_sqrt are not
// interchangeable with a dense-whitened fit's).
func (m *intervalModel) condition() error {
	var err error
	if m.bound != nil {
		m.post, err = m.bound.posterior()
	} else {
		t := ad.NewTape()
		b := m.set.Bind(t)
		m.post, err = inference.SVGPPosterior(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, ""), m.q(b), inference.Options{})
	}
	if err != nil {
		return fmt.Errorf("posterior: %w", err)
	}
	m.noise = m.set.Scalar(noiseName)
	return nil
}

func (m *intervalModel) Predict(x *mat.Dense) (Prediction, error) {
	if m.post == nil {
		return Prediction{}, fmt.Errorf("%s: Predict before Fit", m.method)
	}
	if err := m.feat.CheckInputs(x); err != nil {
		return Prediction{}, fmt.Errorf("%s: test inputs: %w", m.method, err)
	}
	mean, varF, err := m.post.Predict(x, m.binder())
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
