// Package ski implements structured kernel interpolation (SKI, or KISS-GP;
// Wilson & Nickisch 2015) for GP regression with an RBF-ARD kernel, trained
// and queried through matrix-vector products only, as in BBMM (Gardner et
// al. 2018).
//
// Each input is interpolated onto a regular grid (one Axis per dimension,
// placed by GPyTorch's rule, NewAxis) by Keys' cubic convolution: the
// interpolation matrix W (N×M) has 4^D non-zeros per row. The kernel matrix
// is approximated by
//
//	K ≈ K_SKI = W K_grid Wᵀ,   K_grid = σ_f² T_1 ⊗ … ⊗ T_D,
//
// where T_d is the Gram matrix of the d-th axis: symmetric Toeplitz, applied
// through its circulant embedding by FFTs (gonum dsp/fourier). An Operator
// is K̂ = K_SKI + σ²I; neither K_grid nor K̂ is ever formed, and one product
// with K̂ costs O(N 4^D + M Σ_d log n_d).
//
// Training maximises the exact marginal likelihood of K̂ (MarginalLikelihood):
// a batched conjugate-gradient solve preconditioned by a pivoted Cholesky
// factor gives K̂⁻¹(y − μ) and K̂⁻¹z for random probes z; the CG
// coefficients give Lanczos tridiagonals for stochastic Lanczos quadrature
// of log|K̂|, and the probes give Hutchinson estimates of the gradient's
// trace terms. Predictions (Posterior) use one CG solve for the mean and a
// Lanczos inverse root of K̂ (LOVE) for the variance; SKI's variances can be
// negative, and Predict leaves them so.
//
// All randomness comes from the *rand.Rand the caller passes; products are
// parallel over columns with a fixed assignment, so results are bitwise
// reproducible whatever the number of cores.
package ski
