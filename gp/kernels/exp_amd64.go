package kernels

import "sgplab/gp/internal/vec"

// haveVectorExp reports whether expVec can run: AVX2, with the operating
// system saving the YMM registers.
var haveVectorExp = vec.HasAVX2

// expVecAsm sets x[i] = s·e^(a·x[i]) four at a time with AVX2 by the
// method of exp, on consecutive groups of four from the start of x, and
// returns how many entries it set: it stops before the first group with an
// argument outside (expLow, expHigh) or NaN, and before fewer than four
// are left.
//
//go:noescape
func expVecAsm(x []float64, a, s float64, c *[12][expLanes]uint64, t *[expN][2]float64) int

func expVec(x []float64, a, s float64) int {
	return expVecAsm(x, a, s, &expVecConsts, &expTable)
}
