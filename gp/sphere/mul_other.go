//go:build !amd64

package sphere

// Without the amd64 vector loops the products run the scalar loops.
var haveVectorMul = false

func mulVecAsm(dst, a, b []float64) { panic("sphere: no vector product on this platform") }

func mulScaledVecAsm(dst, a, b, s []float64) {
	panic("sphere: no vector product on this platform")
}
