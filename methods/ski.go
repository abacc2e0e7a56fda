package methods

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/optim"
	"sgplab/gp/param"
	"sgplab/gp/ski"
)

// GPyTorch's initial value of every positive hyperparameter: softplus(0).
var gpytorchInit = math.Ln2

// skiNoiseFloor is GPyTorch's GaussianLikelihood noise constraint, σ² > 1e-4.
const skiNoiseFloor = 1e-4

func init() {
	Register(Method{
		Name: "ski",
		Summary: "structured kernel interpolation (KISS-GP): cubic interpolation onto a regular grid, Kronecker/Toeplitz FFT " +
			"MVMs, exact marginal likelihood by BBMM (PCG, Lanczos quadrature, Hutchinson probes), Adam",
		Paper: "Wilson & Nickisch (2015); Gardner et al. (2018)",
		Tasks: []Task{Regression},
		Params: concat(
			KernelParamsFor(KernelDefaults{Kernel: "se", Fixed: true, Variance: gpytorchInit, Lengthscale: gpytorchInit}),
			[]ParamDoc{{Name: "noise_variance", Kind: Float, Default: gpytorchInit + skiNoiseFloor, Range: Above(skiNoiseFloor),
				Doc: "initial Gaussian noise variance; above GPyTorch's noise floor 1e-4"}},
			[]ParamDoc{
				{Name: "mean", Kind: Float, Default: 0.0, Doc: "initial constant mean (trained)"},
				{Name: "grid_size", Kind: Int, Default: 0, Range: AtLeast(ski.MinGridSize).OrZero(), Doc: "grid points per dimension; 0 chooses GPyTorch's choose_grid_size, ⌊N^{1/D}⌋ (at least 5)"},
				{Name: "max_grid_points", Kind: Int, Default: 4000000, Range: Count, Doc: "refuse grids with more points in all (memory grows as M·(variance_rank + 4) floats)"},
				{Name: "probes", Kind: Int, Default: 10, Range: Count, Doc: "probe vectors for the log-determinant and the gradient's trace terms"},
				{Name: "lanczos_steps", Kind: Int, Default: 20, Range: Count, Doc: "CG/Lanczos steps of the log-determinant quadrature"},
				{Name: "cg_tolerance", Kind: Float, Default: 1.0, Range: Positive, Doc: "mean relative residual over the batched training solve at which CG stops, after lanczos_steps iterations (GPyTorch's rule)"},
				{Name: "max_cg_iterations", Kind: Int, Default: 1000, Range: Count, Doc: "CG iteration cap"},
				{Name: "preconditioner_rank", Kind: Int, Default: 15, Range: NonNegative, Doc: "rank of the pivoted-Cholesky preconditioner (0: none)"},
				{Name: "predict_cg_tolerance", Kind: Float, Default: 0.01, Range: Positive, Doc: "relative residual of the predictive-mean solve"},
				{Name: "variance_rank", Kind: Int, Default: 100, Range: Count, Doc: "Lanczos vectors of the predictive-variance cache (LOVE; GPyTorch's max_root_decomposition_size)"},
				{Name: "lanczos_start", Kind: String, Default: "probe", Choices: ski.LanczosStarts,
					Doc: "start of the variance cache's Lanczos run: probe = a column W K_grid e_j for a random grid point j (GPyTorch's fast_pred_var), random = a Gaussian vector"},
				{Name: "objective_tol", Kind: Float, Default: 1e-6, Range: NonNegative, Doc: "stop Adam when the loss −L/N changes by less between steps (0: off)"},
			}),
		Needs:      skiNeeds,
		KernelName: fixedKernel("se"),
		// GPyTorch's recipe: Adam at 0.1; the loop stops on objective_tol.
		Fit: func(Params, FitCase) Recipe { return Recipe{Optimizer: optim.Adam, LearningRate: 0.1, Iterations: 100} },
		New: func(p Params) (Model, error) {
			m := &skiModel{p: p}
			if err := m.settings().Check(); err != nil {
				return nil, err
			}
			if err := m.posteriorSettings().Check(); err != nil {
				return nil, err
			}
			return m, nil
		},
	})
}

