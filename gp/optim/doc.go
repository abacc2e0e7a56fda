// Package optim fits model parameters: Minimize runs L-BFGS (through
// gonum/optimize) or Adam on a flat vector with an evaluation budget, a
// gradient tolerance and a clean stop on non-finite values or context
// cancellation; Train maximises an objective recorded on an ad.Tape over
// the trainable entries of a param.Set, phase by phase; NatGradStep takes a
// natural-gradient step for a Gaussian variational distribution, and
// TrainNatGrad pairs it with Adam.
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
package optim
