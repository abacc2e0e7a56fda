//go:build openblas

package linalg

/*
#cgo LDFLAGS: -lopenblas
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Route every gonum BLAS call (mat, lapack64, this package and its
// importers) through OpenBLAS. Linking needs CGO_LDFLAGS="-lopenblas".
func init() { blas64.Use(netlib.Implementation{}) }

// BLASBackend names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (built with -tags openblas).
func BLASBackend() string { return "openblas" }

// openblasThreads is OpenBLAS's worker-thread count, fixed to one whatever
// OPENBLAS_NUM_THREADS says: a threaded OpenBLAS gave results that differed
// in the last bits between two processes running the same spec (the
// sharded-against-unsharded deploy test caught it), and sgplab already
// spreads its BLAS calls over every core through goroutines on a fixed
// partition of the work, which OpenBLAS's spinning workers only fight.
var openblasThreads = singleThreaded()

func singleThreaded() int {
	C.openblas_set_num_threads(1)
	return max(1, int(C.openblas_get_num_threads()))
}

// syrkThreads is the number of cores one dsyrk call keeps busy.
func syrkThreads() int { return openblasThreads }

// gemmThreads is the number of cores one dgemm call keeps busy.
func gemmThreads() int { return openblasThreads }

// trsmThreads is the number of cores one dtrsm call keeps busy.
func trsmThreads() int { return openblasThreads }
