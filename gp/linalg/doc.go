// Package linalg holds the plain (non-differentiated) dense linear algebra
// shared by the GP library: a Cholesky factorisation with escalating
// jitter, triangular solves through BLAS dtrsm, the inverse from a Cholesky
// factor, the Gram product A Aᵀ, and log-determinants.
//
// Lower-triangular factors are kept in *mat.Dense with zeros above the
// diagonal so that they interoperate with every gonum operation and with
// package ad, which uses these routines for its forward passes.
//
// Building with -tags openblas (and CGO_LDFLAGS=-lopenblas) installs
// OpenBLAS as gonum's BLAS for the whole binary from this package's init;
// BLASBackend reports which is in use. OpenBLAS threads its level-3 calls
// itself, so routines here split work over goroutines only on the pure-Go
// backend, whose dtrsm, dtrmm and dsyrk are serial.
package linalg
