package methods

import (
	"context"
	"fmt"
	"slices"
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
		Name:    "gpr",
		Summary: "exact GP regression: log marginal likelihood maximised by L-BFGS, O(N³)",
		Paper:   "Rasmussen & Williams (2006)",
		Tasks:   []Task{Regression},
		Params: concat(KernelParamsFor(KernelDefaults{Choices: gprKernelChoices()}), NoiseParams(), []ParamDoc{
			// No default, so that the run ids of grids that do not set it
			// stay what they were; unset means the kernels' default, 1.
			{Name: "period", Kind: Float, Range: Positive, Doc: "initial period of a periodic kernel or component, trained with the other hyperparameters (unset: 1)"},
			{Name: "jitter", Kind: Float, Default: 0.0, Range: NonNegative, Doc: "added to the diagonal of K + σ²I before factorising it"},
			{Name: "max_points", Kind: Int, Default: 20000, Range: Count, Doc: "refuse training sets larger than this (O(N²) memory)"},
		}),
		New:   newExactGPR("gpr", newGPRKernel),
		Fit:   exactRecipe,
		Exact: true,
		Needs: exactNeeds(3),
	})
}

// exactRecipe is the exact GPs' fit: L-BFGS on the log marginal
// likelihood (always the full batch), up to 1000 iterations until
// converged.
func exactRecipe(Params, FitCase) Recipe {
	return Recipe{Optimizer: optim.LBFGS, Iterations: 1000, StopTol: DefaultStopTol}
}

// gprKernelChoices are the common kernel choices and the Matérn + periodic
// sum, the full-GP prior of the ODVFF paper's App. C (Fig. 3). Both
// components start at variance and lengthscales; the periodic one at period.
func gprKernelChoices() []string {
	return slices.Concat(kernels.Names(), []string{"additive(se)", "additive(matern12)", "additive(matern32)", "additive(matern52)",
		"sum(matern32,periodic)", "sum(matern52,periodic)", "sum(se,periodic)"})
}

// newGPRKernel is NewKernel with the initial period of a periodic kernel or
// component taken from p.
func newGPRKernel(p Params, dim int) (kernels.Kernel, error) {
	o := kernelOptions(p)
	o.Period = p.Float("period")
	return kernels.New(p.String("kernel"), dim, o)
}

// newExactGPR is the constructor of an exact GP regression method whose
// prior covariance newKernel builds (gpr, agpr).
func newExactGPR(name string, newKernel func(p Params, dim int) (kernels.Kernel, error)) func(Params) (Model, error) {
	return func(p Params) (Model, error) {
		return &gprModel{name: name, p: p, newKernel: newKernel}, nil
	}
}

// exactNeeds is the memory of exact GP regression: at least per N×N
// matrices of 8N² bytes on the autodiff tape (K + σ²I, its Cholesky
// factor, the adjoint; an additive kernel adds one K_d per dimension), and
// max_points checked against the training set.
func exactNeeds(per int) func(p Params, s Shape) (Plan, error) {
	return func(p Params, s Shape) (Plan, error) {
		if s.Exact && s.N > p.Int("max_points") {
			return Plan{}, paramErr("max_points", fmt.Errorf("%d training rows exceed max_points = %d (exact GPR needs %s per N×N matrix)",
				s.N, p.Int("max_points"), Bytes(floatBytes(float64(s.N)*float64(s.N)))))
		}
		k := float64(per)
		if per == 0 { // additive: one N×N matrix per dimension besides the three
			k = float64(s.D + 3)
		}
		n := float64(s.N)
		// A variance and a lengthscale per dimension (ARD, or per
		// component) and the noise.
		return Plan{Memory: floatBytes(k * n * n), MemoryWhat: fmt.Sprintf("%g N×N matrices of N = %d training rows on the autodiff tape", k, s.N),
			Params: max(s.D, 1) + 2}, nil
	}
}

type gprModel struct {
	name string // "gpr" or "agpr": error messages
	p    Params
	// newKernel builds the prior covariance on dim inputs (NewKernel for gpr,
	// an additive kernel for agpr).
	newKernel func(p Params, dim int) (kernels.Kernel, error)
	kern      kernels.Kernel
	set       *param.Set
	x         *mat.Dense
	post      *inference.Posterior
	dim       int
}

func (m *gprModel) opts() inference.Options { return inference.Options{Jitter: m.p.Float("jitter")} }

func (m *gprModel) objective(y []float64) func(*ad.Tape, *param.Bound) (*ad.Node, error) {
	return func(t *ad.Tape, b *param.Bound) (*ad.Node, error) {
		lml, _, err := inference.ExactLML(m.kern.Bind(b, KernelPrefix), t.Const(m.x), y, b.Get(noiseName), m.opts())
		return lml, err
	}
}

func (m *gprModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask(m.name, opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.name, err)
	}
	if n, maxN := train.N(), m.p.Int("max_points"); n > maxN {
		return FitResult{}, fmt.Errorf("%s: %d training points exceed max_points = %d (exact GPR needs %.1f GB per N×N matrix)",
			m.name, n, maxN, 8*float64(n)*float64(n)/1e9)
	}
	st, err := Settings(opt, optim.LBFGS)
	if err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.name, err)
	}
	m.dim, m.x = train.D(), mat.DenseCopyOf(train.X)
	if m.kern, err = m.newKernel(m.p, m.dim); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.name, err)
	}
	if m.set, err = newRegressionSet(m.kern, m.p); err != nil {
		return FitResult{}, fmt.Errorf("%s: %w", m.name, err)
	}
	rep, terr := Train(ctx, m.set, m.objective(train.Y), st, "lbfgs", start, progress)
	res := NewFitResult(rep, m.set)
	if terr != nil && rep.Trace == nil {
		return res, trainErr(m.name, terr)
	}
	t := ad.NewTape()
	b := m.set.Bind(t)
	m.post, err = inference.ExactPosterior(m.kern.Bind(b, KernelPrefix), t.Const(m.x), train.Y, b.Get(noiseName), m.opts())
	if err != nil {
		return res, fmt.Errorf("%s: posterior: %w", m.name, err)
	}
	return res, trainErr(m.name, terr)
}

func (m *gprModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs(m.name, m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, err := m.post.Predict(x, func(t *ad.Tape) (kernels.Bound, features.Bound) {
		return m.kern.Bind(m.set.Bind(t), KernelPrefix), features.BoundPoints{Z: t.Const(m.x)}
	})
	if err != nil {
		return Prediction{}, fmt.Errorf("%s: %w", m.name, err)
	}
	return regressionPrediction(mean, varf, m.set.Scalar(noiseName)), nil
}

// ExactLML is the objective itself at the fitted hyperparameters.
func (m *gprModel) ExactLML(train gp.Data) (float64, error) {
	return exactLMLOf(m.kern, m.set, KernelPrefix, noiseName, train)
}
