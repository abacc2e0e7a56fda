package kernels

// haveVectorExp reports whether expVec can run: AVX2, with the operating
// system saving the YMM registers.
var haveVectorExp = hasAVX2()

func hasAVX2() bool {
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c1&osxsave == 0 || c1&avx == 0 {
		return false
	}
	if lo, _ := xgetbv(); lo&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0
}

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

func xgetbv() (lo, hi uint32)

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
