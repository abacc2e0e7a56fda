//go:build !amd64

package vec

// Without the amd64 vector loops every function runs its scalar loop.
var HasAVX2 = false

func mulAsm(dst, a, b []float64)                      { panic("vec: no vector loops on this platform") }
func mulScaledAsm(dst, a, b, s []float64)             { panic("vec: no vector loops on this platform") }
func subScaledSquaresAsm(dst, x []float64, a float64) { panic("vec: no vector loops on this platform") }
func subSignedSquaresAsm(dst, x []float64, sign float64) {
	panic("vec: no vector loops on this platform")
}
