//go:build ignore

// The AES-NI XTS kernels for sectors of a whole number of 8-block runs
// (every sector size volumes use): encryptXTS8AESNI/decryptXTS8AESNI, which
// take the encrypted initial tweak of every sector from memory, and
// encryptXTSP64AESNI/decryptXTSP64AESNI, which derive them (plain64: the
// sector number as a 16-byte little-endian value, encrypted with the tweak
// key K2) inside the kernel, so that a whole run of sectors is one call.
//
// The tweak work stays off the vector units:
//
//   - the tweaks are generated with general-purpose instructions, one run
//     ahead, spread between the AES rounds of the current run, into the
//     other half of a double buffer on the stack; at the end of a sector
//     the generator moves on to the next sector's initial tweak, so the
//     runs of consecutive sectors overlap too;
//   - each tweak is stored already XORed with the last round key, u =
//     T ^ k_nr, so that AESENCLAST with u as its key applies the last
//     round key and the output tweak in one instruction, and the input
//     whitening is src ^ u ^ (k_0 ^ k_nr), one XOR with the stored u and
//     one with a register constant;
//   - the generator doubles u itself rather than T: u·α = T·α ^ k_nr·α, so
//     the next u is u·α ^ c with the constant c = k_nr·α ^ k_nr, two XORs
//     with c (from the stack) instead of two XORs with k_nr and two copies
//     per block.
//
// With plain64 tweaks the kernel encrypts the initial tweaks E(K2, n)
// itself, with K2's last round key XORed with k_nr so that they come out
// as u: those of the first eight sectors in the prologue, eight chains
// through the AES units in the time one takes (the first sector's has to
// be waited for anyway), into a ring of eight slots on the stack; and for
// longer runs each later one as a ninth block beside the eight of a run,
// the run after the generator took a tweak from the ring, seven sectors
// before it is needed. A tweak costs the AES units its fourteen rounds
// wherever it goes (they have no idle slots to fill), but one kernel call
// for a whole run of sectors saves the separate tweak pass and its calls,
// which next to 4 KiB at a time cost several percent.
//
// Measured on Zen 4, where eight blocks of latency-4 rounds exactly fill
// the two AES units and any disturbance costs: storing the eight outputs
// of a run between its last rounds is 3% slower than after them, and the
// next run's tweaks generated after rounds 1-8 one by one 1.5% slower
// than two after each of rounds 1-4 (the next run's whitening waits for
// them). The AES-NI kernels reach 97-98% of ECB speed on long runs.
//
// Decryption is the same with K1's decryption keys (AESDECLAST takes the
// key the same way); the tweaks are always encrypted. The stack holds
// key-derived values and is wiped before returning.
package main

import "fmt"

// Stack frame of the XTS8 kernels (offsets from the hardware SP): the two
// 128-byte tweak buffers at the 16-aligned address in [SP, SP+15], then
// c = k_nr·α ^ k_nr at 272 (lo) and 280 (hi); for plain64 K2's last round
// key XORed with k_nr at 288 and the ring of eight encrypted initial
// tweaks (u form) at 304, sector s (counted from first) in slot s mod 8.
const (
	xts8Frame = 432
	xts8C     = 272
	xts8KX    = 288
	xts8Ring  = 304
)

