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

func init() {
	Register(Method{
		Name:    "sgpr",
		Summary: "sparse GP regression with inducing points: collapsed bound, O(NM²) per step, L-BFGS",
		Paper:   "Titsias (2009)",
		Tasks:   []Task{Regression},
		Params:  concat(KernelParams(), NoiseParams(), InducingParams(100), NumericParams()),
		New: func(p Params) (Model, error) {
			if err := checkPositive("sgpr", p, "variance", "noise_variance"); err != nil {
				return nil, err
			}
			if err := checkJitter("sgpr", p); err != nil {
				return nil, err
			}
			return &sgprModel{p: p}, nil
		},
	})
}

// sgprModel is the Titsias collapsed bound with inducing points; q(u) is
// the optimal one for the final hyperparameters.
type sgprModel struct {
	p    Params
	kern kernels.Kernel
	feat *features.InducingPoints
	set  *param.Set
	post *inference.Posterior
	dim  int
}

func (m *sgprModel) opts() inference.Options { return inference.Options{Jitter: m.p.Float("jitter")} }

// setup declares kernel, noise and Z (shared with svgp).
func setupSparse(method string, p Params, train gp.Data, opt FitOptions, lik likelihoods.Likelihood) (
	kernels.Kernel, *features.InducingPoints, *param.Set, error) {
	kern, err := NewKernel(p, train.D())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	s := param.NewSet()
	if err := kern.Declare(s, KernelPrefix); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := lik.Declare(s, likelihoodPfx); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	z, err := InitInducing(p, train.X, kern, s, fitRNG(opt, 1))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: inducing inputs: %w", method, err)
	}
	if _, zd := z.Dims(); zd != train.D() {
		return nil, nil, nil, fmt.Errorf("%s: inducing inputs have %d columns, data %d", method, zd, train.D())
	}
	feat := &features.InducingPoints{Z: z, Fixed: !p.Bool("train_inducing")}
	if err := feat.Declare(s, inducingPfx); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	return kern, feat, s, nil
}

func (m *sgprModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask("sgpr", opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("sgpr: %w", err)
	}
	st, err := Settings(opt, optim.LBFGS)
	if err != nil {
		return FitResult{}, fmt.Errorf("sgpr: %w", err)
	}
	m.dim = train.D()
	m.kern, m.feat, m.set, err = setupSparse("sgpr", m.p, train, opt, likelihoods.NewGaussian(m.p.Float("noise_variance")))
	if err != nil {
		return FitResult{}, err
	}
	x := mat.DenseCopyOf(train.X)
	var jitter float64
	obj := func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		out, info, err := inference.SGPR(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(x), train.Y, b.Get(noiseName), m.opts())
		jitter = info.Jitter
		return out, err
	}
	rep, terr := Train(ctx, m.set, obj, st, "lbfgs", start, progress)
	res := NewFitResult(rep, m.set, InducingName)
	res.Extra["num_inducing"] = float64(m.feat.Z.RawMatrix().Rows)
	if terr != nil && rep.Trace == nil {
		return res, trainErr("sgpr", terr)
	}
	t := ad.NewTape()
	b := m.set.Bind(t)
	m.post, _, err = inference.SGPRPosterior(m.kern.Bind(b, KernelPrefix), m.feat.Bind(b, inducingPfx), t.Const(x), train.Y, b.Get(noiseName), m.opts())
	if err != nil {
		return res, fmt.Errorf("sgpr: posterior: %w", err)
	}
	res.Extra["jitter"] = jitter
	return res, trainErr("sgpr", terr)
}

func (m *sgprModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("sgpr", m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := m.post.Predict(x, pointsBinder(m.set, m.kern, m.feat))
	if err != nil {
		return Prediction{}, fmt.Errorf("sgpr: %w", err)
	}
	return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
}

// ExactLML is the exact log marginal likelihood at the fitted kernel.
func (m *sgprModel) ExactLML(train gp.Data) (float64, error) {
	return exactLMLOf(m.kern, m.set, KernelPrefix, noiseName, train)
}
