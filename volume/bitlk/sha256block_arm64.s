#include "textflag.h"

// The BitLocker key stretch with the ARMv8 SHA-256 instructions: every
// round is two compressions of known message words (sha256block.go), run
// from registers. The state stays in word order (h0-h3, h4-h7), so each
// round's digest is the next round's first message words as it is.
//
// Registers: V0/V1 the state (abcd, efgh) a block starts from and ends
// with, V2/V3 the working state, V8 abcd before the last SHA256H, V9 the
// message words plus round constants, V4-V7 message words in rotation,
// V10/V11 the digest (the next first message words), V12/V13 the initial
// digest, V14 the salt, V15 block 2's words 4-7 before the counter,
// V16-V31 the round constants.

// ROUNDS4 runs four rounds with message words M and constants K.
#define ROUNDS4(K, M) \
	VADD     K.S4, M.S4, V9.S4 \
	SHA256H  V9.S4, V3, V2     \
	SHA256H2 V9.S4, V8, V3     \
	VMOV     V2.B16, V8.B16

// SCHEDULE turns A (W[t-16..]) into W[t..t+3], given B (W[t-12..]), C
// (W[t-8..]) and D (W[t-4..]).
#define SCHEDULE(A, B, C, D) \
	SHA256SU0 B.S4, A.S4 \
	SHA256SU1 D.S4, C.S4, A.S4

// BLOCK compresses the message in V4-V7 into V0/V1, adding the state it
// started from.
#define BLOCK \
	VMOV V0.B16, V2.B16 \
	VMOV V1.B16, V3.B16 \
	VMOV V2.B16, V8.B16 \
	ROUNDS4(V16, V4) \
	SCHEDULE(V4, V5, V6, V7) \
	ROUNDS4(V17, V5) \
	SCHEDULE(V5, V6, V7, V4) \
	ROUNDS4(V18, V6) \
	SCHEDULE(V6, V7, V4, V5) \
	ROUNDS4(V19, V7) \
	SCHEDULE(V7, V4, V5, V6) \
	ROUNDS4(V20, V4) \
	SCHEDULE(V4, V5, V6, V7) \
	ROUNDS4(V21, V5) \
	SCHEDULE(V5, V6, V7, V4) \
	ROUNDS4(V22, V6) \
	SCHEDULE(V6, V7, V4, V5) \
	ROUNDS4(V23, V7) \
	SCHEDULE(V7, V4, V5, V6) \
	ROUNDS4(V24, V4) \
	SCHEDULE(V4, V5, V6, V7) \
	ROUNDS4(V25, V5) \
	SCHEDULE(V5, V6, V7, V4) \
	ROUNDS4(V26, V6) \
	SCHEDULE(V6, V7, V4, V5) \
	ROUNDS4(V27, V7) \
	SCHEDULE(V7, V4, V5, V6) \
	ROUNDS4(V28, V4) \
	ROUNDS4(V29, V5) \
	ROUNDS4(V30, V6) \
	ROUNDS4(V31, V7) \
	VADD V2.S4, V0.S4, V0.S4 \
	VADD V3.S4, V1.S4, V1.S4

// func roundsAsm(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64)
TEXT ·roundsAsm(SB), NOSPLIT, $0-40
	MOVD last+0(FP), R0
	MOVD initial+8(FP), R1
	MOVD salt+16(FP), R2
	MOVD counter+24(FP), R3
	MOVD n+32(FP), R4
	CBZ  R4, done
	MOVD $sha256KWords<>(SB), R5
	VLD1.P 64(R5), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R5), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R5), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1   (R5), [V28.S4, V29.S4, V30.S4, V31.S4]
	MOVD $sha256IVWordsARM<>(SB), R6
	MOVD $block2WordsARM<>(SB), R9
	VLD1 (R0), [V10.S4, V11.S4]
	VLD1 (R1), [V12.S4, V13.S4]
	VLD1 (R2), [V14.S4]
	VLD1 (R9), [V15.S4]
	ADD  $16, R9, R9

loop:
	// Block 1: the last digest, then the initial digest.
	VLD1 (R6), [V0.S4, V1.S4]
	VMOV V10.B16, V4.B16
	VMOV V11.B16, V5.B16
	VMOV V12.B16, V6.B16
	VMOV V13.B16, V7.B16
	BLOCK

	// Block 2: the salt, the counter (its little-endian bytes read as
	// big-endian words), padding and the length.
	REVW R3, R7
	LSR  $32, R3, R8
	REVW R8, R8
	VMOV V14.B16, V4.B16
	VMOV V15.B16, V5.B16
	VMOV R7, V5.S[0]
	VMOV R8, V5.S[1]
	VEOR V6.B16, V6.B16, V6.B16
	VLD1 (R9), [V7.S4]
	BLOCK

	VMOV V0.B16, V10.B16
	VMOV V1.B16, V11.B16
	ADD  $1, R3, R3
	SUB  $1, R4, R4
	CBNZ R4, loop

	VST1 [V10.S4, V11.S4], (R0)
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V8.B16, V8.B16, V8.B16

done:
	RET

DATA sha256IVWordsARM<>+0(SB)/4, $0x6a09e667
DATA sha256IVWordsARM<>+4(SB)/4, $0xbb67ae85
DATA sha256IVWordsARM<>+8(SB)/4, $0x3c6ef372
DATA sha256IVWordsARM<>+12(SB)/4, $0xa54ff53a
DATA sha256IVWordsARM<>+16(SB)/4, $0x510e527f
DATA sha256IVWordsARM<>+20(SB)/4, $0x9b05688c
DATA sha256IVWordsARM<>+24(SB)/4, $0x1f83d9ab
DATA sha256IVWordsARM<>+28(SB)/4, $0x5be0cd19
GLOBL sha256IVWordsARM<>(SB), RODATA|NOPTR, $32

