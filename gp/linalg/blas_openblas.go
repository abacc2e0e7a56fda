//go:build openblas

package linalg

/*
#cgo LDFLAGS: -lopenblas
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
char* openblas_get_corename(void);
*/
import "C"

import (
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Route every gonum BLAS call (mat, lapack64, this package and its
// importers) through OpenBLAS. Linking needs CGO_LDFLAGS="-lopenblas".
//
// A test binary re-executes itself on the kernels sgplab's commands run on
// (ReexecWithPreferredCoreType, which each command's main calls): without
// it the tests checked OpenBLAS's fallback kernels on a CPU where every run
// used others, and a precision test that failed on the kernels in use
// passed.
func init() {
	if testing.Testing() {
		_ = ReexecWithPreferredCoreType()
	}
	blas64.Use(netlib.Implementation{})
}

// BLASBackend names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (built with -tags openblas).
func BLASBackend() string { return "openblas" }

// BLASCore names the kernel set OpenBLAS chose at load time for this CPU
// ("SkylakeX", "Haswell", "Prescott", …; OPENBLAS_CORETYPE overrides it).
func BLASCore() string { return C.GoString(C.openblas_get_corename()) }

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

// triLeaf is the order down to which a split triangular solve or multiply
// splits (see triBase). OpenBLAS's dtrsm and dtrmm run at well under
// dgemm's rate on these column blocks, so smaller leaves move more of the
// flops into dgemm: L⁻¹B, M = 500, B = 1000 on two cores at 38–44 GFLOP/s
// against 36–37 with leaves of 64; the SVGP recipe step 5 % faster at M =
// 500 and 3 % at M = 200 (interleaved, medians of four).
const triLeaf = 32

// WarmUp makes OpenBLAS map its work buffers now, from every core at once
// (a level-2 and a level-3 call on each), so that a memory limit set after
// it does not meet OpenBLAS's first allocation.
func WarmUp() {
	n := 64
	a := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for i := 0; i < n; i++ {
		a.Data[i*n+i] = 1
	}
	x := blas64.Vector{N: n, Inc: 1, Data: make([]float64, n)}
	t := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: a.Data}
	blas64.Trsv(blas.NoTrans, t, x)
	c := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, a, 0, c)
}
