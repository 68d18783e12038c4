//go:build amd64 && !purego

#include "textflag.h"

// NH kernels (nh.go describes NH). key is the permuted NH key from the
// message's first unit on: each aligned group of four words is (k0, k2,
// k1, k3). A unit m is shuffled to (m0, m2, m1, m3), so for pass p that
// adds key words 4p.. to it, t = (m0+k0, m2+k2, m1+k1, m3+k3), and one
// PMULUDQ of t with (t1, t1, t3, t3) gives both products of the pass,
// (m0+k0)(m2+k2) and (m1+k1)(m3+k3), as two 64-bit lanes to accumulate.

// func nhSSE2(key *uint32, msg *byte, units int, out *[4]uint64)
TEXT ·nhSSE2(SB), NOSPLIT, $0-32
	MOVQ key+0(FP), AX
	MOVQ msg+8(FP), SI
	MOVQ units+16(FP), CX
	MOVQ out+24(FP), DI
	PXOR X4, X4
	PXOR X5, X5
	PXOR X6, X6
	PXOR X7, X7
	TESTQ CX, CX
	JZ sse2done
sse2loop:
	MOVOU (SI), X0
	PSHUFD $0xd8, X0, X0
	MOVOU 0(AX), X1
	MOVOU 16(AX), X8
	MOVOU 32(AX), X10
	MOVOU 48(AX), X12
	PADDL X0, X1
	PADDL X0, X8
	PADDL X0, X10
	PADDL X0, X12
	PSHUFD $0xf5, X1, X2
	PSHUFD $0xf5, X8, X9
	PSHUFD $0xf5, X10, X11
	PSHUFD $0xf5, X12, X13
	PMULULQ X2, X1
	PMULULQ X9, X8
	PMULULQ X11, X10
	PMULULQ X13, X12
	PADDQ X1, X4
	PADDQ X8, X5
	PADDQ X10, X6
	PADDQ X12, X7
	ADDQ $16, SI
	ADDQ $16, AX
	DECQ CX
	JNZ sse2loop
sse2done:
	PSHUFD $0x4e, X4, X0
	PSHUFD $0x4e, X5, X1
	PSHUFD $0x4e, X6, X2
	PSHUFD $0x4e, X7, X3
	PADDQ X0, X4
	PADDQ X1, X5
	PADDQ X2, X6
	PADDQ X3, X7
	MOVQ X4, 0(DI)
	MOVQ X5, 8(DI)
	MOVQ X6, 16(DI)
	MOVQ X7, 24(DI)
	RET

// func nhAVX2(key *uint32, msg *byte, units int, out *[4]uint64)
// Two units per step in ymm registers; an odd last unit in xmm.
TEXT ·nhAVX2(SB), NOSPLIT, $0-32
	MOVQ key+0(FP), AX
	MOVQ msg+8(FP), SI
	MOVQ units+16(FP), CX
	MOVQ out+24(FP), DI
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	CMPQ CX, $2
	JB avx2tail
avx2loop:
	VPSHUFD $0xd8, (SI), Y0
	VPADDD 0(AX), Y0, Y1
	VPADDD 16(AX), Y0, Y8
	VPADDD 32(AX), Y0, Y10
	VPADDD 48(AX), Y0, Y12
	VPSHUFD $0xf5, Y1, Y2
	VPSHUFD $0xf5, Y8, Y9
	VPSHUFD $0xf5, Y10, Y11
	VPSHUFD $0xf5, Y12, Y13
	VPMULUDQ Y2, Y1, Y1
	VPMULUDQ Y9, Y8, Y8
	VPMULUDQ Y11, Y10, Y10
	VPMULUDQ Y13, Y12, Y12
	VPADDQ Y1, Y4, Y4
	VPADDQ Y8, Y5, Y5
	VPADDQ Y10, Y6, Y6
	VPADDQ Y12, Y7, Y7
	ADDQ $32, SI
	ADDQ $32, AX
	SUBQ $2, CX
	CMPQ CX, $2
	JAE avx2loop
avx2tail:
	// Fold the upper lanes down before any xmm instruction clears them.
	VEXTRACTI128 $1, Y4, X0
	VEXTRACTI128 $1, Y5, X1
	VEXTRACTI128 $1, Y6, X2
	VEXTRACTI128 $1, Y7, X3
	VPADDQ X0, X4, X4
	VPADDQ X1, X5, X5
	VPADDQ X2, X6, X6
	VPADDQ X3, X7, X7
	TESTQ CX, CX
	JZ avx2done
	VPSHUFD $0xd8, (SI), X0
	VPADDD 0(AX), X0, X1
	VPADDD 16(AX), X0, X8
	VPADDD 32(AX), X0, X10
	VPADDD 48(AX), X0, X12
	VPSHUFD $0xf5, X1, X2
	VPSHUFD $0xf5, X8, X9
	VPSHUFD $0xf5, X10, X11
	VPSHUFD $0xf5, X12, X13
	VPMULUDQ X2, X1, X1
	VPMULUDQ X9, X8, X8
	VPMULUDQ X11, X10, X10
	VPMULUDQ X13, X12, X12
	VPADDQ X1, X4, X4
	VPADDQ X8, X5, X5
	VPADDQ X10, X6, X6
	VPADDQ X12, X7, X7
avx2done:
	VPSHUFD $0x4e, X4, X0
	VPSHUFD $0x4e, X5, X1
	VPSHUFD $0x4e, X6, X2
	VPSHUFD $0x4e, X7, X3
	VPADDQ X0, X4, X4
	VPADDQ X1, X5, X5
	VPADDQ X2, X6, X6
	VPADDQ X3, X7, X7
	VMOVQ X4, 0(DI)
	VMOVQ X5, 8(DI)
	VMOVQ X6, 16(DI)
	VMOVQ X7, 24(DI)
	VZEROUPPER
	RET
