//go:build !openblas

package linalg

// BLASBackend names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (built with -tags openblas).
func BLASBackend() string { return "gonum" }
