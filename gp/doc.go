// Package gp holds the data types shared by the Gaussian-process library in
// its subpackages. It knows nothing about TOML, SQLite or papers. The
// subpackages, from the bottom up:
//
//   - linalg: plain dense linear algebra (Cholesky, solves, Gram products)
//     on gonum's BLAS, OpenBLAS when built with -tags openblas;
//   - ad: reverse-mode automatic differentiation on dense matrices (a tape
//     of nodes, gradient checks);
//   - param: trainable parameters as an ordered set with positivity and
//     other transforms, bound to a tape;
//   - kernels: covariance functions (stationary, periodic, arc-cosine,
//     zonal kernels on the sphere, spectral densities, combinations);
//   - sphere: harmonic analysis on the unit sphere (spherical harmonics,
//     Gegenbauer polynomials, Funk–Hecke coefficients) for VISH and the
//     zonal kernels;
//   - features: inducing variables (inducing points, VFF, A-VFF,
//     B-splines, IFF, VOF, spherical harmonics, activation features), their
//     Kuu, Kuf and cross-covariances, counts from parameters alone;
//   - inducing: choosing inducing inputs from the training inputs (k-means,
//     greedy conditional variance);
//   - likelihoods: observation models (Gaussian, Bernoulli) with their
//     variational expectations by Gauss–Hermite quadrature;
//   - inference: objectives and predictions (exact GPR, SGPR's collapsed
//     bound, SVGP's ELBO, decoupled blocks, VOF), predictive statistics;
//   - ski: structured kernel interpolation on grids with conjugate
//     gradients;
//   - optim: L-BFGS, Adam and natural gradients, phases, convergence rules;
//   - metrics: test-set scores of probabilistic predictions (RMSE, NLPD,
//     coverage, accuracy, AUC);
//   - internal/workers: the pool of goroutines the parallel loops of
//     linalg, kernels and ad run on, bit-identical on any core count;
//   - internal/vec: the elementwise loops of the harmonics and the
//     predictive variances, four lanes at a time with AVX2 and bitwise
//     their scalar loops.
//
// # Assembling a method with two feature sets
//
// A decoupled method (SOLVE-GP, ODVGP, ODVFF, spherical-orthogonal) is one
// file in package methods built from these pieces, with no inference or
// training code of its own:
//
//   - Parameters: one kernel under methods.KernelPrefix, the likelihood, and
//     one methods.Group per feature set (Group{Name: "beta"},
//     Group{Name: "gamma"}), whose FeaturePrefix, QMu and QSqrt keep the
//     two sets and their q's apart; Group.DeclareQ puts each q at its prior,
//     methods.InitInducingCount picks a second point set with its own count.
//   - Covariances: each feature's Kuu through features.StructureOf (dense,
//     diagonal, precision diagonal or structured root: whatever the feature
//     advertises), Kuf through the Kuf contract (differentiable in trainable
//     inputs), and the cross-covariance between the sets through
//     features.Kuv(k, u, v), which dispatches on the pair (a feature's
//     CrossCovariance, else "v is inducing points: u.Kuf at them"), so
//     ODVFF's K_βγ = Φ_VFF(Z_γ) trains Z_γ.
//   - Objective: inference.BlockELBO(k, []inference.Block{{β, q_β}, {γ, q_γ}},
//     x, varExp, N, opt): block γ is conditioned on block β (S_γγ, S_γf are
//     Schur complements), a full q_γ gives SOLVE-GP, a mean-only q_γ
//     (Sqrt nil) gives ODVGP; the first block keeps its Kuu structure (a
//     VFF β is never factorised densely). One block is SVGP.
//   - Training: methods' variational recipe (variationalFit: one minibatch
//     sampler outside the objective, shared optimiser settings, natgrad_step
//     for natural gradients on every group's q with Adam on the rest).
//   - Predictions: inference.BlockPosterior with the stacked basis
//     features.Stack(β, γ) as the Binder's feature.
//
// Inside inference.BlockELBO, for two blocks u, v (spherical-odgp-spec
// §1.12): A_uf = L_u⁻¹K_uf, A_uv = L_u⁻¹K_uv, S_vv = K_vv − A_uvᵀA_uv,
// S_vf = K_vf − A_uvᵀA_uf, and each block contributes its own mean, variance
// and KL terms from its residual covariances exactly as SVGP does for one.
package gp
