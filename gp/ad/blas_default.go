package ad

import "sgplab/gp/linalg"

// BLASBackend names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (built with -tags openblas, which package linalg
// installs).
func BLASBackend() string { return linalg.BLASBackend() }
