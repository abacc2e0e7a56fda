package runner

import (
	"math"

	"sgplab/gp"
	"sgplab/methods"
)

// exactLMLMetric is the stable metric a grid lists to ask for the exact log
// marginal likelihood at the fitted hyperparameters.
const exactLMLMetric = "log_marginal_likelihood"

// addExactLML fills the exact log marginal likelihood into the fit's extras
// when the grid lists it among its metrics, the method did not report it
// itself and the model can compute it (methods.ExactLMLModel). It is O(N³),
// so it is never computed unasked, and it runs after Fit so train_seconds
// excludes it. A failure (e.g. a covariance that is not positive definite
// at the fitted hyperparameters) is stored as NaN rather than failing a run
// whose fit succeeded.
func addExactLML(spec *RunSpec, fit *methods.FitResult, model methods.Model, train gp.Data) {
	if !contains(spec.Metrics, exactLMLMetric) {
		return
	}
	if _, done := fit.Extra[exactLMLMetric]; done {
		return
	}
	em, ok := model.(methods.ExactLMLModel)
	if !ok {
		return
	}
	v, err := em.ExactLML(train)
	if err != nil {
		v = math.NaN()
	}
	if fit.Extra == nil {
		fit.Extra = map[string]float64{}
	}
	fit.Extra[exactLMLMetric] = v
}
