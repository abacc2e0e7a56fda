// Package linalg holds the plain (non-differentiated) dense linear algebra
// shared by the GP library: a Cholesky factorisation with escalating
// jitter, triangular solves through BLAS dtrsm (with ≈ 0.4 of the flops
// when the right-hand side is lower triangular too: SolveLowerLowerInPlace,
// MulLowerTLowerTo), the inverse from a Cholesky factor, the Gram product
// A Aᵀ, and log-determinants.
//
// Lower-triangular factors are kept in *mat.Dense with zeros above the
// diagonal so that they interoperate with every gonum operation and with
// package ad, which uses these routines for its forward passes.
//
// Building with -tags openblas (and CGO_LDFLAGS=-lopenblas) installs
// OpenBLAS as gonum's BLAS for the whole binary from this package's init;
// BLASBackend reports which is in use. Gram products and triangular solves
// split their columns over goroutines when one BLAS call would leave cores
// idle: always on the pure-Go backend (serial dtrsm, dtrmm and dsyrk), and
// with OpenBLAS when it runs one thread per call (OPENBLAS_NUM_THREADS=1,
// which the Makefile sets because OpenBLAS's own threads fight sgplab's
// goroutines).
//
// Every split is fixed by the shape of the problem alone, and partial sums
// are added in block order, so results are bitwise the same under any
// GOMAXPROCS (for a given BLAS backend and OPENBLAS_NUM_THREADS): the
// cores only decide how many goroutines share out the fixed blocks.
// GemmBlocks and SolveRightLowerBlocks expose the blocks of Gemm and
// SolveRightLower, so a caller can run them beside other independent work
// (package ad's blocked Cholesky adjoint) with the same bits. The
// goroutines are those of gp/internal/workers, which stay awake between
// the loops of a step instead of being started (and their threads woken)
// for each.
package linalg
