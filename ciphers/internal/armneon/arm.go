package armneon

import "fmt"

// ARM is ARMv7-A NEON in the A32 encoding: 16 quadword registers q0-q15
// (d0-d31). Encodings are from the ARM Architecture Reference Manual,
// ARMv7-A and ARMv7-R edition, section A7 ("Advanced SIMD and
// Floating-point Instruction Encoding") and the instruction pages of A8.
// Scalar work (address arithmetic for LoadDup32) uses TmpReg.
type ARM struct {
	TmpReg int // a core register the kernel leaves to the allocator
}

func (ARM) Regs() int        { return 16 }
func (ARM) MaxSpillOff() int { return 1024 }

// word formats the instruction as Go assembly with its GNU mnemonic.
func word(w uint32, format string, args ...any) string {
	return fmt.Sprintf("WORD $0x%08x // %s", w, fmt.Sprintf(format, args...))
}

// dreg places d register number r into the Vd (bits 22, 15:12), Vn (7,
// 19:16) or Vm (5, 3:0) fields.
func vd(r int) uint32 { return uint32(r>>4&1)<<22 | uint32(r&15)<<12 }
func vn(r int) uint32 { return uint32(r>>4&1)<<7 | uint32(r&15)<<16 }
func vm(r int) uint32 { return uint32(r>>4&1)<<5 | uint32(r&15) }

const qbit = 1 << 6

// A32 base encodings (unconditional Advanced SIMD space).
const (
	a32VEOR  = 0xF3000110 // 3 registers same length, A=0001, B=1, U=1, C=00
	a32VAND  = 0xF2000110 // U=0, C=00
	a32VBIC  = 0xF2100110 // U=0, C=01
	a32VORR  = 0xF2200110 // U=0, C=10
	a32VBIT  = 0xF3200110 // U=1, C=10
	a32VMVN  = 0xF3B00580 // 2 registers misc, A=10, B=1011x
	a32VREV  = 0xF3B00000 // 2 registers misc, A=00, B=000xx (op in bits 8:7)
	a32VTRN  = 0xF3B20080 // 2 registers misc, A=10, B=0001x
	a32VSWP  = 0xF3B20000 // A=10, B=0000x
	a32VSHR  = 0xF2800010 // 2 registers and shift, A=0000 (U at bit 24)
	a32VSRI  = 0xF3800410 // A=0100, U=1
	a32VSHL  = 0xF2800510 // A=0101, U=0
	a32VSLI  = 0xF3800510 // A=0101, U=1
	a32VMOVI = 0xF2800010 // 1 register and modified immediate
	a32VLD1  = 0xF4200000 // element and structure load, multiple structures
	a32VST1  = 0xF4000000
	a32VLD1R = 0xF4A00C00 // single element to all lanes
	a32VADD  = 0xF2200800 // 3 registers same length, A=1000, B=0, U=0, size 10 (.I32)
	a32VLDR  = 0xED900B00 // cond=1110, U=1
	a32VSTR  = 0xED800B00
)

func q(r V) int { return 2 * int(r) }

func three(base uint32, name string, d, n, m V) string {
	return word(base|qbit|vd(q(d))|vn(q(n))|vm(q(m)), "%s q%d, q%d, q%d", name, d, n, m)
}

// shiftImm encodes imm6 and L for a shift by n in lanes of esize bits:
// left shifts store esize+n, right shifts 2*esize-n (A7.4.4).
func shiftImm(esize, n int, left bool) uint32 {
	v := 2*esize - n
	if left {
		v = esize + n
	}
	if esize == 64 {
		return uint32(v&63)<<16 | 1<<7
	}
	return uint32(v) << 16
}

