// Package optim fits model parameters: Minimize runs L-BFGS (through
// gonum/optimize) or Adam on a flat vector with an evaluation budget, a
// gradient tolerance and a clean stop on non-finite values or context
// cancellation; Train maximises an objective recorded on an ad.Tape over
// the trainable entries of a param.Set, phase by phase; NatGradStep takes a
// natural-gradient step for a Gaussian variational distribution, and
// TrainNatGrad pairs the same step, computed in q's Cholesky factor, with
// Adam.
//
// Besides its gradient tolerance, L-BFGS can stop by SciPy L-BFGS-B's
// relative-reduction test (Settings.FTol, SciPyFTol), for papers whose
// fits scipy.optimize's defaults ended. Settings.LBFGSMemory sets how many
// curvature pairs it keeps (DefaultLBFGSMemory, 15; SciPy's L-BFGS-B keeps
// 10, torch's LBFGS 100).
//
// Rule is sgplab's one convergence rule (the relative gain of the
// objective per iteration over the last 10 % of a trace, tested against
// the trace's own noise); Settings.Stop and NatGradSettings.Stop apply it
// online to end a fit early, and the runner applies it to every stored
// trace.
//
// Minimize always returns the best finite point it evaluated (L-BFGS) or its
// last finite iterate (Adam, whose objective values are often minibatch
// estimates), so a run that is stopped early still leaves a usable model.
//
// An L-BFGS line search that fails ends the fit as converged when the
// objective has stalled at rounding: the last step gained at most scipy
// L-BFGS-B's relative 2.2·10⁻⁹, or the step being tried promised no more
// (½|gᵀp| by the quasi-Newton model), so that its gain is lost in the
// objective's rounding error. Otherwise, as scipy does, L-BFGS forgets its
// curvature pairs and goes on from the best point with a steepest-descent
// step; a failure before the first step of such a leg ends the fit
// unconverged.
package optim
