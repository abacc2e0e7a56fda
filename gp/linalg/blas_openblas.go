//go:build openblas

package linalg

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
