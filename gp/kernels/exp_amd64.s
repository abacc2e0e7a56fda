#include "textflag.h"

// func expVecAsm(x []float64, a, s float64, c *[12][4]uint64, t *[128][2]float64) int
//
// Each step is the scalar exp's operation, four lanes at once, in the
// same order (see exp.go): z = x·inv + shift, kd = z − shift,
// r = (x − kd·hi) − kd·lo, q = ((r/120 + 1/24)·r + 1/6)·r + ½,
// p = r + r²·q, y = T0 + (T0·p + T1), result = s·(y·2^k).
TEXT ·expVecAsm(SB), NOSPLIT, $0-64
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	VBROADCASTSD a+24(FP), Y0
	VBROADCASTSD s+32(FP), Y1
	MOVQ c+40(FP), SI
	MOVQ t+48(FP), BX
	XORQ AX, AX

loop:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  done
	VMOVUPD (DI)(AX*8), Y2
	VMULPD  Y0, Y2, Y2            // x = a·v
	VCMPPD  $0x1e, 128(SI), Y2, Y3 // x > low (false for NaN)
	VCMPPD  $0x11, 160(SI), Y2, Y4 // x < high
	VANDPD  Y3, Y4, Y3
	VMOVMSKPD Y3, DX
	CMPQ    DX, $15
	JNE     done

	VMULPD  0(SI), Y2, Y3          // x·inv
	VADDPD  32(SI), Y3, Y3         // z
	VSUBPD  32(SI), Y3, Y4         // kd = z − shift
	VMULPD  64(SI), Y4, Y5         // kd·hi
	VSUBPD  Y5, Y2, Y5             // x − kd·hi
	VMULPD  96(SI), Y4, Y6         // kd·lo
	VSUBPD  Y6, Y5, Y5             // r

	VMULPD  192(SI), Y5, Y6        // r/120
	VADDPD  224(SI), Y6, Y6        // + 1/24
	VMULPD  Y5, Y6, Y6
	VADDPD  256(SI), Y6, Y6        // + 1/6
	VMULPD  Y5, Y6, Y6
	VADDPD  288(SI), Y6, Y6        // + ½: q
	VMULPD  Y5, Y5, Y7             // r²
	VMULPD  Y6, Y7, Y7             // r²·q
	VADDPD  Y7, Y5, Y6             // p = r + r²·q

	VPAND   320(SI), Y3, Y8        // j = bits(z) & (expN−1)
	VPSLLQ  $1, Y8, Y8             // 2j: entries are pairs
	VPCMPEQQ Y9, Y9, Y9
	VGATHERQPD Y9, (BX)(Y8*8), Y10  // T0
	VPCMPEQQ Y9, Y9, Y9
	VGATHERQPD Y9, 8(BX)(Y8*8), Y11 // T1

	VMULPD  Y6, Y10, Y6            // T0·p
	VADDPD  Y11, Y6, Y6            // + T1
	VADDPD  Y6, Y10, Y6            // y = T0 + (T0·p + T1)

	VPADDQ  352(SI), Y3, Y3        // bits(z) + bias
	VPSRLQ  $7, Y3, Y3
	VPSLLQ  $52, Y3, Y3            // 2^k
	VMULPD  Y3, Y6, Y6
	VMULPD  Y1, Y6, Y6             // s·(y·2^k)
	VMOVUPD Y6, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     loop

done:
	VZEROUPPER
	MOVQ AX, ret+56(FP)
	RET
