package methods

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/optim"
	"sgplab/gp/param"
)

// Task is what a method can be used for.
type Task string

const (
	Regression     Task = "regression"
	Classification Task = "classification"
)

// Method describes one registered method: what it is, its parameters and
// what a run of it will need, so that the runner learns everything it
// checks before running from the method rather than from parameter names
// (see Plan).
type Method struct {
	Name    string // registry key, e.g. "sgpr"
	Summary string // one line for `sgplab methods`
	Paper   string // where it comes from, e.g. "Titsias (2009)"
	Tasks   []Task
	Params  []ParamDoc
	// New builds an untrained model from validated parameters.
	New func(p Params) (Model, error)

	// Exact marks a method that factorises an N×N matrix every step and
	// has no inducing variables (gpr, agpr).
	Exact bool
	// MaxDim is the largest input dimension the method handles (0: any),
	// checked before anything runs once the dataset is known.
	MaxDim int
	// Check validates combinations of parameters that no single range
	// expresses (each parameter's own range is its ParamDoc's); nil: none.
	Check func(p Params) error
	// Needs returns what a run with parameters p on data of shape s will
	// need: its number of inducing variables M and a lower bound of its
	// memory, or an error when it cannot run (a feature set too large to
	// count, more inducing points than training rows). nil: nothing to
	// declare (no inducing variables, negligible memory).
	Needs func(p Params, s Shape) (Plan, error)

	// Fit is the method's default fit recipe for parameters p in case c:
	// what a run gets for every fit setting its grid leaves out (see
	// Recipe). nil: DefaultRecipe.
	Fit func(p Params, c FitCase) Recipe
	// FitDoc says in words how the default recipe depends on the
	// parameters, for `sgplab methods` ("" when it does not).
	FitDoc string
	// QInit says where q(u) starts, for `sgplab methods` ("": no q(u) or
	// nothing beyond the parameters).
	QInit string
	// KernelName names the kernel a run with parameters p uses, for a
	// method whose kernel is not its kernel parameter's value (nil: that
	// value, or none).
	KernelName func(p Params) string
	// Legacy is the default recipe the method had before it declared
	// Fit, when that differs (nil: it does not). A run whose recipe
	// resolves differently under the two carries its recipe in its id, so
	// that a stored result never means something else under an unchanged
	// run id.
	Legacy func(p Params, c FitCase) Recipe
}

// Supports reports whether the method handles task.
func (m Method) Supports(task Task) bool {
	for _, t := range m.Tasks {
		if t == task {
			return true
		}
	}
	return false
}

// FitOptions are the training settings a grid gives, shared by all methods.
type FitOptions struct {
	// Iterations is the optimiser's iteration budget; 0 evaluates the
	// objective at the initial values without training.
	Iterations   int
	Optimizer    string  // "lbfgs" or "adam"; "" is the method's default
	LearningRate float64 // Adam step size; 0 is the method's default
	BatchSize    int     // minibatch size for stochastic objectives; 0 is full batch
	GradTol      float64 // L-BFGS gradient-norm tolerance; 0 is the default
	// FTol is SciPy L-BFGS-B's relative-reduction test (optim.Settings.FTol);
	// 0 is off.
	FTol float64
	// LBFGSMemory is the number of curvature pairs L-BFGS keeps
	// (optim.Settings.LBFGSMemory); 0 is optim.DefaultLBFGSMemory.
	LBFGSMemory int
	Seed        uint64 // seeds every random draw of the fit (minibatches, MC samples, k-means)
	Task        Task
	// Stop ends the fit early once the convergence rule holds on the
	// objective's trace (every optimiser: L-BFGS, Adam, natural
	// gradients); the zero Rule (Tol 0) is off.
	Stop optim.Rule
}

// Progress is reported by Fit after every optimiser iteration.
type Progress struct {
	Phase     string
	Iteration int
	Objective float64 // the objective being maximised (ELBO or log marginal likelihood)
	Elapsed   time.Duration
}

// TracePoint is one row of a training trace.
type TracePoint struct {
	Iteration int
	Elapsed   float64 // seconds since Fit started
	Objective float64
}

// FitResult summarises a finished fit.
type FitResult struct {
	Objective  float64 // final objective (maximised; e.g. the ELBO), total over the training set
	Iterations int
	// Status is why the optimiser stopped (optim.Status…, of the last
	// phase); "converged: …" means by its own criterion (gradient
	// tolerance, stalled objective, the stopping rule). Empty when unknown.
	Status string
	Trace  []TracePoint
	Hyper  []param.Named // final hyperparameters in natural units
	// Fitted is the model's parameter set after Fit (read it, do not
	// change it), nil for a method without one; the runner builds the
	// artifacts "z" and "q" from it (FittedArtifact).
	Fitted *param.Set
	// Extra holds method-specific scalar results (e.g. "exact_lml", "jitter");
	// they are stored as metrics under these names.
	Extra map[string]float64
}

// Prediction holds predictive marginals at test inputs.
type Prediction struct {
	Mean []float64 // latent mean E[f*]
	VarF []float64 // latent variance Var[f*]
	// VarY is the predictive variance of y* (VarF plus noise) for regression.
	VarY []float64
	// ProbPositive is p(y* = +1) for classification.
	ProbPositive []float64
	// PositiveVarOnly asks the scorer to average NLPD and coverage over the
	// test points with VarY > 0 only and to count the others
	// (metrics.RegressionPositiveVar): set by SKI, whose variances can be
	// negative, as the IFF paper scores it.
	PositiveVarOnly bool
}

// Model is a method instance: trained by Fit, queried by Predict.
type Model interface {
	Fit(ctx context.Context, train gp.Data, opt FitOptions, progress func(Progress)) (FitResult, error)
	Predict(x *mat.Dense) (Prediction, error)
}

var (
	mu       sync.RWMutex
	registry = map[string]Method{}
)

// Register adds a method. It panics on a duplicate name or missing fields,
// since both are programming errors found at start-up.
func Register(m Method) {
	mu.Lock()
	defer mu.Unlock()
	if m.Name == "" || m.New == nil || len(m.Tasks) == 0 {
		panic(fmt.Sprintf("methods: incomplete registration %+v", m.Name))
	}
	if _, dup := registry[m.Name]; dup {
		panic("methods: " + m.Name + " registered twice")
	}
	seen := map[string]bool{}
	for _, p := range m.Params {
		if seen[p.Name] {
			panic("methods: " + m.Name + ": parameter " + p.Name + " documented twice")
		}
		seen[p.Name] = true
	}
	registry[m.Name] = m
}

// Names returns the registered method names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// All returns every registered method, sorted by name.
func All() []Method {
	names := Names()
	out := make([]Method, len(names))
	mu.RLock()
	defer mu.RUnlock()
	for i, n := range names {
		out[i] = registry[n]
	}
	return out
}

// Lookup finds a method by name; the error lists the valid names.
func Lookup(name string) (Method, error) {
	mu.RLock()
	m, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return Method{}, fmt.Errorf("unknown method %q; valid methods: %s", name, strings.Join(Names(), ", "))
	}
	return m, nil
}

// Build validates raw parameters against the method and constructs a model.
func Build(name string, raw map[string]any) (Model, error) {
	m, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	p, err := m.Validate(raw)
	if err != nil {
		return nil, err
	}
	if err := m.CheckParams(p); err != nil {
		return nil, err
	}
	return m.New(p)
}
