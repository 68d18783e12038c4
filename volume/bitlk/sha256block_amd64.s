#include "textflag.h"

// The BitLocker key stretch with the SHA extensions (SHA-NI): every round
// is two SHA-256 compressions of known message words (see sha256block.go),
// run from registers. SHA256RNDS2 does two rounds on the state kept as
// ABEF and CDGH (Intel's layout); SHA256MSG1/MSG2 extend the message.
//
// Registers: X0 message+constants (SHA256RNDS2's implicit operand),
// X1/X2 state ABEF/CDGH, X3-X6 message words W[4j..4j+3] in rotation,
// X7 scratch, X8 block 2's last words (0, 0, 0, 704), X9/X10 the state a
// block started from, X11/X12 the digest in word order (h0-h3, h4-h7):
// the next round's first message words, X13/X14 the initial hash value as
// ABEF/CDGH, X15 block 2's words 4-7 before the counter goes in.

// ROUNDS4 runs four rounds with the message words in M and the round
// constants at off(AX).
#define ROUNDS4(M, off) \
	MOVOU       off(AX), X0 \
	PADDD       M, X0       \
	SHA256RNDS2 X0, X1, X2  \
	PSHUFD      $0x0e, X0, X0 \
	SHA256RNDS2 X0, X2, X1

// SCHEDULE turns A (W[t-16..t-13]) into W[t..t+3], given B (W[t-12..]),
// C (W[t-8..]) and D (W[t-4..]).
#define SCHEDULE(A, B, C, D) \
	SHA256MSG1 B, A        \
	MOVO       D, X7       \
	PALIGNR    $4, C, X7   \
	PADDD      X7, A       \
	SHA256MSG2 D, A

// BLOCK compresses the message in X3-X6 into X1/X2, adding the state the
// block started from.
#define BLOCK \
	MOVO X1, X9 \
	MOVO X2, X10 \
	ROUNDS4(X3, 0) \
	ROUNDS4(X4, 16) \
	ROUNDS4(X5, 32) \
	ROUNDS4(X6, 48) \
	SCHEDULE(X3, X4, X5, X6) \
	ROUNDS4(X3, 64) \
	SCHEDULE(X4, X5, X6, X3) \
	ROUNDS4(X4, 80) \
	SCHEDULE(X5, X6, X3, X4) \
	ROUNDS4(X5, 96) \
	SCHEDULE(X6, X3, X4, X5) \
	ROUNDS4(X6, 112) \
	SCHEDULE(X3, X4, X5, X6) \
	ROUNDS4(X3, 128) \
	SCHEDULE(X4, X5, X6, X3) \
	ROUNDS4(X4, 144) \
	SCHEDULE(X5, X6, X3, X4) \
	ROUNDS4(X5, 160) \
	SCHEDULE(X6, X3, X4, X5) \
	ROUNDS4(X6, 176) \
	SCHEDULE(X3, X4, X5, X6) \
	ROUNDS4(X3, 192) \
	SCHEDULE(X4, X5, X6, X3) \
	ROUNDS4(X4, 208) \
	SCHEDULE(X5, X6, X3, X4) \
	ROUNDS4(X5, 224) \
	SCHEDULE(X6, X3, X4, X5) \
	ROUNDS4(X6, 240) \
	PADDD X9, X1 \
	PADDD X10, X2

// func roundsAsm(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64)
TEXT ·roundsAsm(SB), NOSPLIT, $0-40
	MOVQ last+0(FP), DI
	MOVQ initial+8(FP), SI
	MOVQ salt+16(FP), DX
	MOVQ counter+24(FP), R8
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JZ   done
	LEAQ sha256K<>(SB), AX

	// The initial hash value, from word order to ABEF/CDGH.
	MOVOU   sha256IVWords<>+0(SB), X13
	MOVOU   sha256IVWords<>+16(SB), X14
	PSHUFD  $0xb1, X13, X13
	PSHUFD  $0x1b, X14, X14
	MOVO    X13, X7
	PALIGNR $8, X14, X13
	PBLENDW $0xf0, X7, X14

	MOVOU block2Words<>+0(SB), X15
	MOVOU block2Words<>+16(SB), X8
	MOVOU 0(DI), X11
	MOVOU 16(DI), X12

