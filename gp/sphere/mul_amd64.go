package sphere

// haveVectorMul reports whether the AVX2 products can run: AVX2, with
// the operating system saving the YMM registers.
var haveVectorMul = hasAVX2()

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

// mulVecAsm sets dst[i] = a[i]·b[i] for the first len(dst)&^3 entries;
// a and b are at least as long as dst.
//
//go:noescape
func mulVecAsm(dst, a, b []float64)

// mulScaledVecAsm sets dst[i] = (a[i]·b[i])·s[i] for the first
// len(dst)&^3 entries; a, b and s are at least as long as dst.
//
//go:noescape
func mulScaledVecAsm(dst, a, b, s []float64)
