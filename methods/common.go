package methods

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/inducing"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/likelihoods"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Parameter-name prefixes shared by the inducing-point methods.
const (
	KernelPrefix  = "kernel."
	InducingName  = "inducing.z"
	inducingPfx   = "inducing."
	likelihoodPfx = ""
	noiseName     = likelihoodPfx + likelihoods.NoiseVarianceName
)

// KernelDefaults are one method's kernel choices and initial values for
// KernelParamsFor. Zero fields take the shared defaults, so every method
// names its kernel parameters identically and differs only in defaults.
type KernelDefaults struct {
	Kernel      string   // default kernel ("se")
	Choices     []string // kernels the method supports (every base kernel)
	KernelDoc   string   // documentation of the kernel parameter ("covariance function")
	Fixed       bool     // the method works only with Kernel: no kernel parameter
	Variance    float64  // initial kernel variance (1)
	Lengthscale float64  // initial lengthscale of every dimension (1)
	OneD        bool     // the method is 1-D only: no ard parameter
}

// KernelParams documents the kernel choice and its initial hyperparameters
// with the shared defaults.
func KernelParams() []ParamDoc { return KernelParamsFor(KernelDefaults{}) }

// KernelParamsFor documents the kernel parameters (kernel, variance,
// lengthscales, ard) with a method's own defaults d.
func KernelParamsFor(d KernelDefaults) []ParamDoc {
	name := cmp.Or(d.Kernel, "se")
	choices := d.Choices
	if choices == nil {
		// The additive Matérn and SE kernels (f = Σ_d f_d of 1-D kernels) are
		// the composites papers use as baselines (ODVFF §5: additive
		// Matérn-3/2 for SVGP, ODVGP and SGPR); kernels.New builds any other
		// composite too, but the choice list names only these.
		choices = slices.Concat(kernels.Names(), []string{"additive(se)", "additive(matern12)", "additive(matern32)", "additive(matern52)"})
	}
	var out []ParamDoc
	if !d.Fixed {
		out = append(out, ParamDoc{Name: "kernel", Kind: String, Default: name, Choices: choices, Doc: cmp.Or(d.KernelDoc, "covariance function")})
	}
	lsDoc := "initial lengthscale(s): one value, or one per input dimension"
	if d.OneD {
		lsDoc = "initial lengthscale (one value: the method is 1-D)"
	}
	out = append(out,
		ParamDoc{Name: "variance", Kind: Float, Default: cmp.Or(d.Variance, 1.0), Range: Positive, Doc: "initial kernel variance"},
		ParamDoc{Name: "lengthscales", Kind: Floats, Default: []float64{cmp.Or(d.Lengthscale, 1.0)}, Range: Positive, Doc: lsDoc})
	if !d.OneD {
		out = append(out, ParamDoc{Name: "ard", Kind: Bool, Default: true, Doc: "one lengthscale per input dimension"})
	}
	return out
}

// NoiseParams documents the Gaussian noise variance with the shared default.
func NoiseParams() []ParamDoc { return NoiseParamsFor(1) }

// NoiseParamsFor documents the Gaussian noise variance with initial value v.
func NoiseParamsFor(v float64) []ParamDoc {
	return []ParamDoc{{Name: "noise_variance", Kind: Float, Default: v, Range: Positive, Doc: "initial Gaussian noise variance"}}
}

// InducingParams documents the number and initialisation of inducing inputs.
func InducingParams(defaultM int) []ParamDoc {
	return []ParamDoc{
		{Name: "num_inducing", Kind: Int, Default: defaultM, Range: Count,
			Doc: "number of inducing inputs M, capped at the number of training rows N unless inducing_init = normal (a run records the M it used as num_features; validation warns when the dataset is known to be smaller)"},
		{Name: "inducing_init", Kind: String, Default: "kmeans", Choices: []string{"kmeans", "greedy", "random", "normal", "file"},
			Doc: "initial Z: k-means centres (of at most 20 000 random training inputs), greedy conditional variance, a random subset of X, i.i.d. N(0, I) draws (normal: not capped at N, the VISH authors' SVGP baseline on standardised inputs), or z_file"},
		{Name: "z_file", Kind: String, Doc: "CSV of inducing inputs (one per row; optional header) for inducing_init = file; it must have num_inducing rows (checked before anything runs)"},
		{Name: "train_inducing", Kind: Bool, Default: true, Doc: "optimise Z with the hyperparameters"},
	}
}

// NumericParams documents the jitter.
func NumericParams() []ParamDoc {
	return []ParamDoc{{Name: "jitter", Kind: Float, Default: inference.DefaultJitter, Range: NonNegative, Doc: "added to the diagonal of Kuu before factorising it"}}
}

