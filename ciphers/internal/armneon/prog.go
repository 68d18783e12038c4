// Package armneon generates straight-line NEON kernels for 32-bit ARM
// (ARMv7-A with NEON, A32 encoding) and arm64 from one description.
//
// Go's arm assembler knows no NEON instructions and its arm64 assembler only
// some, so a kernel is written as a program on virtual 128-bit values
// (Prog), registers are assigned by a linear scan that spills to a scratch
// area when the 16 (ARMv7) or 32 (arm64) vector registers run out, and
// every vector instruction is printed as a WORD with its GNU assembler
// mnemonic as the comment. The comments are what TestGeneratedWordsMatchBinutils
// assembles with binutils to check each word; TestKnownEncodings checks a
// table of encodings taken from the ARM Architecture Reference Manual.
//
// Values are immutable (SSA), so a spilled value's slot stays valid until
// it dies, and values that can be recomputed cheaply (constants, loads of
// round keys) are dropped instead of spilled and loaded again when needed.
package armneon

import (
	"fmt"
	"sort"
)

// Kind is a vector operation. Unless noted, the result is a new value.
type Kind int

const (
	Eor       Kind = iota // a ^ b
	And                   // a & b
	Orr                   // a | b
	Bic                   // a &^ b
	Not                   // ^a
	Shl                   // a << Imm in lanes of Esize bits
	Shr                   // a >> Imm (unsigned) in lanes of Esize bits
	Sri                   // tied: a with b >> Imm inserted (lanes of Esize)
	Sli                   // tied: a with b << Imm inserted (lanes of Esize)
	Rev16                 // bytes swapped inside each 16-bit lane
	Rev64                 // 32-bit halves swapped inside each 64-bit lane
	Bit                   // tied: a with the bits of b where c is set
	Trn1                  // arm64 TRN1 in lanes of Esize: (a0, b0, a2, b2, ...)
	Trn2                  // arm64 TRN2: (a1, b1, a3, b3, ...)
	Trn                   // ARMv7 pair: VTRN in lanes of Esize, both tied
	SwapHL                // ARMv7 pair: a's high 64 bits <-> b's low 64 bits
	Const                 // every 64-bit lane = C (a byte splat or byte mask)
	Load                  // 16 bytes from pointer register Base, which advances
	LoadStep              // 16 bytes from pointer register Base, which then advances by register Off
	Store                 // 16 bytes of a to pointer register Base, which advances
	LoadDup64             // the 64 bits at Base+Off in both lanes (re-loadable)
	LoadDup32             // the 32 bits at Base+Off in all four lanes (re-loadable)
	LoadAt                // the 16 bytes at Base+Off (re-loadable)
	Add                   // a + b in 32-bit lanes
	Rev32                 // 16-bit halves swapped inside each 32-bit lane
	mov                   // register copy (inserted by the allocator)
)

var kindNames = [...]string{"eor", "and", "orr", "bic", "not", "shl", "shr", "sri", "sli",
	"rev16", "rev64", "bit", "trn1", "trn2", "trn", "swaphl", "const", "load", "loadstep", "store",
	"loaddup64", "loaddup32", "loadat", "add", "rev32", "mov"}

func (k Kind) String() string { return kindNames[k] }

func (k Kind) tied() bool { return k == Sri || k == Sli || k == Bit }
func (k Kind) pair() bool { return k == Trn || k == SwapHL }
func (k Kind) remat() bool {
	return k == Const || k == LoadDup64 || k == LoadDup32 || k == LoadAt
}

// V is a virtual value.
type V int

// Inst is one operation on values, or (after allocation) on registers.
type Inst struct {
	Kind  Kind
	Dst   []V
	Src   []V
	Imm   int
	Esize int
	C     uint64
	Base  int // scalar register number
	Off   int
}

// Prog is a straight-line program.
type Prog struct {
	insts []Inst
	n     int
}

func (p *Prog) newV() V { p.n++; return V(p.n - 1) }

func (p *Prog) op(k Kind, imm, esize int, src ...V) V {
	d := p.newV()
	p.insts = append(p.insts, Inst{Kind: k, Dst: []V{d}, Src: src, Imm: imm, Esize: esize})
	return d
}

func (p *Prog) Eor(a, b V) V { return p.op(Eor, 0, 0, a, b) }
func (p *Prog) And(a, b V) V { return p.op(And, 0, 0, a, b) }
func (p *Prog) Orr(a, b V) V { return p.op(Orr, 0, 0, a, b) }