// skiNeeds counts the grid points (the inducing points of KISS-GP: M =
// grid_size^D, or GPyTorch's automatic size) against max_grid_points and
// the memory of the N·4^D cubic interpolation weights and the grid's
// vectors.
func skiNeeds(p Params, s Shape) (Plan, error) {
	if s.D == 0 {
		return Plan{}, nil
	}
	size := p.Int("grid_size")
	if size == 0 && s.N > 0 {
		size = ski.AutoSize(s.N, s.D)
	}
	if size == 0 {
		return Plan{}, nil
	}
	total := math.Pow(float64(size), float64(s.D))
	if total > float64(p.Int("max_grid_points")) {
		return Plan{}, paramErr("grid_size", fmt.Errorf("a grid of %d^%d = %.3g points exceeds max_grid_points = %d; lower grid_size", size, s.D, total, p.Int("max_grid_points")))
	}
	weights := float64(s.N) * math.Pow(4, float64(s.D))
	// A step runs lanczos_steps batched CG iterations on probes + 1
	// vectors, each a product with K̂ = W K_grid Wᵀ: the N·4^D interpolation
	// weights twice and an FFT-sized pass over the grid (Toeplitz products,
	// M log M per vector), not the B·M² + M³ of an inducing-point method.
	vectors := float64(p.Int("lanczos_steps") * (p.Int("probes") + 1))
	return Plan{M: int(total),
		StepFlops:   vectors * (2*weights + 5*total*math.Log2(max(total, 2))),
		Memory:      floatBytes(2*weights + total*float64(p.Int("variance_rank")+4)),
		MemoryWhat:  fmt.Sprintf("N·4^D = %.3g cubic interpolation weights (value and index) and %.3g grid points × (variance_rank + 4) vectors; SKI is a low-dimensional method", weights, total),
		MemoryParam: "grid_size"}, nil
}

type skiModel struct {
	p    Params
	set  *param.Set
	grid *ski.Grid
	post *ski.Posterior
	hyp  ski.Hyper
	dim  int
}

const (
	skiVariance = KernelPrefix + "variance"
	skiLengths  = KernelPrefix + "lengthscales"
	skiMean     = "mean"
)

func (m *skiModel) settings() ski.Settings {
	return ski.Settings{Probes: m.p.Int("probes"), LanczosSteps: m.p.Int("lanczos_steps"), CGTol: m.p.Float("cg_tolerance"),
		MaxCG: m.p.Int("max_cg_iterations"), PrecondRank: m.p.Int("preconditioner_rank")}
}

func (m *skiModel) posteriorSettings() ski.PosteriorSettings {
	return ski.PosteriorSettings{CGTol: m.p.Float("predict_cg_tolerance"), MaxCG: m.p.Int("max_cg_iterations"),
		PrecondRank: m.p.Int("preconditioner_rank"), VarianceRank: m.p.Int("variance_rank"), LanczosStart: m.p.String("lanczos_start")}
}

// newSet declares σ_f², the lengthscales (one, or one per dimension), σ²
// and the constant mean, positive ones through softplus as GPyTorch does.
func (m *skiModel) newSet(dim int) (*param.Set, error) {
	ls := initialLengthscales(m.p)
	nl := 1
	if m.p.Bool("ard") {
		nl = dim
	}
	if len(ls) != 1 && len(ls) != nl {
		return nil, fmt.Errorf("%d lengthscales for %d input dimensions (ard = %v)", len(ls), dim, m.p.Bool("ard"))
	}
	row := make([]float64, nl)
	for k := range row {
		row[k] = ls[min(k, len(ls)-1)]
	}
	s := param.NewSet()
	pos := param.DefaultPositive
	if err := s.AddScalar(skiVariance, m.p.Float("variance"), pos); err != nil {
		return nil, err
	}
	if err := s.Add(skiLengths, mat.NewDense(1, nl, row), pos); err != nil {
		return nil, err
	}
	if err := s.AddScalar(noiseName, m.p.Float("noise_variance"), param.Positive{Lower: skiNoiseFloor}); err != nil {
		return nil, err
	}
	return s, s.AddScalar(skiMean, m.p.Float("mean"), param.Identity{})
}