func concat(docs ...[]ParamDoc) []ParamDoc {
	var out []ParamDoc
	for _, d := range docs {
		out = append(out, d...)
	}
	return out
}

// NewKernel builds the kernel named by p on dim inputs.
func NewKernel(p Params, dim int) (kernels.Kernel, error) {
	return NewKernelNamed(p.String("kernel"), p, dim)
}

// NewKernelNamed builds the kernel name on dim inputs with the initial
// hyperparameters in p (for methods whose kernel is fixed).
func NewKernelNamed(name string, p Params, dim int) (kernels.Kernel, error) {
	return kernels.New(name, dim, kernelOptions(p))
}

// kernelOptions are the initial kernel hyperparameters in p.
func kernelOptions(p Params) kernels.Options {
	return kernels.Options{Variance: p.Float("variance"), Lengthscales: initialLengthscales(p), ARD: p.Bool("ard")}
}

// initialLengthscales are the lengthscales in p. Every method spells them
// "lengthscales" (a list), so one grid key sweeps them for all methods.
func initialLengthscales(p Params) []float64 { return p.Floats("lengthscales") }

// newRegressionSet declares kern's hyperparameters under KernelPrefix and
// the Gaussian noise variance (noise_variance) at the initial value in p.
func newRegressionSet(kern kernels.Kernel, p Params) (*param.Set, error) {
	s := param.NewSet()
	if err := kern.Declare(s, KernelPrefix); err != nil {
		return nil, err
	}
	if err := likelihoods.NewGaussian(p.Float("noise_variance")).Declare(s, likelihoodPfx); err != nil {
		return nil, err
	}
	return s, nil
}

// standardKernel is the kernel builder of the sparse methods whose kernel
// is any base or additive kernel (NewKernel).
func standardKernel(p Params, dim int, s *param.Set) (kernels.Kernel, error) {
	k, err := NewKernel(p, dim)
	if err != nil {
		return nil, err
	}
	return k, k.Declare(s, KernelPrefix)
}

// fitRNG is the random stream of one fit; stream separates uses.
func fitRNG(opt FitOptions, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(opt.Seed, stream))
}

