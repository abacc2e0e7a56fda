#include "textflag.h"

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv() (lo, hi uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, lo+0(FP)
	MOVL DX, hi+4(FP)
	RET

// func mulVecAsm(dst, a, b []float64)
//
// dst[i] = a[i]·b[i] for i < len(dst) rounded down to a multiple of four:
// one IEEE product per entry, as the scalar loop, eight or four at a time.
TEXT ·mulVecAsm(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), BX
	XORQ AX, AX

loop8:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  loop4
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMULPD  (BX)(AX*8), Y0, Y0
	VMULPD  32(BX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	MOVQ    DX, AX
	JMP     loop8

loop4:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  done
	VMOVUPD (SI)(AX*8), Y0
	VMULPD  (BX)(AX*8), Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	MOVQ    DX, AX
	JMP     loop4

done:
	VZEROUPPER
	RET

// func mulScaledVecAsm(dst, a, b, s []float64)
//
// dst[i] = (a[i]·b[i])·s[i] for i < len(dst) rounded down to a multiple of
// four: the two roundings of the scalar loop, in its order.
TEXT ·mulScaledVecAsm(SB), NOSPLIT, $0-96
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), BX
	MOVQ s_base+72(FP), R8
	XORQ AX, AX

sloop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  sdone
	VMOVUPD (SI)(AX*8), Y0
	VMULPD  (BX)(AX*8), Y0, Y0
	VMULPD  (R8)(AX*8), Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	MOVQ    DX, AX
	JMP     sloop

sdone:
	VZEROUPPER
	RET
