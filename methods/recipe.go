package methods

import (
	"fmt"
	"strconv"
	"strings"

	"sgplab/gp/optim"
)

// A Recipe is how a fit trains: the optimiser, its step size, natural
// gradients on q(u), and the iteration budget. A method declares its
// default recipe (Method.Fit); a grid's fit settings replace parts of it
// (Method.Recipe).
type Recipe struct {
	// Optimizer is optim.LBFGS or optim.Adam; "" for a method that fits
	// nothing by optimisation.
	Optimizer string
	// LearningRate is Adam's step size: in a declared default, the step a
	// grid that names adam without a learning_rate gets (0:
	// optim.DefaultAdamLearningRate); resolved (Method.Recipe), 0 unless
	// the optimiser is Adam.
	LearningRate float64
	// NatGrad is the step γ of natural-gradient updates of every q(u),
	// made beside Adam on the other parameters (Salimbeni et al. 2018);
	// 0: q(u) moves with the other parameters by Optimizer.
	NatGrad float64
	// Iterations is the budget a grid without an iterations key gets, and
	// StopTol the stopping tolerance (optim.Rule) that ends such a fit
	// early when the grid gives no stop_tol (0: none). A grid that sets
	// iterations runs that many unless it sets stop_tol too.
	Iterations int
	StopTol    float64
	// StopWindow is the smallest window of the stopping rule
	// (optim.Rule.MinWindow) while StopTol can end the fit; 0:
	// optim.DefaultMinWindow. A minibatch objective is noisy: over a short
	// window a steady climb is within its noise and the rule holds long
	// before the fit has converged.
	StopWindow int
	// WarmStart is a first phase of up to this many full-batch L-BFGS
	// iterations on everything trainable, on a seeded random subset of
	// WarmStartPoints training rows (all rows when there are fewer),
	// before the fit proper (0: none). The parameters
	// warm_start_iterations and warm_start_points replace the default's.
	WarmStart, WarmStartPoints int
}

// String is the recipe in words, e.g. "L-BFGS, 1000 iterations" or
// "natural gradients on q(u) (γ = 1) + Adam (learning rate 0.01), 2000
// iterations".
func (r Recipe) String() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if r.LearningRate == 0 {
		r.LearningRate = optim.DefaultAdamLearningRate
	}
	var s string
	switch {
	case r.Optimizer == "":
		return "no optimisation"
	case r.NatGrad > 0:
		s = fmt.Sprintf("natural gradients on q(u) (γ = %s) + Adam (learning rate %s) on the rest", num(r.NatGrad), num(r.LearningRate))
	case r.Optimizer == optim.Adam:
		s = fmt.Sprintf("Adam (learning rate %s)", num(r.LearningRate))
	case r.Optimizer == optim.LBFGS:
		s = "L-BFGS"
	default:
		s = r.Optimizer
	}
	if r.WarmStart > 0 {
		s = fmt.Sprintf("L-BFGS warm start (%d iterations on %d random rows), then %s", r.WarmStart, r.WarmStartPoints, s)
	}
	if r.Iterations > 0 {
		s += fmt.Sprintf(", %d iterations", r.Iterations)
		switch {
		case r.StopTol > 0 && r.StopWindow > 0:
			s = fmt.Sprintf("%s at most (until converged at stop_tol %s over at least the last %d iterations)", s, num(r.StopTol), r.StopWindow)
		case r.StopTol > 0:
			s = fmt.Sprintf("%s at most (until converged at stop_tol %s)", s, num(r.StopTol))
		}
	}
	return s
}

// FitCase is what a default recipe may depend on beside the parameters:
// the task and whether the fit draws minibatches (batch_size below the
// number of training rows).
type FitCase struct {
	Task      Task
	Minibatch bool
}

// FitCases are the cases a method's default recipe is declared for: its
// tasks, each full batch and, when minibatch is set, with minibatches.
func (m Method) FitCases(minibatch bool) []FitCase {
	var out []FitCase
	for _, t := range m.Tasks {
		out = append(out, FitCase{Task: t})
		if minibatch {
			out = append(out, FitCase{Task: t, Minibatch: true})
		}
	}
	return out
}

// DefaultRecipe is the recipe of a method that declares none: L-BFGS for
// 1000 iterations, Adam at optim.DefaultAdamLearningRate with minibatches.
func DefaultRecipe(_ Params, c FitCase) Recipe {
	if c.Minibatch {
		return Recipe{Optimizer: optim.Adam, LearningRate: optim.DefaultAdamLearningRate, Iterations: 1000}
	}
	return Recipe{Optimizer: optim.LBFGS, Iterations: 1000}
}