// initInducing draws count inducing inputs, capped at the rows of x
// unless they are drawn from N(0, I) (inducing_init = normal), which needs
// no training input per point.
func initInducing(p Params, count int, x *mat.Dense, kern kernels.Kernel, s *param.Set, rng *rand.Rand) (*mat.Dense, error) {
	n, d := x.Dims()
	init := p.String("inducing_init")
	m := count
	if capsAtN(init) {
		m = min(count, n)
	}
	if m < 1 && init != "file" {
		return nil, fmt.Errorf("num_inducing must be ≥ 1, got %d", count)
	}
	if p.String("z_file") != "" && init != "file" {
		return nil, fmt.Errorf("z_file is given but inducing_init = %q; set inducing_init = \"file\" to use it", init)
	}
	switch init {
	case "kmeans":
		return kmeansZ(x, m, rng)
	case "random":
		return inducing.RandomSubset(x, m, rng)
	case "normal":
		z := mat.NewDense(m, d, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return z, nil
	case "greedy":
		z, _, err := inducing.Greedy(x, m, kern, s, KernelPrefix)
		if err != nil && (z == nil || !errors.Is(err, inducing.ErrExhausted)) {
			return nil, err
		}
		return z, nil
	case "file":
		if p.String("z_file") == "" {
			return nil, errors.New("inducing_init = file needs z_file")
		}
		z, err := inducing.FromCSV(p.String("z_file"), d)
		if err != nil {
			return nil, err
		}
		if rows, _ := z.Dims(); rows != count {
			return nil, fmt.Errorf("z_file %s has %d rows but num_inducing = %d; with inducing_init = file M is the file's row count: set num_inducing = %d", p.String("z_file"), rows, count, rows)
		}
		return z, nil
	}
	return nil, fmt.Errorf("unknown inducing_init %q", init)
}

// capsAtN reports whether inducing_init = init takes its inducing inputs
// from the training rows (so at most N of them): every choice but normal.
func capsAtN(init string) bool { return init != "normal" }

// Settings turns the fit options into optimiser settings; defaultMethod is
// used when opt.Optimizer is empty.
func Settings(opt FitOptions, defaultMethod string) (optim.Settings, error) {
	method := strings.ToLower(opt.Optimizer)
	if method == "" {
		method = defaultMethod
	}
	if method != optim.LBFGS && method != optim.Adam {
		return optim.Settings{}, fmt.Errorf("unknown optimizer %q; valid: %s, %s", opt.Optimizer, optim.LBFGS, optim.Adam)
	}
	if opt.Iterations < 0 {
		return optim.Settings{}, fmt.Errorf("iterations must be ≥ 0, got %d", opt.Iterations)
	}
	if opt.LBFGSMemory < 0 {
		return optim.Settings{}, fmt.Errorf("lbfgs_memory must be ≥ 0, got %d", opt.LBFGSMemory)
	}
	return optim.Settings{Method: method, MaxIter: opt.Iterations, GradTol: opt.GradTol, FTol: opt.FTol, LBFGSMemory: opt.LBFGSMemory,
		LearningRate: opt.LearningRate, Stop: opt.Stop}, nil
}

// trainableNames lists the parameters of s currently marked trainable, so
// that optim.Train leaves fixed ones (e.g. Z with train_inducing = false)
// fixed.
func trainableNames(s *param.Set) []string {
	out := []string{} // not nil: nil would make optim.Train train everything
	for _, n := range s.Names() {
		if s.Trainable(n) {
			out = append(out, n)
		}
	}
	return out
}

// Train maximises obj over the trainable parameters of s in one phase,
// reporting Progress every iteration. Iterations = 0 evaluates obj once.
func Train(ctx context.Context, s *param.Set, obj func(*ad.Tape, *param.Bound) (*ad.Node, error), st optim.Settings,
	phase string, start time.Time, progress func(Progress)) (optim.Report, error) {
	return optim.Train(ctx, s, obj, []optim.Phase{{Name: phase, Trainable: trainableNames(s), Settings: st}},
		func(p optim.Progress) {
			if progress != nil {
				progress(Progress{Phase: p.Phase, Iteration: p.Iteration, Objective: p.Objective, Elapsed: time.Since(start)})
			}
		})
}

// NewFitResult summarises a training report. Parameters named in hide (such
// as Z or q(u)) are left out of Hyper.
func NewFitResult(rep optim.Report, s *param.Set, hide ...string) FitResult {
	res := FitResult{Objective: rep.Objective, Iterations: rep.Iterations, Status: rep.Status, Fitted: s, Extra: map[string]float64{}}
	if rep.Rejected > 0 {
		// L-BFGS trial points where the objective failed (e.g. a Cholesky
		// at a too small noise variance), rejected as too long a step.
		res.Extra["rejected_steps"] = float64(rep.Rejected)
	}
	for _, p := range rep.Trace {
		res.Trace = append(res.Trace, TracePoint{Iteration: p.Iteration, Elapsed: p.Elapsed.Seconds(), Objective: p.Objective})
	}
	for _, h := range s.Natural() {
		if !contains(hide, h.Name) {
			res.Hyper = append(res.Hyper, h)
		}
	}
	return res
}

// trainErr keeps cancellation errors as they are (the caller reports the
// partial result) and labels the others with the method name.
func trainErr(method string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: %w", method, err)
}

// checkTask fails for a task the method does not support.
func checkTask(method string, opt FitOptions, tasks ...Task) error {
	if opt.Task == "" {
		return nil
	}
	for _, t := range tasks {
		if opt.Task == t {
			return nil
		}
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = string(t)
	}
	return fmt.Errorf("%s: task %q not supported (%s only)", method, opt.Task, strings.Join(names, " and "))
}

// checkInputs fails when test inputs do not match the training dimension.
func checkInputs(method string, fitted bool, x *mat.Dense, dim int) error {
	if !fitted {
		return fmt.Errorf("%s: Predict before Fit", method)
	}
	if x == nil {
		return fmt.Errorf("%s: Predict with no inputs", method)
	}
	if _, d := x.Dims(); d != dim {
		return fmt.Errorf("%s: test inputs have %d columns, training inputs had %d", method, d, dim)
	}
	return checkFinite(method, x)
}

// checkFinite rejects NaN and ±Inf test inputs: some features panic on them
// and the others would return NaN predictions without saying why.
func checkFinite(method string, x *mat.Dense) error {
	n, d := x.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: test input [%d,%d] = %v is not finite; remove or impute it before Predict", method, i, j, v)
			}
		}
	}
	return nil
}

// regressionPrediction adds the Gaussian noise to the latent marginals.
func regressionPrediction(mean, varf []float64, noise float64) Prediction {
	vy := make([]float64, len(varf))
	for i, v := range varf {
		vy[i] = v + noise
	}
	return Prediction{Mean: mean, VarF: varf, VarY: vy}
}

// columnOf returns y as an N×1 matrix.
func columnOf(y []float64) *mat.Dense { return mat.NewDense(len(y), 1, append([]float64(nil), y...)) }
