package optim

import "math"

// Rule decides from an objective trace whether a fit has converged. It is
// the one convergence rule of sgplab: the runner applies it to every
// stored trace (x_converged, x_rel_change) and, when Settings.Stop or
// NatGradSettings.Stop has a Tol, every optimiser applies it online after
// each iteration and stops once it holds (StatusStopRule).
//
// A trace f₀ … f_{T−1} (the maximised objective, one value per iteration,
// oldest first) is judged on its last two windows of
//
//	w = max(⌈T/10⌉, MinWindow)
//
// points each, A = f[T−2w : T−w] and B = f[T−w : T] (the last 10 % of the
// iterations against the 10 % before). With
//
//	d   = mean(B) − mean(A)              the gain over w iterations
//	s   = max(|mean(B)|, Floor)          the objective's scale
//	rel = d / (w·s)                      the relative gain per iteration (RelChange)
//	se  = σ̂·√(2/w)                       the standard error of d, σ̂ the residual
//	                                     standard deviation of a straight line
//	                                     fitted to the 2w points
//
// the trace has converged when |d| ≤ max(Tol·w·s, Z·se): the objective
// moved by less than Tol of its scale per iteration, or by no more than
// its own noise explains (minibatch and Monte-Carlo objectives are noisy;
// a steady climb leaves small residuals about the line, so it is not
// mistaken for noise). A trace shorter than 2·MinWindow points is too
// short to judge and has not converged. Floor keeps the scale meaningful
// when the objective crosses zero: the runner sets it to the number of
// training points N (one nat per point), since every objective is a sum
// over the training set.
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
	DefaultNoiseZ      = 2
)

// Diagnosis is the outcome of Rule.Check.
type Diagnosis struct {
	Converged bool
	// RelChange is rel above (signed: negative when the objective fell);
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
// in the windows make the trace unconverged.
func (r Rule) Check(f []float64) Diagnosis {
	r = r.withDefaults()
	t := len(f)
	w := max((t+9)/10, r.MinWindow)
	if t < 2*w {
		return Diagnosis{RelChange: math.NaN()}
	}
	win := f[t-2*w:]
	var sumA, sumB float64
	for i, v := range win {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Diagnosis{RelChange: math.NaN(), Window: w}
		}
		if i < w {
			sumA += v
		} else {
			sumB += v
		}
	}
	meanA, meanB := sumA/float64(w), sumB/float64(w)
	d := meanB - meanA
	s := math.Max(math.Abs(meanB), r.Floor)
	rel := d / (float64(w) * s)
	limit := math.Max(r.Tol*float64(w)*s, r.Z*lineResidualSD(win)*math.Sqrt(2/float64(w)))
	return Diagnosis{Converged: math.Abs(d) <= limit, RelChange: rel, Window: w}
}

// lineResidualSD is the residual standard deviation of the least-squares
// line through (i, y[i]), with n − 2 degrees of freedom.
func lineResidualSD(y []float64) float64 {
	n := float64(len(y))
	xMean := (n - 1) / 2
	var yMean float64
	for _, v := range y {
		yMean += v
	}
	yMean /= n
	var sxy, sxx float64
	for i, v := range y {
		dx := float64(i) - xMean
		sxy += dx * (v - yMean)
		sxx += dx * dx
	}
	slope := sxy / sxx
	var rss float64
	for i, v := range y {
		e := v - yMean - slope*(float64(i)-xMean)
		rss += e * e
	}
	return math.Sqrt(rss / (n - 2))
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
