package optim

import "math"

// Rule decides from an objective trace whether a fit has converged. It is
// the one convergence rule of sgplab: the runner applies it to every
// stored trace (x_converged, x_rel_change) and, when Settings.Stop or
// NatGradSettings.Stop has a Tol, every optimiser applies it online after
// each iteration and stops once it holds (StatusStopRule).
//
// A trace f₀ … f_{T−1} (the maximised objective, one value per iteration,
// oldest first) is judged on its last
//
//	w = max(⌈T/10⌉, MinWindow)
//
// points (the last 10 % of the iterations). With a least-squares line
// fitted to them,
//
//	b   = its slope                      the gain per iteration
//	s   = max(|mean of the window|, Floor) the objective's scale
//	rel = b / s                          the relative gain per iteration (RelChange)
//	se  = σ̂·√(12 / (w³ − w))             the standard error of b, σ̂ the residual
//	                                     standard deviation about the line
//
// the trace has converged when |b| ≤ max(Tol·s, Z·se): the objective moves
// by less than Tol of its scale per iteration, or by no more than its own
// noise explains (minibatch and Monte-Carlo objectives are noisy; a steady
// climb leaves small residuals about the line, so it is not mistaken for
// noise). A falling objective counts like a rising one. A trace shorter
// than 2·MinWindow points is too short to judge and has not converged.
// Floor keeps the scale meaningful when the objective crosses zero: the
// runner sets it to the number of training points N (one nat per point),
// since every objective is a sum over the training set.
type Rule struct {
	Tol       float64 // relative change per iteration; 0 is DefaultConvergeTol
	Floor     float64 // lower bound of the scale s; 0 is 1
	MinWindow int     // smallest window; 0 is DefaultMinWindow
	Z         float64 // noise threshold in standard errors; 0 is DefaultNoiseZ
}

// Defaults of Rule.
const (
	// DefaultConvergeTol is a gain of 10⁻⁵ of the objective's scale per
	// iteration: over the last 10 % of a 1000-step fit, 1 % of the scale.
	DefaultConvergeTol = 1e-5
	DefaultMinWindow   = 10
	// DefaultNoiseZ is three standard errors: a flat noisy trace is
	// flagged by chance about 0.3 % of the time.
	DefaultNoiseZ = 3
)

// Diagnosis is the outcome of Rule.Check.
type Diagnosis struct {
	Converged bool
	// RelChange is rel above (signed: negative when the objective falls);
	// NaN when the trace is too short to judge.
	RelChange float64
	Window    int // w; 0 when the trace is too short
}

func (r Rule) withDefaults() Rule {
	if r.Tol <= 0 {
		r.Tol = DefaultConvergeTol
	}
	if r.Floor <= 0 {
		r.Floor = 1
	}
	if r.MinWindow <= 0 {
		r.MinWindow = DefaultMinWindow
	}
	if r.Z <= 0 {
		r.Z = DefaultNoiseZ
	}
	return r
}

// Check applies the rule to the trace f (oldest first). Non-finite values
// in the window make the trace unconverged.
func (r Rule) Check(f []float64) Diagnosis {
	r = r.withDefaults()
	t := len(f)
	if t < 2*r.MinWindow {
		return Diagnosis{RelChange: math.NaN()}
	}
	w := max((t+9)/10, r.MinWindow)
	win := f[t-w:]
	for _, v := range win {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Diagnosis{RelChange: math.NaN(), Window: w}
		}
	}
	mean, slope, sd := fitLine(win)
	s := math.Max(math.Abs(mean), r.Floor)
	n := float64(w)
	se := sd * math.Sqrt(12/(n*n*n-n))
	return Diagnosis{Converged: math.Abs(slope) <= math.Max(r.Tol*s, r.Z*se), RelChange: slope / s, Window: w}
}

// fitLine fits the least-squares line through (i, y[i]) and returns the
// mean of y, the slope and the residual standard deviation (n − 2 degrees
// of freedom).
func fitLine(y []float64) (mean, slope, sd float64) {
	n := float64(len(y))
	xMean := (n - 1) / 2
	for _, v := range y {
		mean += v
	}
	mean /= n
	var sxy, sxx float64
	for i, v := range y {
		dx := float64(i) - xMean
		sxy += dx * (v - mean)
		sxx += dx * dx
	}
	slope = sxy / sxx
	var rss float64
	for i, v := range y {
		e := v - mean - slope*(float64(i)-xMean)
		rss += e * e
	}
	return mean, slope, math.Sqrt(rss / (n - 2))
}

// stopper applies a Rule online: it keeps the objective values seen so far
// and reports when the rule holds. A nil stopper never stops.
type stopper struct {
	rule Rule
	f    []float64
}

// newStopper returns a stopper for the rule, nil (never stops) when its
// Tol is 0: online stopping is off unless asked for.
func newStopper(r Rule) *stopper {
	if r.Tol <= 0 {
		return nil
	}
	return &stopper{rule: r}
}

// add records the objective (maximised) of the next iteration and reports
// whether the fit may stop.
func (s *stopper) add(f float64) bool {
	if s == nil {
		return false
	}
	s.f = append(s.f, f)
	return s.rule.Check(s.f).Converged
}
