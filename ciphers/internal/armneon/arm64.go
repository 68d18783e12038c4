package armneon

import "fmt"

// ARM64 is AArch64 Advanced SIMD on full 128-bit registers V0-V31.
// Encodings are from the Arm Architecture Reference Manual for A-profile
// (ARM DDI 0487), section C7 (the SIMD&FP instruction pages) and C4.1.
type ARM64 struct{}

func (ARM64) Regs() int        { return 32 }
func (ARM64) MaxSpillOff() int { return 65520 }

const (
	a64EOR   = 0x6E201C00
	a64AND   = 0x4E201C00
	a64ORR   = 0x4EA01C00
	a64BIC   = 0x4E601C00
	a64BIT   = 0x6EA01C00
	a64NOT   = 0x6E205800
	a64REV16 = 0x4E201800
	a64REV64 = 0x4EA00800 // .4S
	a64SHL   = 0x4F005400
	a64USHR  = 0x6F000400
	a64SRI   = 0x6F004400
	a64SLI   = 0x6F005400
	a64TRN1  = 0x4E002800
	a64TRN2  = 0x4E006800
	a64MOVI  = 0x4F00E400 // .16B; with op (bit 29) set: .2D byte mask
	a64LD1   = 0x4CDF7000 // LD1 {Vt.16B}, [Xn], #16
	a64ST1   = 0x4C9F7000
	a64LDRD  = 0xFD400000 // LDR Dt, [Xn, #imm12*8]
	a64DUPD  = 0x4E080400 // DUP Vd.2D, Vn.D[0]
	a64LD1R  = 0x4D40C800 // LD1R {Vt.4S}, [Xn]
	a64STRQ  = 0x3D800000 // STR Qt, [Xn, #imm12*16]
	a64LDRQ  = 0x3DC00000
	a64ADD4S = 0x4EA08400 // ADD Vd.4S
	a64REV32 = 0x6E600800 // REV32 Vd.8H
)

func r3(base uint32, name string, d, n, m V) string {
	return word(base|uint32(m)<<16|uint32(n)<<5|uint32(d), "%s v%d.16b, v%d.16b, v%d.16b", name, d, n, m)
}

var arr = map[int]string{8: "16b", 16: "8h", 32: "4s", 64: "2d"}

