//go:build !openblas

package linalg

import "runtime"

// BLASBackend names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (built with -tags openblas).
func BLASBackend() string { return "gonum" }

// BLASCore names the BLAS's kernel set: "" for gonum's (one, in Go).
func BLASCore() string { return "" }

// syrkThreads is the number of cores one dsyrk call keeps busy: gonum's
// dsyrk is serial.
func syrkThreads() int { return 1 }

// gemmThreads is the number of cores one dgemm call keeps busy: gonum's
// dgemm spreads its blocks over GOMAXPROCS goroutines itself.
func gemmThreads() int { return runtime.GOMAXPROCS(0) }

// trsmThreads is the number of cores one dtrsm call keeps busy: gonum's
// dtrsm is serial.
func trsmThreads() int { return 1 }

// triLeaf is the order down to which a split triangular solve or multiply
// splits (see triBase): gonum's kernels keep the leaves of 64 that the bits
// pinned for this backend were computed with.
const triLeaf = 64

// WarmUp does nothing: gonum's BLAS allocates through Go.
func WarmUp() {}
