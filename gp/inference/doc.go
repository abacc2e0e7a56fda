// Package inference holds the objectives and predictions of Gaussian-process
// models, all recorded on an ad tape so that gradients come for free:
//
//   - ExactLML: the exact log marginal likelihood of GP regression, O(N³);
//   - SGPR: the collapsed bound of Titsias (2009), O(NM²) time and O(NM)
//     memory through the M×M Woodbury form, never an N×N matrix;
//   - SVGP: the uncollapsed ELBO of Hensman et al. (2013, 2015) with
//     q(u) = N(m, LLᵀ), whitened or not, for any likelihood with a
//     variational expectation, with minibatch scaling;
//   - BlockELBO: the same bound for inducing variables in blocks (feature
//     sets) conditioned one on the next, of which SVGP is the one-block
//     case and SOLVE-GP / ODVGP (a mean-only block, or a block of weights
//     a_γ) the two-block cases; BlockPosterior predicts through
//     features.Stack of the blocks, and BlockMarginalTerms / BlockPredict
//     give the predictive variance term by term (eq. 12 of Shi et al. 2020).
//
// Every objective is a 1×1 node to maximise. The inducing variables come from
// package features. Every path reads Kuu through one description,
// features.KuuStructure (alias Kuu here): dense, diagonal, precision
// diagonal (zero precision drops a feature) or a structured square root;
// a structured feature is never factorised by a dense Cholesky where the
// path can use its structure. The collapsed bounds (SGPR,
// CollapsedFromStatsResidual) take the trace term tr(Kff − Qff) in closed
// form from a feature that has one (features.TraceResidual) rather than as
// Σk − tr Qff, which cancels in its leading digits at large kernel scales.
//
// Predictions go through Posterior, a value-level (off-tape) representation
// shared by all three schemes:
//
//	mean(x) = k(x)ᵀ α,   var(x) = k(x, x) − ‖A k(x)‖² + ‖B k(x)‖²,
//
// where k(x) holds the covariances between f(x) and M basis variables
// (inducing variables, or the training targets for exact GPR).
// Posterior.Predict works in chunks of PredictChunk test inputs spread over
// the cores, each goroutine reusing one tape and its buffers from chunk to
// chunk, so memory stays O(M·PredictChunk) per core for millions of test
// inputs and the predictions are bitwise the same on any number of cores.
// The sufficient statistics of a fixed Kuf (ComputeStats) are built the
// same way: chunks over the cores, Φ written into one buffer per goroutine
// (FeatureMap), partial sums added in a fixed order.
package inference