// Bic is a &^ b.
func (p *Prog) Bic(a, b V) V               { return p.op(Bic, 0, 0, a, b) }
func (p *Prog) Not(a V) V                  { return p.op(Not, 0, 0, a) }
func (p *Prog) Shl(a V, n, esize int) V    { return p.op(Shl, n, esize, a) }
func (p *Prog) Shr(a V, n, esize int) V    { return p.op(Shr, n, esize, a) }
func (p *Prog) Sri(a, b V, n, esize int) V { return p.op(Sri, n, esize, a, b) }
func (p *Prog) Sli(a, b V, n, esize int) V { return p.op(Sli, n, esize, a, b) }
func (p *Prog) Rev16(a V) V                { return p.op(Rev16, 0, 0, a) }
func (p *Prog) Rev32(a V) V                { return p.op(Rev32, 0, 0, a) }
func (p *Prog) Add32(a, b V) V             { return p.op(Add, 0, 32, a, b) }
func (p *Prog) LoadAt(base, off int) V     { return p.loadAt(LoadAt, base, off) }
func (p *Prog) Rev64(a V) V                { return p.op(Rev64, 0, 0, a) }
func (p *Prog) Bit(a, b, mask V) V         { return p.op(Bit, 0, 0, a, b, mask) }
func (p *Prog) Trn1(a, b V, esize int) V   { return p.op(Trn1, 0, esize, a, b) }
func (p *Prog) Trn2(a, b V, esize int) V   { return p.op(Trn2, 0, esize, a, b) }
func (p *Prog) Xor3(a, b, c V) V           { return p.Eor(p.Eor(a, b), c) }
func (p *Prog) Rotl32(a V, n int) V        { return p.Sri(p.Shl(a, n, 32), a, 32-n, 32) }
func (p *Prog) Const(c uint64) V           { d := p.op(Const, 0, 0); p.last().C = c; return d }
func (p *Prog) last() *Inst                { return &p.insts[len(p.insts)-1] }
func (p *Prog) Load(base int) V            { d := p.op(Load, 0, 0); p.last().Base = base; return d }

// LoadStep loads 16 bytes from pointer register base and advances it by
// the value of register step (which may be zero: the same 16 bytes again).
func (p *Prog) LoadStep(base, step int) V {
	d := p.op(LoadStep, 0, 0)
	p.last().Base, p.last().Off = base, step
	return d
}
func (p *Prog) Store(a V, base int) {
	p.insts = append(p.insts, Inst{Kind: Store, Src: []V{a}, Base: base})
}
func (p *Prog) LoadDup64(base, off int) V { return p.loadAt(LoadDup64, base, off) }
func (p *Prog) LoadDup32(base, off int) V { return p.loadAt(LoadDup32, base, off) }
func (p *Prog) loadAt(k Kind, b, off int) V {
	d := p.op(k, 0, 0)
	p.last().Base, p.last().Off = b, off
	return d
}

// Trn is ARMv7's VTRN: it returns (a', b') with a'[2i+1] = b[2i] and
// b'[2i] = a[2i+1] in lanes of esize bits.
func (p *Prog) Trn(a, b V, esize int) (V, V) { return p.pairOp(Trn, esize, a, b) }

// SwapHL exchanges the high 64 bits of a with the low 64 bits of b (VSWP).
func (p *Prog) SwapHL(a, b V) (V, V) { return p.pairOp(SwapHL, 0, a, b) }

func (p *Prog) pairOp(k Kind, esize int, a, b V) (V, V) {
	x, y := p.newV(), p.newV()
	p.insts = append(p.insts, Inst{Kind: k, Dst: []V{x, y}, Src: []V{a, b}, Esize: esize})
	return x, y
}

// Target is an instruction set: its vector register count and encodings.
type Target interface {
	Regs() int
	// Encode returns the lines for one instruction on registers (Dst and
	// Src hold register numbers).
	Encode(in Inst) []string
	// Spill and Reload move a register to and from scratch slot off(base).
	Spill(reg, base, off int) []string
	Reload(reg, base, off int) []string
	MaxSpillOff() int
}

// Stats reports what allocation cost.
type Stats struct {
	Insts, Spills, Reloads, Remats, Moves int
}