// hyper reads the natural hyperparameters from the set.
func (m *skiModel) hyper() (ski.Hyper, float64) {
	ls := m.set.Value(skiLengths).RawRowView(0)
	h := ski.Hyper{Variance: m.set.Scalar(skiVariance), Noise: m.set.Scalar(noiseName), Lengthscales: make([]float64, m.dim)}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = ls[min(k, len(ls)-1)]
	}
	return h, m.set.Scalar(skiMean)
}

// lossGrad sets grad to the gradient of the loss −L/n in the unconstrained
// vector x = (u_σf², u_ℓ…, u_σ², μ) from ∂L/∂(σ_f², ℓ_1 … ℓ_dim, σ², μ)
// in natural units: softplus chains by its derivative (the sigmoid), and one
// shared lengthscale (ard = false) collects the dim partial derivatives.
func lossGrad(grad, x, nat []float64, dim int, n float64) {
	nl := len(x) - 3
	grad[0] = -nat[0] * param.DefaultPositive.Deriv(x[0]) / n
	for k := 0; k < nl; k++ {
		g := nat[1+k]
		if nl == 1 {
			g = 0
			for d := 0; d < dim; d++ {
				g += nat[1+d]
			}
		}
		grad[1+k] = -g * param.DefaultPositive.Deriv(x[1+k]) / n
	}
	grad[1+nl] = -nat[1+dim] * param.Positive{Lower: skiNoiseFloor}.Deriv(x[1+nl]) / n
	grad[2+nl] = -nat[2+dim] / n
}

// GridSize is the number of grid points per dimension used for n inputs in
// dim dimensions: grid_size, or GPyTorch's automatic choice.
func (m *skiModel) GridSize(n, dim int) int {
	if g := m.p.Int("grid_size"); g > 0 {
		return g
	}
	return ski.AutoSize(n, dim)
}