func aesniXTS8(g *gen, dec, p64 bool) {
	name, round, last := opNames(dec, "")
	// keyRegs of K1's round keys 1..keyRegs stay in X(16-keyRegs)..X15;
	// with plain64 X10 holds the tweak being encrypted instead.
	keyRegs := 6
	kernel := name + "XTS8AESNI"
	args := 56
	if p64 {
		keyRegs = 5
		kernel = name + "XTSP64AESNI"
		args = 64
	}
	keyReg := func(r int) string { return fmt.Sprintf("X%d", 16-keyRegs+r-1) }
	perArg := "per+48(FP)"
	frame := xts8C + 16
	if p64 {
		perArg = "per+56(FP)"
		frame = xts8Frame
		g.l("// func %s(nr int, rk, rk2, dst, src *byte, first uint64, n, per int)", kernel)
		g.l("//")
		g.l("// n runs of 8 blocks, per runs per sector, sector s with the tweak")
		g.l("// E(rk2, first+s) (plain64, first+s modulo 2^64). X0-X7: blocks.")
		g.l("// X8: round-key scratch. X9: k_0 ^ k_nr. X10: a tweak being")
		g.l("// encrypted. X11-X15: round keys 1-5. CX and R13: the aligned current")
		g.l("// and next tweak buffers (u = T ^ k_nr). R10:R11: the u being")
		g.l("// generated, DX: runs left in its sector, R14: runs left to generate.")
		g.l("// R8: the next sector whose tweak the generator takes from the ring,")
		g.l("// R9: the next sector whose tweak is to be encrypted.")
	} else {
		g.l("// func %s(nr int, rk *byte, dst, src, tweaks *byte, n, per int)", kernel)
		g.l("//")
		g.l("// n runs of 8 blocks, per runs per sector, tweaks[16s:16s+16] the")
		g.l("// initial tweak of sector s. X0-X7: blocks. X8: round-key scratch.")
		g.l("// X9: k_0 ^ k_nr. X10-X15: round keys 1-6. CX and R13: the aligned")
		g.l("// current and next tweak buffers (u = T ^ k_nr). R10:R11: the u")
		g.l("// being generated, DX: runs left in its sector, R9: per, R14: runs")
		g.l("// left to generate.")
	}
	g.l("TEXT ·%s(SB), NOSPLIT, $%d-%d", kernel, frame, args)
	g.l("MOVQ nr+0(FP), CX")
	g.l("MOVQ rk+8(FP), AX")
	if p64 {
		g.l("MOVQ rk2+16(FP), BX")
		g.l("MOVQ dst+24(FP), DI")
		g.l("MOVQ src+32(FP), SI")
		g.l("MOVQ n+48(FP), R14")
		g.l("MOVQ %s, DX", perArg)
	} else {
		g.l("MOVQ dst+16(FP), DI")
		g.l("MOVQ src+24(FP), SI")
		g.l("MOVQ tweaks+32(FP), BX")
		g.l("MOVQ n+40(FP), R14")
		g.l("MOVQ %s, R9", perArg)
		g.l("MOVQ R9, DX")
	}
	g.l("TESTQ R14, R14")
	g.l("JZ   ret")
	g.l("MOVQ CX, R12")
	g.l("LEAQ 15(SP), CX")
	g.l("ANDQ $-16, CX")
	g.l("LEAQ 128(CX), R13")
	g.l("CMPQ R12, $12")
	g.l("JB   r10")
	g.l("JEQ  r12")
	g.l("JMP  r14")
	for _, nr := range keySizes {
		p := fmt.Sprintf("x8r%d", nr)
		kl := 16 * nr // offset of the last round key
		// step k stores u as block k of buffer R13 and moves on to the next
		// block's: u·α ^ c, the doubling's carry out of bit 127 folded
		// back as 0x87.
		step := func(k int) {
			g.l("MOVQ R10, %d(R13)", 16*k)
			g.l("MOVQ R11, %d(R13)", 16*k+8)
			g.l("MOVQ R11, R12")
			g.l("SARQ $63, R12")
			g.l("ANDQ $0x87, R12")
			g.l("ADDQ R10, R10")
			g.l("ADCQ R11, R11")
			g.l("XORQ %d(SP), R10", xts8C)
			g.l("XORQ %d(SP), R11", xts8C+8)
			g.l("XORQ R12, R10")
		}
		// ringSlot sets R12 to the ring offset of sector reg.
		ringSlot := func(reg string) {
			g.l("MOVQ %s, R12", reg)
			g.l("ANDQ $7, R12")
			g.l("SHLQ $4, R12")
		}
		// loadNext puts the next sector's initial u in R10:R11.
		loadNext := func() {
			if p64 {
				ringSlot("R8")
				g.l("MOVQ %d(SP)(R12*1), R10", xts8Ring)
				g.l("MOVQ %d(SP)(R12*1), R11", xts8Ring+8)
				g.l("INCQ R8")
				return
			}
			g.l("MOVQ (BX), R10")
			g.l("MOVQ 8(BX), R11")
			g.l("XORQ %d(AX), R10", kl)
			g.l("XORQ %d(AX), R11", kl+8)
			g.l("ADDQ $16, BX")
		}
		// advance ends the generation of one run: count it down in its
		// sector and, at the sector's end, load the next sector's u
		// unless no run is left to generate.
		label := 0
		advance := func() {
			label++
			skip := fmt.Sprintf("%s_same%d", p, label)
			g.l("DECQ R14")
			g.l("JZ   %s", skip)
			g.l("DECQ DX")
			g.l("JNZ  %s", skip)
			if p64 {
				g.l("MOVQ %s, DX", perArg)
			} else {
				g.l("MOVQ R9, DX")
			}
			loadNext()
			g.l("%s:", skip)
		}

		g.l("r%d:", nr)
		if p64 {
			// The tweaks of sectors 0-7 in X0-X7, eight chains that take
			// the time one takes: sector 0's goes to the generator, the
			// others to the ring. The last round key is K2's ^ k_nr (kept
			// at xts8KX for the tweaks encrypted later), so they come out
			// as u.
			g.l("MOVOU %d(BX), X9", kl)
			g.l("MOVOU %d(AX), X8", kl)
			g.l("PXOR X8, X9")
			g.l("MOVOU X9, %d(SP)", xts8KX)
			g.l("MOVQ first+40(FP), R12")
			for i := 0; i < 8; i++ {
				if i > 0 {
					g.l("INCQ R12")
				}
				g.l("MOVQ R12, X%d", i)
			}
			g.l("MOVOU (BX), X8")
			for i := 0; i < 8; i++ {
				g.l("PXOR X8, X%d", i)
			}
			for r := 1; r < nr; r++ {
				g.l("MOVOU %d(BX), X8", 16*r)
				for i := 0; i < 8; i++ {
					g.l("AESENC X8, X%d", i)
				}
			}
			for i := 0; i < 8; i++ {
				g.l("AESENCLAST X9, X%d", i)
			}
			// c = k_nr·α ^ k_nr.
			g.l("MOVQ %d(AX), R10", kl)
			g.l("MOVQ %d(AX), R11", kl+8)
			g.l("MOVQ R11, R12")
			g.l("SARQ $63, R12")
			g.l("ANDQ $0x87, R12")
			g.l("ADDQ R10, R10")
			g.l("ADCQ R11, R11")
			g.l("XORQ R12, R10")
			g.l("XORQ %d(AX), R10", kl)
			g.l("XORQ %d(AX), R11", kl+8)
			g.l("MOVQ R10, %d(SP)", xts8C)
			g.l("MOVQ R11, %d(SP)", xts8C+8)
			g.l("MOVQ X0, R10")
			g.l("PEXTRQ $1, X0, R11")
			for i := 1; i < 8; i++ {
				g.l("MOVOU X%d, %d(SP)", i, xts8Ring+16*i)
			}
			g.l("MOVQ $1, R8")
			g.l("MOVQ $8, R9")
		} else {
			// c = k_nr·α ^ k_nr.
			g.l("MOVQ %d(AX), R10", kl)
			g.l("MOVQ %d(AX), R11", kl+8)
			g.l("MOVQ R11, R12")
			g.l("SARQ $63, R12")
			g.l("ANDQ $0x87, R12")
			g.l("ADDQ R10, R10")
			g.l("ADCQ R11, R11")
			g.l("XORQ R12, R10")
			g.l("XORQ %d(AX), R10", kl)
			g.l("XORQ %d(AX), R11", kl+8)
			g.l("MOVQ R10, %d(SP)", xts8C)
			g.l("MOVQ R11, %d(SP)", xts8C+8)
			loadNext()
		}
		for r := 1; r <= keyRegs; r++ {
			g.l("MOVOU %d(AX), %s", 16*r, keyReg(r))
		}
		g.l("MOVOU (AX), X9")
		g.l("MOVOU %d(AX), X8", kl)
		g.l("PXOR X8, X9")
		for k := 0; k < 8; k++ {
			step(k)
		}
		advance()
		g.l("XCHGQ CX, R13")

		// The run bodies: "gen" generates the next run's tweaks between
		// the rounds, "chain" also encrypts a later sector's tweak into
		// the ring, and "last" (the final run) does neither.
		body := func(gen, chain bool) {
			for i := 0; i < 8; i++ {
				g.l("MOVOU %d(SI), X%d", 16*i, i)
				g.l("PXOR %d(CX), X%d", 16*i, i)
				g.l("PXOR X9, X%d", i)
			}
			if chain {
				g.l("MOVQ first+40(FP), R12")
				g.l("ADDQ R9, R12")
				g.l("MOVQ R12, X10")
				g.l("MOVOU (BX), X8")
				g.l("PXOR X8, X10")
			}
			// The steps for the next run go two after each of rounds
			// 1-4: the sooner its tweaks are stored, the sooner the next
			// run can start beside this one's last rounds (after rounds
			// 1-8 one by one, 1.5% slower on Zen 4).
			for r := 1; r < nr; r++ {
				key := keyReg(r)
				if r > keyRegs {
					g.l("MOVOU %d(AX), X8", 16*r)
					key = "X8"
				}
				for i := 0; i < 8; i++ {
					g.l("%s %s, X%d", round, key, i)
				}
				if chain {
					g.l("MOVOU %d(BX), X8", 16*r)
					g.l("AESENC X8, X10")
				}
				if gen && r <= 4 {
					step(2*r - 2)
					step(2*r - 1)
				}
			}
			// All last rounds, then all stores: interleaving them costs
			// about 3% on Zen 4.
			for i := 0; i < 8; i++ {
				g.l("%s %d(CX), X%d", last, 16*i, i)
			}
			for i := 0; i < 8; i++ {
				g.l("MOVOU X%d, %d(DI)", i, 16*i)
			}
			if chain {
				g.l("MOVOU %d(SP), X8", xts8KX)
				g.l("AESENCLAST X8, X10")
				ringSlot("R9")
				g.l("MOVOU X10, %d(SP)(R12*1)", xts8Ring)
				g.l("INCQ R9")
			}
		}
		next := func() {
			g.l("XCHGQ CX, R13")
			g.l("ADDQ $128, SI")
			g.l("ADDQ $128, DI")
			g.l("JMP  %s_loop", p)
		}

		g.l("%s_loop:", p)
		g.l("TESTQ R14, R14")
		g.l("JZ   %s_last", p)
		if p64 {
			// The run after the generator took a sector's tweak from the
			// ring (DX was reset to per) encrypts the tweak of sector R9
			// into the ring (seven sectors ahead), if that sector exists:
			// R9·per < n.
			g.l("MOVQ %s, R12", perArg)
			g.l("CMPQ DX, R12")
			g.l("JNE  %s_gen", p)
			g.l("IMULQ R9, R12")
			g.l("CMPQ R12, n+48(FP)")
			g.l("JB   %s_chain", p)
		}
		g.l("%s_gen:", p)
		body(true, false)
		advance()
		next()
		if p64 {
			g.l("%s_chain:", p)
			body(true, true)
			advance()
			next()
		}
		g.l("%s_last:", p)
		body(false, false)
		g.l("JMP  wipe")
	}
	g.l("wipe:")
	g.l("// The tweak buffers hold T ^ k_nr, the slots above them c, K2's last")
	g.l("// round key ^ k_nr and encrypted tweaks: no key-derived value stays")
	g.l("// behind.")
	g.l("PXOR X8, X8")
	g.l("LEAQ 15(SP), CX")
	g.l("ANDQ $-16, CX")
	for i := 0; i < 16; i++ {
		g.l("MOVO X8, %d(CX)", 16*i)
	}
	g.l("MOVOU X8, %d(SP)", xts8C)
	if p64 {
		g.l("MOVOU X8, %d(SP)", xts8KX)
		for i := 0; i < 8; i++ {
			g.l("MOVOU X8, %d(SP)", xts8Ring+16*i)
		}
	}
	for i := 9; i <= 15; i++ {
		g.l("PXOR X%d, X%d", i, i)
	}
	g.l("XORL R10, R10")
	g.l("XORL R11, R11")
	g.l("XORL R12, R12")
	g.l("ret:")
	g.l("RET")
	g.l("")
}
