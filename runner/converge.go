package runner

import (
	"math"
	"strings"

	"sgplab/gp/optim"
	"sgplab/methods"
	"sgplab/results"
)

// Convergence metrics, stored with every done run whatever the grid's
// metrics list (see convergence).
const (
	// ConvergedMetric is 1 when the fit converged, 0 when it did not, and
	// NULL (n/a) for a run without training (iterations = 0, or a method
	// that fits nothing by optimisation).
	ConvergedMetric = results.ConvergedMetric
	// RelChangeMetric is the rule's statistic: the objective's relative
	// gain per iteration over the last 10 % of the trace (optim.Diagnosis
	// RelChange); NULL when the trace is too short to judge or for n/a.
	RelChangeMetric = results.RelChangeMetric
)

// StoppedParam is the run parameter (run_params) that says why a done
// run's optimiser stopped, in the words of optim's Status values
// ("converged: gradient tolerance", "iteration limit", "stopped: line
// search made no progress", …), beside x_converged.
const StoppedParam = "fit.stopped"

// convergence judges a finished fit. A fit converged when its optimiser
// stopped by its own criterion (FitResult.Status "converged: …": L-BFGS's
// gradient tolerance or stalled objective, the stop_tol rule) or when
// optim.Rule holds on its trace: on the last phase of the trace (a warm
// start or an init phase optimises something else), with the scale floor
// the number of training points n and the tolerance stop_tol when the
// grid sets one, else optim.DefaultConvergeTol. A run without training is
// n/a: both values NaN.
func convergence(spec *RunSpec, fit methods.FitResult, trace []results.TracePoint, n int) (converged, relChange float64) {
	if spec.Iterations == 0 || fit.Iterations == 0 {
		return math.NaN(), math.NaN()
	}
	d := stopRule(spec, n).Check(lastPhase(trace))
	if d.Converged || strings.HasPrefix(fit.Status, "converged:") {
		return 1, d.RelChange
	}
	return 0, d.RelChange
}

// stopRule is the rule a run is judged (and, with stop_tol, stopped) by.
func stopRule(spec *RunSpec, n int) optim.Rule {
	return optim.Rule{Tol: spec.StopTol, Floor: float64(n)}
}

// lastPhase returns the objectives of the trace's last phase.
func lastPhase(trace []results.TracePoint) []float64 {
	start := len(trace)
	for start > 0 && trace[start-1].Phase == trace[len(trace)-1].Phase {
		start--
	}
	out := make([]float64, 0, len(trace)-start)
	for _, p := range trace[start:] {
		out = append(out, p.Objective)
	}
	return out
}

// convergenceMetrics are the ConvergedMetric and RelChangeMetric of a done
// run.
func convergenceMetrics(spec *RunSpec, oc outcome, trace []results.TracePoint) []results.Metric {
	c, rel := convergence(spec, oc.fit, trace, oc.nTrain)
	return []results.Metric{{Name: ConvergedMetric, Value: c}, {Name: RelChangeMetric, Value: rel}}
}
