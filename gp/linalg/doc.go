// Package linalg holds the plain (non-differentiated) dense linear algebra
// shared by the GP library: a Cholesky factorisation with escalating
// jitter, triangular solves through BLAS dtrsm, and log-determinants.
//
// Lower-triangular factors are kept in *mat.Dense with zeros above the
// diagonal so that they interoperate with every gonum operation and with
// package ad, which uses these routines for its forward passes.
package linalg
