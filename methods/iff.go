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
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

func init() {
	Register(Method{
		Name:    "iff",
		Summary: "integrated Fourier features: collapsed bound from ΦΦᵀ precomputed once, O(M³) per step",
		Paper:   "Cheema & Rasmussen (2023)",
		Tasks:   []Task{Regression},
		Params: []ParamDoc{
			{Name: "kernel", Kind: String, Default: "se", Choices: []string{"se", "matern12", "matern32", "matern52"},
				Doc: "stationary kernel with a spectral density"},
			{Name: "ard", Kind: Bool, Default: true, Doc: "one lengthscale per input dimension"},
			{Name: "lengthscale", Kind: Float, Default: 0.2, Doc: "initial lengthscale(s) (the paper's 0.2)"},
			{Name: "variance", Kind: Float, Default: 1.0, Doc: "initial kernel variance"},
			{Name: "noise_variance", Kind: Float, Default: 1.0, Doc: "initial Gaussian noise variance"},
			{Name: "freqs_per_dim", Kind: Int, Default: 16,
				Doc: "positive frequencies (j+½)ε_d per dimension, j < freqs_per_dim; cos and sin each, so M = 2^D × kept grid points"},
			{Name: "mask", Kind: Bool, Default: true, Doc: "keep only grid points inside the sphere Σ_d ((j_d+½)/M_d)² ≤ 1 (no effect in 1-D)"},
			{Name: "eps_factor", Kind: Float, Default: features.DefaultIFFEpsilonFactor,
				Doc: "frequency spacing ε_d = eps_factor / (data width in dimension d)"},
			{Name: "eps", Kind: Floats, Doc: "explicit frequency spacing (1 value or one per dimension); overrides eps_factor"},
		},
		New: newIFFModel,
	})
}

type iffModel struct {
	p     Params
	kern  kernels.Kernel
	feat  *features.IFF
	set   *param.Set
	stats *inference.Stats
	post  *inference.Posterior
	noise float64
}

func newIFFModel(p Params) (Model, error) {
	if v := p.Int("freqs_per_dim"); v < 1 {
		return nil, fmt.Errorf("iff: freqs_per_dim must be ≥ 1, got %d", v)
	}
	for _, name := range []string{"lengthscale", "variance", "noise_variance", "eps_factor"} {
		if v := p.Float(name); !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("iff: %s must be positive and finite, got %v", name, v)
		}
	}
	return &iffModel{p: p}, nil
}

const iffKernelPrefix = "kernel."

func (m *iffModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	if opt.Task != "" && opt.Task != Regression {
		return FitResult{}, fmt.Errorf("iff: task %q not supported (regression only)", opt.Task)
	}
	if err := train.Validate(); err != nil {
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
	m.kern, err = kernels.New(m.p.String("kernel"), d, kernels.Options{
		Variance: m.p.Float("variance"), Lengthscales: []float64{m.p.Float("lengthscale")}, ARD: m.p.Bool("ard"),
	})
	if err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	if err := m.feat.CheckKernel(m.kern); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	m.set = param.NewSet()
	if err := m.kern.Declare(m.set, iffKernelPrefix); err != nil {
		return FitResult{}, err
	}
	if err := m.set.AddScalar("noise_variance", m.p.Float("noise_variance"), param.DefaultPositive); err != nil {
		return FitResult{}, err
	}
	// The O(NM²) precompute, once; every step below is O(M³).
	if m.stats, err = inference.ComputeStats(train.X, train.Y, m.feat.M(), m.feat.Phi); err != nil {
		return FitResult{}, fmt.Errorf("iff: %w", err)
	}
	precompute := time.Since(start).Seconds()

	rep, trainErr := optim.Train(ctx, m.set, m.objective, []optim.Phase{{
		Name:     "lbfgs",
		Settings: optim.Settings{Method: optim.LBFGS, MaxIter: opt.Iterations, GradTol: opt.GradTol},
	}}, func(p optim.Progress) {
		if progress != nil {
			progress(Progress{Phase: p.Phase, Iteration: p.Iteration, Objective: p.Objective, Elapsed: time.Since(start)})
		}
	})
	res := FitResult{
		Objective:  rep.Objective,
		Iterations: rep.Iterations,
		Hyper:      m.set.Natural(),
		Extra: map[string]float64{
			"num_features":       float64(m.feat.M()),
			"precompute_seconds": precompute,
		},
	}
	for _, p := range rep.Trace {
		res.Trace = append(res.Trace, TracePoint{Iteration: p.Iteration, Elapsed: p.Elapsed.Seconds() + precompute, Objective: p.Objective})
	}
	if trainErr != nil && !errors.Is(trainErr, context.Canceled) && !errors.Is(trainErr, context.DeadlineExceeded) {
		return res, fmt.Errorf("iff: %w", trainErr)
	}
	if err := m.condition(); err != nil {
		return res, err
	}
	return res, trainErr
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
func (m *iffModel) objective(_ *ad.Tape, b *param.Bound) (*ad.Node, error) {
	kb := m.kern.Bind(b, iffKernelPrefix).(kernels.SpectralBound)
	prec := m.feat.Bind(b, "").(features.PrecisionKuu).Precision(kb)
	kd := ad.Scale(float64(m.stats.N), kb.Variance())
	out, _, err := inference.CollapsedFromStats(m.stats, inference.Kuu{Precision: prec}, kd, b.Get("noise_variance"), inference.Options{})
	return out, err
}

// condition stores the predictive posterior at the current parameters.
func (m *iffModel) condition() error {
	t := ad.NewTape()
	b := m.set.Bind(t)
	kb := m.kern.Bind(b, iffKernelPrefix).(kernels.SpectralBound)
	prec := m.feat.Bind(b, "").(features.PrecisionKuu).Precision(kb)
	post, err := inference.StatsPosterior(m.stats, inference.Kuu{Precision: prec}, b.Get("noise_variance"), inference.Options{})
	if err != nil {
		return fmt.Errorf("iff: posterior: %w", err)
	}
	m.post, m.noise = post, m.set.Scalar("noise_variance")
	return nil
}

func (m *iffModel) Predict(x *mat.Dense) (Prediction, error) {
	if m.post == nil {
		return Prediction{}, errors.New("iff: Predict before Fit")
	}
	if _, d := x.Dims(); d != m.feat.Dim() {
		return Prediction{}, fmt.Errorf("iff: test inputs have %d columns, model was fitted on %d", d, m.feat.Dim())
	}
	mean, varF, err := m.post.Predict(x, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		b := m.set.Bind(t)
		return m.kern.Bind(b, iffKernelPrefix), m.feat.Bind(b, "")
	})
	if err != nil {
		return Prediction{}, fmt.Errorf("iff: %w", err)
	}
	varY := make([]float64, len(varF))
	for i, v := range varF {
		varF[i] = math.Max(v, 0)
		varY[i] = varF[i] + m.noise
	}
	return Prediction{Mean: mean, VarF: varF, VarY: varY}, nil
}