func (t ARM) Encode(in Inst) []string {
	d := V(-1)
	if len(in.Dst) > 0 {
		d = in.Dst[0]
	}
	s := in.Src
	switch in.Kind {
	case Eor:
		return []string{three(a32VEOR, "veor", d, s[0], s[1])}
	case And:
		return []string{three(a32VAND, "vand", d, s[0], s[1])}
	case Orr:
		return []string{three(a32VORR, "vorr", d, s[0], s[1])}
	case Bic:
		return []string{three(a32VBIC, "vbic", d, s[0], s[1])}
	case Bit:
		return []string{three(a32VBIT, "vbit", d, s[1], s[2])}
	case mov:
		return []string{three(a32VORR, "vorr", d, s[0], s[0])}
	case Not:
		return []string{word(a32VMVN|qbit|vd(q(d))|vm(q(s[0])), "vmvn q%d, q%d", d, s[0])}
	case Rev16:
		return []string{word(a32VREV|2<<7|qbit|vd(q(d))|vm(q(s[0])), "vrev16.8 q%d, q%d", d, s[0])}
	case Add:
		return []string{three(a32VADD, "vadd.i32", d, s[0], s[1])}
	case Rev32:
		return []string{word(a32VREV|1<<18|1<<7|qbit|vd(q(d))|vm(q(s[0])), "vrev32.16 q%d, q%d", d, s[0])}
	case LoadAt:
		return []string{
			word(a32VLDR|vd(q(d))|uint32(in.Base)<<16|uint32(in.Off/4), "vldr d%d, [r%d, #%d]", q(d), in.Base, in.Off),
			word(a32VLDR|vd(q(d)+1)|uint32(in.Base)<<16|uint32(in.Off/4+2), "vldr d%d, [r%d, #%d]", q(d)+1, in.Base, in.Off+8),
		}
	case Rev64:
		return []string{word(a32VREV|2<<18|qbit|vd(q(d))|vm(q(s[0])), "vrev64.32 q%d, q%d", d, s[0])}
	case Shl:
		return []string{word(a32VSHL|shiftImm(in.Esize, in.Imm, true)|qbit|vd(q(d))|vm(q(s[0])),
			"vshl.i%d q%d, q%d, #%d", in.Esize, d, s[0], in.Imm)}
	case Shr:
		return []string{word(a32VSHR|1<<24|shiftImm(in.Esize, in.Imm, false)|qbit|vd(q(d))|vm(q(s[0])),
			"vshr.u%d q%d, q%d, #%d", in.Esize, d, s[0], in.Imm)}
	case Sri:
		return []string{word(a32VSRI|shiftImm(in.Esize, in.Imm, false)|qbit|vd(q(d))|vm(q(s[1])),
			"vsri.%d q%d, q%d, #%d", in.Esize, d, s[1], in.Imm)}
	case Sli:
		return []string{word(a32VSLI|shiftImm(in.Esize, in.Imm, true)|qbit|vd(q(d))|vm(q(s[1])),
			"vsli.%d q%d, q%d, #%d", in.Esize, d, s[1], in.Imm)}
	case Trn:
		size := map[int]uint32{8: 0, 16: 1, 32: 2}[in.Esize]
		return []string{word(a32VTRN|size<<18|qbit|vd(q(in.Dst[0]))|vm(q(in.Dst[1])),
			"vtrn.%d q%d, q%d", in.Esize, in.Dst[0], in.Dst[1])}
	case SwapHL:
		hi, lo := q(in.Dst[0])+1, q(in.Dst[1])
		return []string{word(a32VSWP|vd(hi)|vm(lo), "vswp d%d, d%d", hi, lo)}
	case Const:
		return []string{vmovImm(d, in.C)}
	case Load:
		// VLD1.8 {Dd, Dd+1}, [Rn]!: type 1010 (two registers), size 00,
		// no alignment, Rm = 13 (write back).
		return []string{word(a32VLD1|vd(q(d))|uint32(in.Base)<<16|0xA<<8|13,
			"vld1.8 {d%d-d%d}, [r%d]!", q(d), q(d)+1, in.Base)}
	case LoadStep:
		// As Load, with Rm = the step register.
		return []string{word(a32VLD1|vd(q(d))|uint32(in.Base)<<16|0xA<<8|uint32(in.Off),
			"vld1.8 {d%d-d%d}, [r%d], r%d", q(d), q(d)+1, in.Base, in.Off)}
	case Store:
		return []string{word(a32VST1|vd(q(s[0]))|uint32(in.Base)<<16|0xA<<8|13,
			"vst1.8 {d%d-d%d}, [r%d]!", q(s[0]), q(s[0])+1, in.Base)}
	case LoadDup64:
		return []string{
			word(a32VLDR|vd(q(d))|uint32(in.Base)<<16|uint32(in.Off/4), "vldr d%d, [r%d, #%d]", q(d), in.Base, in.Off),
			word(a32VLDR|vd(q(d)+1)|uint32(in.Base)<<16|uint32(in.Off/4), "vldr d%d, [r%d, #%d]", q(d)+1, in.Base, in.Off),
		}
	case LoadDup32:
		// VLD1.32 {Dd[], Dd+1[]}, [Rn]: size 10, T=1 (two registers), Rm = 15.
		return []string{
			fmt.Sprintf("ADD $%d, R%d, R%d", in.Off, in.Base, t.TmpReg),
			word(a32VLD1R|vd(q(d))|uint32(t.TmpReg)<<16|2<<6|1<<5|15,
				"vld1.32 {d%d[], d%d[]}, [r%d]", q(d), q(d)+1, t.TmpReg),
		}
	}
	panic("armneon: ARM cannot encode " + in.Kind.String())
}

func (ARM) Spill(reg, base, off int) []string {
	r := q(V(reg))
	return []string{
		word(a32VSTR|vd(r)|uint32(base)<<16|uint32(off/4), "vstr d%d, [r%d, #%d]", r, base, off),
		word(a32VSTR|vd(r+1)|uint32(base)<<16|uint32(off/4+2), "vstr d%d, [r%d, #%d]", r+1, base, off+8),
	}
}

func (ARM) Reload(reg, base, off int) []string {
	r := q(V(reg))
	return []string{
		word(a32VLDR|vd(r)|uint32(base)<<16|uint32(off/4), "vldr d%d, [r%d, #%d]", r, base, off),
		word(a32VLDR|vd(r+1)|uint32(base)<<16|uint32(off/4+2), "vldr d%d, [r%d, #%d]", r+1, base, off+8),
	}
}

// vmovImm encodes VMOV (immediate) for a 64-bit lane pattern that is either
// one byte repeated (cmode 1110, op 0: VMOV.I8) or made only of 0x00 and
// 0xff bytes (cmode 1110, op 1: VMOV.I64), A7.4.6.
func vmovImm(d V, c uint64) string {
	var imm8 uint32
	var op uint32
	var text string
	if b := byte(c); c == 0x0101010101010101*uint64(b) {
		imm8, text = uint32(b), fmt.Sprintf("vmov.i8 q%d, #0x%x", d, b)
	} else {
		op = 1
		for i := 0; i < 8; i++ {
			switch byte(c >> (8 * i)) {
			case 0xff:
				imm8 |= 1 << i
			case 0:
			default:
				panic(fmt.Sprintf("armneon: constant %#x has no VMOV form", c))
			}
		}
		text = fmt.Sprintf("vmov.i64 q%d, #0x%016x", d, c)
	}
	w := uint32(a32VMOVI) | (imm8>>7)<<24 | (imm8>>4&7)<<16 | imm8&15 | 0xE<<8 | qbit | op<<5 | vd(q(d))
	return word(w, "%s", text)
}