loop:
	// Block 1: the last digest, then the initial digest.
	MOVO  X13, X1
	MOVO  X14, X2
	MOVO  X11, X3
	MOVO  X12, X4
	MOVOU 0(SI), X5
	MOVOU 16(SI), X6
	BLOCK

	// Block 2: the salt, the counter (its little-endian bytes read as
	// big-endian words), padding and the length.
	MOVQ   R8, R9
	MOVQ   R8, R10
	SHRQ   $32, R10
	BSWAPL R9
	BSWAPL R10
	MOVOU  0(DX), X3
	MOVO   X15, X4
	PINSRD $0, R9, X4
	PINSRD $1, R10, X4
	PXOR   X5, X5
	MOVO   X8, X6
	BLOCK

	// The digest, back in word order.
	PSHUFD  $0x1b, X1, X11
	PSHUFD  $0xb1, X2, X12
	MOVO    X11, X7
	PBLENDW $0xf0, X12, X11
	PALIGNR $8, X7, X12

	INCQ R8
	DECQ CX
	JNZ  loop

	MOVOU X11, 0(DI)
	MOVOU X12, 16(DI)
	PXOR  X11, X11
	PXOR  X12, X12
	PXOR  X1, X1
	PXOR  X2, X2
	PXOR  X9, X9
	PXOR  X10, X10

done:
	RET

// func cpuidSHA() bool: CPUID leaf 7, EBX bit 29.
TEXT ·cpuidSHA(SB), NOSPLIT, $0-1
	MOVL  $0, AX
	CPUID
	CMPL  AX, $7
	JB    no
	MOVL  $7, AX
	MOVL  $0, CX
	CPUID
	SHRL  $29, BX
	ANDL  $1, BX
	MOVB  BX, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET

DATA sha256IVWords<>+0(SB)/4, $0x6a09e667
DATA sha256IVWords<>+4(SB)/4, $0xbb67ae85
DATA sha256IVWords<>+8(SB)/4, $0x3c6ef372
DATA sha256IVWords<>+12(SB)/4, $0xa54ff53a
DATA sha256IVWords<>+16(SB)/4, $0x510e527f
DATA sha256IVWords<>+20(SB)/4, $0x9b05688c
DATA sha256IVWords<>+24(SB)/4, $0x1f83d9ab
DATA sha256IVWords<>+28(SB)/4, $0x5be0cd19
GLOBL sha256IVWords<>(SB), RODATA|NOPTR, $32

// Block 2's words 4-7 (counter, counter, 0x80 padding byte, 0) and 12-15
// (0, 0, 0, the message length: 88 bytes in bits).
DATA block2Words<>+0(SB)/4, $0
DATA block2Words<>+4(SB)/4, $0
DATA block2Words<>+8(SB)/4, $0x80000000
DATA block2Words<>+12(SB)/4, $0
DATA block2Words<>+16(SB)/4, $0
DATA block2Words<>+20(SB)/4, $0
DATA block2Words<>+24(SB)/4, $0
DATA block2Words<>+28(SB)/4, $704
GLOBL block2Words<>(SB), RODATA|NOPTR, $32