func (ARM64) Encode(in Inst) []string {
	d := V(-1)
	if len(in.Dst) > 0 {
		d = in.Dst[0]
	}
	s := in.Src
	sh := func(base uint32, name string, src V, immhb int) []string {
		return []string{word(base|uint32(immhb)<<16|uint32(src)<<5|uint32(d),
			"%s v%d.%s, v%d.%s, #%d", name, d, arr[in.Esize], src, arr[in.Esize], in.Imm)}
	}
	switch in.Kind {
	case Eor:
		return []string{r3(a64EOR, "eor", d, s[0], s[1])}
	case And:
		return []string{r3(a64AND, "and", d, s[0], s[1])}
	case Orr:
		return []string{r3(a64ORR, "orr", d, s[0], s[1])}
	case Bic:
		return []string{r3(a64BIC, "bic", d, s[0], s[1])}
	case Bit:
		return []string{r3(a64BIT, "bit", d, s[1], s[2])}
	case mov:
		return []string{r3(a64ORR, "orr", d, s[0], s[0])}
	case Not:
		return []string{word(a64NOT|uint32(s[0])<<5|uint32(d), "not v%d.16b, v%d.16b", d, s[0])}
	case Rev16:
		return []string{word(a64REV16|uint32(s[0])<<5|uint32(d), "rev16 v%d.16b, v%d.16b", d, s[0])}
	case Add:
		return []string{word(a64ADD4S|uint32(s[1])<<16|uint32(s[0])<<5|uint32(d), "add v%d.4s, v%d.4s, v%d.4s", d, s[0], s[1])}
	case Rev32:
		return []string{word(a64REV32|uint32(s[0])<<5|uint32(d), "rev32 v%d.8h, v%d.8h", d, s[0])}
	case LoadAt:
		return []string{word(a64LDRQ|uint32(in.Off/16)<<10|uint32(in.Base)<<5|uint32(d), "ldr q%d, [x%d, #%d]", d, in.Base, in.Off)}
	case Rev64:
		return []string{word(a64REV64|uint32(s[0])<<5|uint32(d), "rev64 v%d.4s, v%d.4s", d, s[0])}
	case Shl:
		return sh(a64SHL, "shl", s[0], in.Esize+in.Imm)
	case Shr:
		return sh(a64USHR, "ushr", s[0], 2*in.Esize-in.Imm)
	case Sri:
		return sh(a64SRI, "sri", s[1], 2*in.Esize-in.Imm)
	case Sli:
		return sh(a64SLI, "sli", s[1], in.Esize+in.Imm)
	case Trn1, Trn2:
		base, name := uint32(a64TRN1), "trn1"
		if in.Kind == Trn2 {
			base, name = a64TRN2, "trn2"
		}
		size := map[int]uint32{8: 0, 16: 1, 32: 2, 64: 3}[in.Esize]
		return []string{word(base|size<<22|uint32(s[1])<<16|uint32(s[0])<<5|uint32(d),
			"%s v%d.%s, v%d.%s, v%d.%s", name, d, arr[in.Esize], s[0], arr[in.Esize], s[1], arr[in.Esize])}
	case Const:
		return []string{movi(d, in.C)}
	case Load:
		return []string{word(a64LD1|uint32(in.Base)<<5|uint32(d), "ld1 {v%d.16b}, [x%d], #16", d, in.Base)}
	case LoadStep:
		// LD1 {Vt.16B}, [Xn], Xm: post-index by register.
		return []string{word(0x4CC07000|uint32(in.Off)<<16|uint32(in.Base)<<5|uint32(d), "ld1 {v%d.16b}, [x%d], x%d", d, in.Base, in.Off)}
	case Store:
		return []string{word(a64ST1|uint32(in.Base)<<5|uint32(s[0]), "st1 {v%d.16b}, [x%d], #16", s[0], in.Base)}
	case LoadDup64:
		return []string{
			word(a64LDRD|uint32(in.Off/8)<<10|uint32(in.Base)<<5|uint32(d), "ldr d%d, [x%d, #%d]", d, in.Base, in.Off),
			word(a64DUPD|uint32(d)<<5|uint32(d), "dup v%d.2d, v%d.d[0]", d, d),
		}
	}
	panic("armneon: ARM64 cannot encode " + in.Kind.String())
}

func (ARM64) Spill(reg, base, off int) []string {
	return []string{word(a64STRQ|uint32(off/16)<<10|uint32(base)<<5|uint32(reg), "str q%d, [x%d, #%d]", reg, base, off)}
}

func (ARM64) Reload(reg, base, off int) []string {
	return []string{word(a64LDRQ|uint32(off/16)<<10|uint32(base)<<5|uint32(reg), "ldr q%d, [x%d, #%d]", reg, base, off)}
}

// movi encodes MOVI for a repeated byte (.16B) or a byte mask (.2D).
func movi(d V, c uint64) string {
	var imm8, op uint32
	var text string
	if b := byte(c); c == 0x0101010101010101*uint64(b) {
		imm8, text = uint32(b), fmt.Sprintf("movi v%d.16b, #0x%x", d, b)
	} else {
		op = 1
		for i := 0; i < 8; i++ {
			switch byte(c >> (8 * i)) {
			case 0xff:
				imm8 |= 1 << i
			case 0:
			default:
				panic(fmt.Sprintf("armneon: constant %#x has no MOVI form", c))
			}
		}
		text = fmt.Sprintf("movi v%d.2d, #0x%016x", d, c)
	}
	w := uint32(a64MOVI) | op<<29 | (imm8>>5)<<16 | (imm8&31)<<5 | uint32(d)
	return word(w, "%s", text)
}
