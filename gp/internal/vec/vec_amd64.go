package vec

// HasAVX2 reports whether AVX2 code can run: the CPU has it and the
// operating system saves the YMM registers (also gp/kernels' vector exp).
var HasAVX2 = hasAVX2()

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

// The loops set the first len(dst)&^3 entries; the other operands are at
// least as long as dst.

//go:noescape
func mulAsm(dst, a, b []float64)

//go:noescape
func mulScaledAsm(dst, a, b, s []float64)

//go:noescape
func subScaledSquaresAsm(dst, x []float64, a float64)

//go:noescape
func subSignedSquaresAsm(dst, x []float64, sign float64)