// Block 2's words 4-7 (counter, counter, the 0x80 padding byte, 0) and
// 12-15 (0, 0, 0, the message length: 88 bytes in bits).
DATA block2WordsARM<>+0(SB)/4, $0
DATA block2WordsARM<>+4(SB)/4, $0
DATA block2WordsARM<>+8(SB)/4, $0x80000000
DATA block2WordsARM<>+12(SB)/4, $0
DATA block2WordsARM<>+16(SB)/4, $0
DATA block2WordsARM<>+20(SB)/4, $0
DATA block2WordsARM<>+24(SB)/4, $0
DATA block2WordsARM<>+28(SB)/4, $704
GLOBL block2WordsARM<>(SB), RODATA|NOPTR, $32

// The round constants (FIPS 180-4, section 4.2.2).
DATA sha256KWords<>+0(SB)/4, $0x428a2f98
DATA sha256KWords<>+4(SB)/4, $0x71374491
DATA sha256KWords<>+8(SB)/4, $0xb5c0fbcf
DATA sha256KWords<>+12(SB)/4, $0xe9b5dba5
DATA sha256KWords<>+16(SB)/4, $0x3956c25b
DATA sha256KWords<>+20(SB)/4, $0x59f111f1
DATA sha256KWords<>+24(SB)/4, $0x923f82a4
DATA sha256KWords<>+28(SB)/4, $0xab1c5ed5
DATA sha256KWords<>+32(SB)/4, $0xd807aa98
DATA sha256KWords<>+36(SB)/4, $0x12835b01
DATA sha256KWords<>+40(SB)/4, $0x243185be
DATA sha256KWords<>+44(SB)/4, $0x550c7dc3
DATA sha256KWords<>+48(SB)/4, $0x72be5d74
DATA sha256KWords<>+52(SB)/4, $0x80deb1fe
DATA sha256KWords<>+56(SB)/4, $0x9bdc06a7
DATA sha256KWords<>+60(SB)/4, $0xc19bf174
DATA sha256KWords<>+64(SB)/4, $0xe49b69c1
DATA sha256KWords<>+68(SB)/4, $0xefbe4786
DATA sha256KWords<>+72(SB)/4, $0x0fc19dc6
DATA sha256KWords<>+76(SB)/4, $0x240ca1cc
DATA sha256KWords<>+80(SB)/4, $0x2de92c6f
DATA sha256KWords<>+84(SB)/4, $0x4a7484aa
DATA sha256KWords<>+88(SB)/4, $0x5cb0a9dc
DATA sha256KWords<>+92(SB)/4, $0x76f988da
DATA sha256KWords<>+96(SB)/4, $0x983e5152
DATA sha256KWords<>+100(SB)/4, $0xa831c66d
DATA sha256KWords<>+104(SB)/4, $0xb00327c8
DATA sha256KWords<>+108(SB)/4, $0xbf597fc7
DATA sha256KWords<>+112(SB)/4, $0xc6e00bf3
DATA sha256KWords<>+116(SB)/4, $0xd5a79147
DATA sha256KWords<>+120(SB)/4, $0x06ca6351
DATA sha256KWords<>+124(SB)/4, $0x14292967
DATA sha256KWords<>+128(SB)/4, $0x27b70a85
DATA sha256KWords<>+132(SB)/4, $0x2e1b2138
DATA sha256KWords<>+136(SB)/4, $0x4d2c6dfc
DATA sha256KWords<>+140(SB)/4, $0x53380d13
DATA sha256KWords<>+144(SB)/4, $0x650a7354
DATA sha256KWords<>+148(SB)/4, $0x766a0abb
DATA sha256KWords<>+152(SB)/4, $0x81c2c92e
DATA sha256KWords<>+156(SB)/4, $0x92722c85
DATA sha256KWords<>+160(SB)/4, $0xa2bfe8a1
DATA sha256KWords<>+164(SB)/4, $0xa81a664b
DATA sha256KWords<>+168(SB)/4, $0xc24b8b70
DATA sha256KWords<>+172(SB)/4, $0xc76c51a3
DATA sha256KWords<>+176(SB)/4, $0xd192e819
DATA sha256KWords<>+180(SB)/4, $0xd6990624
DATA sha256KWords<>+184(SB)/4, $0xf40e3585
DATA sha256KWords<>+188(SB)/4, $0x106aa070
DATA sha256KWords<>+192(SB)/4, $0x19a4c116
DATA sha256KWords<>+196(SB)/4, $0x1e376c08
DATA sha256KWords<>+200(SB)/4, $0x2748774c
DATA sha256KWords<>+204(SB)/4, $0x34b0bcb5
DATA sha256KWords<>+208(SB)/4, $0x391c0cb3
DATA sha256KWords<>+212(SB)/4, $0x4ed8aa4a
DATA sha256KWords<>+216(SB)/4, $0x5b9cca4f
DATA sha256KWords<>+220(SB)/4, $0x682e6ff3
DATA sha256KWords<>+224(SB)/4, $0x748f82ee
DATA sha256KWords<>+228(SB)/4, $0x78a5636f
DATA sha256KWords<>+232(SB)/4, $0x84c87814
DATA sha256KWords<>+236(SB)/4, $0x8cc70208
DATA sha256KWords<>+240(SB)/4, $0x90befffa
DATA sha256KWords<>+244(SB)/4, $0xa4506ceb
DATA sha256KWords<>+248(SB)/4, $0xbef9a3f7
DATA sha256KWords<>+252(SB)/4, $0xc67178f2
GLOBL sha256KWords<>(SB), RODATA|NOPTR, $256
