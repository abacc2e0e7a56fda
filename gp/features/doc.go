// Package features defines inducing variables for sparse Gaussian processes.
//
// A Feature knows how to compute its own covariances with a kernel: Kuu
// (between the inducing variables) and Kuf (between the inducing variables
// and function values at inputs). Inference schemes in package inference only
// consume those matrices, so inducing points and inter-domain features
// (Fourier, spherical harmonics, activation features, …) share one code path.
//
// Features with structured Kuu advertise it through optional interfaces such
// as DiagonalKuu; inference then avoids a dense Cholesky factorisation.
//
// Interval features live on a box Π_d [a_d, b_d] (IntervalFeature): the
// variational Fourier features of Hensman, Durrande and Solin (2017)
// (NewVFF) and the cubic B-spline features of Cunningham et al. (2023)
// (NewBSplines). Both are RKHS inner products of f with a fixed 1-D basis
// per dimension, so Kuf = Φ(x) does not depend on the hyperparameters (the
// collapsed bound precomputes ΦΦᵀ once), and Kuu is the closed-form
// Matérn-½, ³⁄₂, ⁵⁄₂ Gram matrix of the basis: for VFF diagonal plus rank ≤ 2
// per cos/sin block, for B-splines banded. Dimensions combine additively
// (block-diagonal Kuu, f = Σ_d f_d) or as a Kronecker product (Kuu = ⊗_d
// Kuu_d, optionally masked to a sphere of frequencies). Whitener exposes
// that structure as b ↦ L⁻¹b without factorising the dense Kuu. Inputs
// outside the box are an error: VFF's harmonics are periodic on [a, b], so
// the prior it represents is wrong within about a lengthscale of the ends;
// leave a margin of a few lengthscales beyond the data.
package features