// DefaultStopTol is the stopping tolerance of the declared default
// budgets (optim.Rule: the objective moves by less than 10⁻⁵ of its scale
// per iteration).
const DefaultStopTol = 1e-5

// NoFit is the recipe of a method that fits nothing by optimisation.
func NoFit(Params, FitCase) Recipe { return Recipe{} }

// DefaultFit is the method's default recipe for parameters p in case c.
func (m Method) DefaultFit(p Params, c FitCase) Recipe {
	if m.Fit == nil {
		return DefaultRecipe(p, c)
	}
	return m.Fit(p, c)
}

// legacyFit is the default recipe before the method declared Fit.
func (m Method) legacyFit(p Params, c FitCase) Recipe {
	if m.Legacy == nil {
		return m.DefaultFit(p, c)
	}
	return m.Legacy(p, c)
}

// Recipe is the recipe a fit with options opt runs on n training rows (0:
// not known; then any batch_size counts as minibatches): every fit setting
// opt gives, the method's defaults (Fit) for the others. An optimiser
// named in opt replaces the default optimiser and its natural-gradient
// steps (the parameter natgrad_step asks for those explicitly); Adam's
// step size is opt's, else the default's.
// opt.Iterations is the budget as it is (0 evaluates the objective once);
// a grid that leaves it out gets the default's.
func (m Method) Recipe(p Params, opt FitOptions, n int) Recipe {
	return resolveRecipe(m.DefaultFit(p, fitCase(opt, n)), p, opt)
}

// LegacyRecipe is Recipe under the defaults the method had before it
// declared Fit (Method.Legacy); equal to Recipe when they did not change.
func (m Method) LegacyRecipe(p Params, opt FitOptions, n int) Recipe {
	return resolveRecipe(m.legacyFit(p, fitCase(opt, n)), p, opt)
}

func fitCase(opt FitOptions, n int) FitCase {
	return FitCase{Task: opt.Task, Minibatch: opt.BatchSize > 0 && (n <= 0 || opt.BatchSize < n)}
}

func resolveRecipe(r Recipe, p Params, opt FitOptions) Recipe {
	r.Iterations, r.StopTol = opt.Iterations, opt.Stop.Tol
	if opt.Stop.MinWindow > 0 {
		r.StopWindow = opt.Stop.MinWindow
	}
	if r.StopTol == 0 {
		r.StopWindow = 0 // nothing stops the fit early
	}
	if r.Optimizer == "" {
		return Recipe{Iterations: opt.Iterations, StopTol: opt.Stop.Tol}
	}
	if o := strings.ToLower(opt.Optimizer); o != "" {
		r.Optimizer, r.NatGrad, r.WarmStart = o, 0, 0
	}
	if p.Has(natGradParam) {
		r.NatGrad = p.Float(natGradParam)
	}
	if p.Has(warmStartParam) {
		r.WarmStart = p.Int(warmStartParam)
		if !p.Has(warmPointsParam) {
			r.WarmStartPoints = defaultWarmStartPoints
		}
	}
	if p.Has(warmPointsParam) {
		r.WarmStartPoints = p.Int(warmPointsParam)
	}
	if r.WarmStart == 0 {
		r.WarmStartPoints = 0
	}
	if opt.LearningRate > 0 {
		r.LearningRate = opt.LearningRate
	}
	if r.LearningRate == 0 {
		r.LearningRate = optim.DefaultAdamLearningRate
	}
	if r.Optimizer != optim.Adam {
		r.LearningRate = 0 // Adam's only
	}
	return r
}

// natGradParam is the parameter that asks for natural gradients on q(u).
const natGradParam = "natgrad_step"

// The parameters of the warm start (warmStartParams).
const (
	warmStartParam  = "warm_start_iterations"
	warmPointsParam = "warm_start_points"
)

// settings are the optimiser settings of recipe r with the other fit
// options of opt (gradient tolerance, stopping rule, whose smallest window
// is the recipe's unless opt gives one).
func (r Recipe) settings(opt FitOptions) (optim.Settings, error) {
	o := opt
	o.Optimizer, o.LearningRate = r.Optimizer, r.LearningRate
	if o.Stop.MinWindow == 0 && o.Stop.Tol > 0 {
		o.Stop.MinWindow = r.StopWindow
	}
	return Settings(o, r.Optimizer)
}
