//go:build !amd64

package kernels

// Without the amd64 vector loop scaledExp runs the scalar one throughout.
var haveVectorExp = false

func expVec(x []float64, a, s float64) int { panic("kernels: no vector exp on this platform") }
