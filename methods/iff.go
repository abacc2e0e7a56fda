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
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

func init() {
	Register(Method{
		Name:    "iff",
		Summary: "integrated Fourier features: collapsed bound from ΦΦᵀ precomputed once, O(M³) per step",
		Paper:   "Cheema & Rasmussen (2023)",
		Tasks:   []Task{Regression},
		Params: concat(KernelParamsFor(iffKernelDefaults), NoiseParams(), []ParamDoc{
			{Name: "freqs_per_dim", Kind: Int, Default: 16,
				Doc: "positive frequencies (j+½)ε_d per dimension, j < freqs_per_dim; cos and sin each, so M = 2^D × kept grid points"},
			{Name: "mask", Kind: Bool, Default: true, Doc: "keep only grid points inside the sphere Σ_d ((j_d+½)/M_d)² ≤ 1 (no effect in 1-D)"},
			{Name: "eps_factor", Kind: Float, Default: features.DefaultIFFEpsilonFactor,
				Doc: "frequency spacing ε_d = eps_factor / (data width W_d in dimension d); the paper's 0.95 leaves 1/ε − W = 0.053 W, so on data only a few lengthscales wide the features' kernel wraps around (use ≤ 0.5 there)"},
			{Name: "eps", Kind: Floats, Doc: "explicit frequency spacing (1 value or one per dimension); overrides eps_factor"},
		}),
		New: newIFFModel,
	})
}

type iffModel struct {
	p     Params
	kern  kernels.Kernel
	feat  *features.IFF
	set   *param.Set
	stats *inference.Stats
	// trainX are the training inputs, for Σ_n k(x_n, x_n).
	trainX *mat.Dense
	post   *inference.Posterior
	noise  float64
}

// iffKernelDefaults: kernels with a spectral density, and the paper's
// initial lengthscale 0.2.
var iffKernelDefaults = KernelDefaults{
	Choices:     []string{"se", "matern12", "matern32", "matern52"},
	KernelDoc:   "stationary kernel with a spectral density",
	Lengthscale: 0.2,
}

func newIFFModel(p Params) (Model, error) {
	if v := p.Int("freqs_per_dim"); v < 1 {
		return nil, fmt.Errorf("iff: freqs_per_dim must be ≥ 1, got %d", v)
	}
	if err := checkPositive("iff", p, "variance", "noise_variance", "eps_factor"); err != nil {
		return nil, err
	}
	return &iffModel{p: p}, nil
}

func (m *iffModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if err := checkTask("iff", opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	st, err := Settings(opt, optim.LBFGS)
	if err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	start := time.Now()
	d := train.D()
	eps, err := m.epsilon(train.X)
	if err != nil {
		return FitResult{}, err
	}
	perDim := make([]int, d)
	for i := range perDim {
		perDim[i] = m.p.Int("freqs_per_dim")
	}
	if m.feat, err = features.NewIFF(perDim, eps, m.p.Bool("mask")); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	if m.kern, err = NewKernel(m.p, d); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	if err := m.feat.CheckKernel(m.kern); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	if m.set, err = newRegressionSet(m.kern, m.p); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	// The O(NM²) precompute, once; every step below is O(M³).
	if m.stats, err = inference.ComputeStats(train.X, train.Y, m.feat.M(), m.feat.Phi); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	m.trainX = train.X
	precompute := time.Since(start).Seconds()

	rep, terr := Train(ctx, m.set, m.objective, st, st.Method, start, progress)
	res := NewFitResult(rep, m.set)
	res.Extra["num_features"] = float64(m.feat.M())
	res.Extra["precompute_seconds"] = precompute
	for i := range res.Trace {
		res.Trace[i].Elapsed += precompute
	}
	if terr != nil && rep.Trace == nil {
		return res, trainErr("iff", terr)
	}
	if err := m.condition(); err != nil {
		return res, err
	}
	return res, trainErr("iff", terr)
}

func (m *iffModel) epsilon(x *mat.Dense) ([]float64, error) {
	_, d := x.Dims()
	given := m.p.Floats("eps")
	if len(given) == 0 {
		eps, err := features.IFFEpsilon(x, m.p.Float("eps_factor"))
		if err != nil {
			return nil, fmt.Errorf("iff: %w", err)
		}
		return eps, nil
	}
	switch len(given) {
	case 1:
		eps := make([]float64, d)
		for i := range eps {
			eps[i] = given[0]
		}
		return eps, nil
	case d:
		return given, nil
	}
	return nil, fmt.Errorf("iff: eps has %d values for %d input dimensions; give 1 or %d", len(given), d, d)
}

// objective is 𝔉̂ from the precomputed statistics.
func (m *iffModel) objective(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.kern.Bind(b, KernelPrefix)
	kuu, err := features.StructureOf(kb, m.feat.Bind(b, ""), 0, features.AllForms)
	if err != nil {
		return nil, err
	}
	out, _, err := inference.CollapsedFromStats(m.stats, kuu, kernels.DiagSum(t, kb, m.trainX), b.Get(noiseName), inference.Options{})
	return out, err
}

// condition stores the predictive posterior at the current parameters.
func (m *iffModel) condition() error {
	t := ad.NewTape()
	b := m.set.Bind(t)
	kb := m.kern.Bind(b, KernelPrefix)
	kuu, err := features.StructureOf(kb, m.feat.Bind(b, ""), 0, features.AllForms)
	if err != nil {
		return fmt.Errorf("iff: posterior: %w", err)
	}
	post, err := inference.StatsPosterior(m.stats, kuu, b.Get(noiseName), inference.Options{})
	if err != nil {
		return fmt.Errorf("iff: posterior: %w", err)
	}
	m.post, m.noise = post, m.set.Scalar(noiseName)
	return nil
}

func (m *iffModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("iff", m.post != nil, x, m.dim()); err != nil {
		return Prediction{}, err
	}
	mean, varF, err := m.post.Predict(x, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, "")
	})
	if err != nil {
		return Prediction{}, fmt.Errorf("iff: %w", err)
	}
	for i, v := range varF {
		varF[i] = math.Max(v, 0)
	}
	return regressionPrediction(mean, varF, m.noise), nil
}

func (m *iffModel) dim() int {
	if m.feat == nil {
		return 0
	}
	return m.feat.Dim()
}
