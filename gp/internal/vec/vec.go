// Package vec holds the elementwise loops that dominate the harmonics and
// the predictive variances outside BLAS, four lanes at a time with AVX2 on
// amd64. Each does its scalar loop's IEEE operations in the same order,
// with no fused multiply-add, so its results are bitwise the scalar
// loop's on every machine; elsewhere the scalar loop runs.
package vec

// Mul sets dst[i] = a[i]·b[i]; a and b are at least as long as dst.
func Mul(dst, a, b []float64) {
	if len(dst) == 0 {
		return
	}
	_, _ = a[len(dst)-1], b[len(dst)-1]
	i := 0
	if HasAVX2 {
		mulAsm(dst, a, b)
		i = len(dst) &^ 3
	}
	for ; i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// MulScaled sets dst[i] = (a[i]·b[i])·s[i], the two roundings in that
// order (a product, then a column scale).
func MulScaled(dst, a, b, s []float64) {
	if len(dst) == 0 {
		return
	}
	_, _, _ = a[len(dst)-1], b[len(dst)-1], s[len(dst)-1]
	i := 0
	if HasAVX2 {
		mulScaledAsm(dst, a, b, s)
		i = len(dst) &^ 3
	}
	for ; i < len(dst); i++ {
		dst[i] = a[i] * b[i] * s[i]
	}
}

// SubScaledSquares sets dst[i] −= (a·x[i])².
func SubScaledSquares(dst, x []float64, a float64) {
	if len(dst) == 0 {
		return
	}
	_ = x[len(dst)-1]
	i := 0
	if HasAVX2 {
		subScaledSquaresAsm(dst, x, a)
		i = len(dst) &^ 3
	}
	for ; i < len(dst); i++ {
		v := a * x[i]
		dst[i] -= v * v
	}
}

// SubSignedSquares sets dst[i] −= sign·x[i]·x[i], evaluated as
// (sign·x[i])·x[i].
func SubSignedSquares(dst, x []float64, sign float64) {
	if len(dst) == 0 {
		return
	}
	_ = x[len(dst)-1]
	i := 0
	if HasAVX2 {
		subSignedSquaresAsm(dst, x, sign)
		i = len(dst) &^ 3
	}
	for ; i < len(dst); i++ {
		v := x[i]
		dst[i] -= sign * v * v
	}
}
