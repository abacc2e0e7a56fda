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
package features
