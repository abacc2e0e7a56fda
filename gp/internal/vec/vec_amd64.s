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

// Each loop below does the scalar loop's IEEE operations in its order,
// four lanes at a time, over the first len(dst)&^3 entries (the callers
// finish the tail); no fused multiply-add, so every entry is bitwise the
// scalar loop's.

// func mulAsm(dst, a, b []float64)
TEXT ·mulAsm(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), BX
	XORQ AX, AX

mul8:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  mul4
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMULPD  (BX)(AX*8), Y0, Y0
	VMULPD  32(BX)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	MOVQ    DX, AX
	JMP     mul8

mul4:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  muldone
	VMOVUPD (SI)(AX*8), Y0
	VMULPD  (BX)(AX*8), Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	MOVQ    DX, AX
	JMP     mul4

muldone:
	VZEROUPPER
	RET

// func mulScaledAsm(dst, a, b, s []float64)
TEXT ·mulScaledAsm(SB), NOSPLIT, $0-96
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

// func subScaledSquaresAsm(dst, x []float64, a float64)
TEXT ·subScaledSquaresAsm(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD a+48(FP), Y2
	XORQ AX, AX

qloop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  qdone
	VMULPD  (SI)(AX*8), Y2, Y0 // v = a·x
	VMULPD  Y0, Y0, Y0         // v·v
	VMOVUPD (DI)(AX*8), Y1
	VSUBPD  Y0, Y1, Y1         // dst − v·v
	VMOVUPD Y1, (DI)(AX*8)
	MOVQ    DX, AX
	JMP     qloop

qdone:
	VZEROUPPER
	RET

// func subSignedSquaresAsm(dst, x []float64, sign float64)
TEXT ·subSignedSquaresAsm(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD sign+48(FP), Y2
	XORQ AX, AX

ssloop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  ssdone
	VMOVUPD (SI)(AX*8), Y0
	VMULPD  Y0, Y2, Y3         // sign·v
	VMULPD  Y0, Y3, Y3         // (sign·v)·v
	VMOVUPD (DI)(AX*8), Y1
	VSUBPD  Y3, Y1, Y1         // dst − sign·v·v
	VMOVUPD Y1, (DI)(AX*8)
	MOVQ    DX, AX
	JMP     ssloop

ssdone:
	VZEROUPPER
	RET