// Allocate assigns registers and returns the instruction lines. Spill
// slots are 16 bytes each from the address in core register scratchReg;
// slotsUsed reports how many the program needs.
func (p *Prog) Allocate(t Target, scratchReg int) (lines []string, slotsUsed int, st Stats) {
	uses := make([][]int, p.n)
	def := make([]int, p.n)
	defInst := make([]*Inst, p.n)
	for i := range p.insts {
		in := &p.insts[i]
		for _, s := range in.Src {
			uses[s] = append(uses[s], i)
		}
		for _, d := range in.Dst {
			def[d] = i
			defInst[d] = in
		}
	}
	nextUse := func(v V, after int) int {
		u := uses[v]
		j := sort.SearchInts(u, after+1)
		if j == len(u) {
			return 1 << 30
		}
		return u[j]
	}
	lastUse := func(v V) int {
		if len(uses[v]) == 0 {
			return def[v]
		}
		return uses[v][len(uses[v])-1]
	}
	nregs := t.Regs()
	held := make([]V, nregs)
	for r := range held {
		held[r] = -1
	}
	reg := make([]int, p.n)
	for i := range reg {
		reg[i] = -1
	}
	slot := make([]int, p.n)
	for i := range slot {
		slot[i] = -1
	}
	var freeSlots []int
	nslots := 0
	emit := func(ls []string) { lines = append(lines, ls...) }

	var getReg func(at int, keep map[V]bool) int
	getReg = func(at int, keep map[V]bool) int {
		for r := 0; r < nregs; r++ {
			if held[r] == -1 {
				return r
			}
		}
		victim, far := -1, -1
		for r := 0; r < nregs; r++ {
			v := held[r]
			if v < 0 || keep[v] {
				continue
			}
			nu := nextUse(v, at-1)
			// Prefer dropping a value that costs nothing to get back.
			if defInst[v].Kind.remat() || slot[v] >= 0 {
				nu += 1 << 20
			}
			if nu > far {
				victim, far = r, nu
			}
		}
		if victim < 0 {
			panic("armneon: out of vector registers")
		}
		v := held[victim]
		if !defInst[v].Kind.remat() && slot[v] < 0 {
			if len(freeSlots) > 0 {
				slot[v] = freeSlots[len(freeSlots)-1]
				freeSlots = freeSlots[:len(freeSlots)-1]
			} else {
				slot[v] = nslots
				nslots++
				if 16*nslots > t.MaxSpillOff() {
					panic("armneon: spill area too large")
				}
			}
			emit(t.Spill(victim, scratchReg, 16*slot[v]))
			st.Spills++
		}
		held[victim] = -1
		reg[v] = -1
		return victim
	}
	release := func(v V) {
		if reg[v] >= 0 {
			held[reg[v]] = -1
			reg[v] = -1
		}
		if slot[v] >= 0 {
			freeSlots = append(freeSlots, slot[v])
			slot[v] = -1
		}
	}
	assign := func(v V, r int) { held[r] = v; reg[v] = r }

	for i := range p.insts {
		in := p.insts[i]
		keep := map[V]bool{}
		for _, s := range in.Src {
			keep[s] = true
		}
		// Bring every source into a register.
		for _, s := range in.Src {
			if reg[s] >= 0 {
				continue
			}
			r := getReg(i, keep)
			d := *defInst[s]
			switch {
			case d.Kind.remat():
				d.Dst = []V{V(r)}
				emit(t.Encode(d))
				st.Remats++
			case slot[s] >= 0:
				emit(t.Reload(r, scratchReg, 16*slot[s]))
				st.Reloads++
			default:
				panic(fmt.Sprintf("armneon: value %d lost", s))
			}
			assign(s, r)
		}
		dies := func(s V) bool { return lastUse(s) == i }
		phys := in
		phys.Src = make([]V, len(in.Src))
		for j, s := range in.Src {
			phys.Src[j] = V(reg[s])
		}
		switch {
		case in.Kind == Store:
			emit(t.Encode(phys))
			for _, s := range in.Src {
				if dies(s) {
					release(s)
				}
			}
		case in.Kind.tied() || in.Kind.pair():
			ntied := 1
			if in.Kind.pair() {
				ntied = 2
			}
			phys.Dst = make([]V, ntied)
			for j := 0; j < ntied; j++ {
				s := in.Src[j]
				if dies(s) && (j == 0 || in.Src[0] != in.Src[1]) {
					phys.Dst[j] = V(reg[s])
					continue
				}
				r := getReg(i, keep)
				emit(t.Encode(Inst{Kind: mov, Dst: []V{V(r)}, Src: []V{V(reg[s])}}))
				st.Moves++
				held[r] = -2 // taken until assigned below
				phys.Dst[j] = V(r)
				phys.Src[j] = V(r)
			}
			emit(t.Encode(phys))
			for _, s := range in.Src {
				if dies(s) {
					release(s)
				}
			}
			for j, d := range in.Dst {
				assign(d, int(phys.Dst[j]))
			}
		default:
			for _, s := range in.Src {
				if dies(s) {
					release(s)
				}
			}
			r := getReg(i, keep)
			phys.Dst = []V{V(r)}
			emit(t.Encode(phys))
			assign(in.Dst[0], r)
		}
		st.Insts++
		for _, d := range in.Dst {
			if len(uses[d]) == 0 {
				release(d)
			}
		}
	}
	return lines, nslots, st
}

// Interleave runs each function, which must build independent work, and
// merges the instructions they add round-robin, so that an in-order core
// finds independent instructions next to each other.
func (p *Prog) Interleave(fns ...func()) {
	saved := p.insts
	parts := make([][]Inst, len(fns))
	for i, f := range fns {
		p.insts = nil
		f()
		parts[i] = p.insts
	}
	p.insts = saved
	for j := 0; ; j++ {
		done := true
		for _, part := range parts {
			if j < len(part) {
				p.insts = append(p.insts, part[j])
				done = false
			}
		}
		if done {
			return
		}
	}
}