// Fit maximises the SKI marginal likelihood by Adam on the loss −L/N, the
// IFF paper's SKI recipe (GPyTorch ExactMarginalLogLikelihood): learning rate
// 0.1 unless the grid gives one, the grid's iteration budget, stop when
// |Δloss| < objective_tol (a grid's grad_tol is ignored). Fresh probes are drawn at every step from the
// fit's seeded stream.
func (m *skiModel) Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error) {
	start := time.Now()
	if err := checkTask("ski", opt, Regression); err != nil {
		return FitResult{}, err
	}
	if err := train.Validate(); err != nil {
		return FitResult{}, fmt.Errorf("ski: %w", err)
	}
	st, err := Settings(opt, optim.Adam)
	if err != nil {
		return FitResult{}, fmt.Errorf("ski: %w", err)
	}
	if st.Method != optim.Adam {
		return FitResult{}, fmt.Errorf("ski: optimizer %q: the SKI objective is a stochastic estimate, so only %q applies", st.Method, optim.Adam)
	}
	if st.LearningRate == 0 {
		st.LearningRate = 0.1
	}
	// The paper's SKI loop stops on |Δloss| only: a gradient tolerance
	// shared with L-BFGS methods in a grid would act on a noisy estimate.
	st.ObjectiveTol, st.GradTol = m.p.Float("objective_tol"), 0
	n, dim := train.N(), train.D()
	m.dim = dim
	size := m.GridSize(n, dim)
	if total := math.Pow(float64(size), float64(dim)); total > float64(m.p.Int("max_grid_points")) {
		return FitResult{}, fmt.Errorf("ski: a grid of %d^%d = %.3g points exceeds max_grid_points = %d; lower grid_size",
			size, dim, total, m.p.Int("max_grid_points"))
	}
	if m.grid, err = ski.NewGrid(train.X, []int{size}); err != nil {
		return FitResult{}, fmt.Errorf("ski: %w", err)
	}
	w, err := m.grid.Interpolate(train.X)
	if err != nil {
		return FitResult{}, fmt.Errorf("ski: %w", err)
	}
	if m.set, err = m.newSet(dim); err != nil {
		return FitResult{}, fmt.Errorf("ski: %w", err)
	}
	s := m.settings()
	rng := fitRNG(opt, 1)
	var last ski.Estimate
	var objErr error
	nf := float64(n)
	st.Stop.Floor /= nf // the loss below is per training point
	obj := func(x, grad []float64) float64 {
		m.set.SetVector(x)
		h, mu := m.hyper()
		op, err := ski.NewOperator(m.grid, w, h)
		if err == nil {
			last, err = op.MarginalLikelihood(train.Y, mu, s, rng)
		}
		if err != nil {
			if objErr == nil {
				objErr = err
			}
			return math.NaN()
		}
		lossGrad(grad, x, last.Grad, dim, nf)
		return -last.LML / nf
	}
	res := FitResult{Extra: map[string]float64{}}
	report := func(it optim.Iteration) {
		tp := TracePoint{Iteration: it.Iter, Elapsed: it.Elapsed.Seconds(), Objective: -it.F * nf}
		res.Trace = append(res.Trace, tp)
		if progress != nil {
			progress(Progress{Phase: "adam", Iteration: it.Iter, Objective: tp.Objective, Elapsed: time.Since(start)})
		}
	}
	out, terr := optim.Minimize(ctx, obj, m.set.Vector(), st, report)
	if out.X != nil {
		m.set.SetVector(out.X)
	}
	res.Objective, res.Iterations, res.Status = -out.F*nf, out.Iterations, out.Status
	res.Hyper = m.set.Natural()
	res.Extra["num_features"] = float64(m.grid.Len())
	res.Extra["grid_size"] = float64(size)
	res.Extra["cg_iterations"] = float64(last.CGIters)
	if terr != nil {
		if objErr != nil {
			terr = fmt.Errorf("%w (%v)", terr, objErr)
		}
		if out.X == nil || len(res.Trace) == 0 {
			return res, trainErr("ski", terr)
		}
	}
	h, mu := m.hyper()
	m.hyp = h
	op, err := ski.NewOperator(m.grid, w, h)
	if err != nil {
		return res, fmt.Errorf("ski: %w", err)
	}
	if m.post, err = op.NewPosterior(train.Y, mu, m.posteriorSettings(), fitRNG(opt, 2)); err != nil {
		return res, fmt.Errorf("ski: posterior: %w", err)
	}
	res.Extra["predict_cg_iterations"] = float64(m.post.CGIters)
	return res, trainErr("ski", terr)
}

// Predict returns the SKI predictive marginals. Variances can be negative;
// the prediction asks the scorer to leave those points out of NLPD and to
// count them, as the IFF paper does. Test points beyond the training grid
// are interpolated at its edge.
func (m *skiModel) Predict(x *mat.Dense) (Prediction, error) {
	if err := checkInputs("ski", m.post != nil, x, m.dim); err != nil {
		return Prediction{}, err
	}
	mean, varf, _, err := m.post.Predict(x)
	if err != nil {
		return Prediction{}, fmt.Errorf("ski: %w", err)
	}
	pred := regressionPrediction(mean, varf, m.hyp.Noise)
	pred.PositiveVarOnly = true
	return pred, nil
}