// The round constants (FIPS 180-4, section 4.2.2).
DATA sha256K<>+0(SB)/4, $0x428a2f98
DATA sha256K<>+4(SB)/4, $0x71374491
DATA sha256K<>+8(SB)/4, $0xb5c0fbcf
DATA sha256K<>+12(SB)/4, $0xe9b5dba5
DATA sha256K<>+16(SB)/4, $0x3956c25b
DATA sha256K<>+20(SB)/4, $0x59f111f1
DATA sha256K<>+24(SB)/4, $0x923f82a4
DATA sha256K<>+28(SB)/4, $0xab1c5ed5
DATA sha256K<>+32(SB)/4, $0xd807aa98
DATA sha256K<>+36(SB)/4, $0x12835b01
DATA sha256K<>+40(SB)/4, $0x243185be
DATA sha256K<>+44(SB)/4, $0x550c7dc3
DATA sha256K<>+48(SB)/4, $0x72be5d74
DATA sha256K<>+52(SB)/4, $0x80deb1fe
DATA sha256K<>+56(SB)/4, $0x9bdc06a7
DATA sha256K<>+60(SB)/4, $0xc19bf174
DATA sha256K<>+64(SB)/4, $0xe49b69c1
DATA sha256K<>+68(SB)/4, $0xefbe4786
DATA sha256K<>+72(SB)/4, $0x0fc19dc6
DATA sha256K<>+76(SB)/4, $0x240ca1cc
DATA sha256K<>+80(SB)/4, $0x2de92c6f
DATA sha256K<>+84(SB)/4, $0x4a7484aa
DATA sha256K<>+88(SB)/4, $0x5cb0a9dc
DATA sha256K<>+92(SB)/4, $0x76f988da
DATA sha256K<>+96(SB)/4, $0x983e5152
DATA sha256K<>+100(SB)/4, $0xa831c66d
DATA sha256K<>+104(SB)/4, $0xb00327c8
DATA sha256K<>+108(SB)/4, $0xbf597fc7
DATA sha256K<>+112(SB)/4, $0xc6e00bf3
DATA sha256K<>+116(SB)/4, $0xd5a79147
DATA sha256K<>+120(SB)/4, $0x06ca6351
DATA sha256K<>+124(SB)/4, $0x14292967
DATA sha256K<>+128(SB)/4, $0x27b70a85
DATA sha256K<>+132(SB)/4, $0x2e1b2138
DATA sha256K<>+136(SB)/4, $0x4d2c6dfc
DATA sha256K<>+140(SB)/4, $0x53380d13
DATA sha256K<>+144(SB)/4, $0x650a7354
DATA sha256K<>+148(SB)/4, $0x766a0abb
DATA sha256K<>+152(SB)/4, $0x81c2c92e
DATA sha256K<>+156(SB)/4, $0x92722c85
DATA sha256K<>+160(SB)/4, $0xa2bfe8a1
DATA sha256K<>+164(SB)/4, $0xa81a664b
DATA sha256K<>+168(SB)/4, $0xc24b8b70
DATA sha256K<>+172(SB)/4, $0xc76c51a3
DATA sha256K<>+176(SB)/4, $0xd192e819
DATA sha256K<>+180(SB)/4, $0xd6990624
DATA sha256K<>+184(SB)/4, $0xf40e3585
DATA sha256K<>+188(SB)/4, $0x106aa070
DATA sha256K<>+192(SB)/4, $0x19a4c116
DATA sha256K<>+196(SB)/4, $0x1e376c08
DATA sha256K<>+200(SB)/4, $0x2748774c
DATA sha256K<>+204(SB)/4, $0x34b0bcb5
DATA sha256K<>+208(SB)/4, $0x391c0cb3
DATA sha256K<>+212(SB)/4, $0x4ed8aa4a
DATA sha256K<>+216(SB)/4, $0x5b9cca4f
DATA sha256K<>+220(SB)/4, $0x682e6ff3
DATA sha256K<>+224(SB)/4, $0x748f82ee
DATA sha256K<>+228(SB)/4, $0x78a5636f
DATA sha256K<>+232(SB)/4, $0x84c87814
DATA sha256K<>+236(SB)/4, $0x8cc70208
DATA sha256K<>+240(SB)/4, $0x90befffa
DATA sha256K<>+244(SB)/4, $0xa4506ceb
DATA sha256K<>+248(SB)/4, $0xbef9a3f7
DATA sha256K<>+252(SB)/4, $0xc67178f2
GLOBL sha256K<>(SB), RODATA|NOPTR, $256
