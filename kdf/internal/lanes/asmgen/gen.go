package main

import (
	"bytes"
	"fmt"
	"strings"
)

// gen collects assembly text.
type gen struct{ b bytes.Buffer }

// l writes one instruction (tab-indented); labels and blank lines as-is.
func (g *gen) l(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if s == "" || strings.HasSuffix(s, ":") {
		g.b.WriteString(s + "\n")
		return
	}
	g.b.WriteString("\t" + s + "\n")
}

// comment writes a comment line.
func (g *gen) comment(format string, args ...any) {
	g.b.WriteString("\t// " + fmt.Sprintf(format, args...) + "\n")
}

// pool is a read-only table of constants that kernels address by offset:
// each entry is one word replicated rep times (rep 1 for AVX-512's
// embedded broadcast, the vector width for AVX2 and NEON), entries equal
// in value share a slot.
type pool struct {
	name  string
	bytes int // of one word
	rep   int
	vals  []uint64
	index map[uint64]int
}

func newPool(name string, wordBytes, rep int) *pool {
	return &pool{name: name, bytes: wordBytes, rep: rep, index: map[uint64]int{}}
}

// ref returns the offset of the entry holding v.
func (p *pool) ref(v uint64) int {
	i, ok := p.index[v]
	if !ok {
		i = len(p.vals)
		p.vals = append(p.vals, v)
		p.index[v] = i
	}
	return i * p.bytes * p.rep
}

// sym returns the assembler operand of the entry holding v.
func (p *pool) sym(v uint64) string {
	return fmt.Sprintf("%s<>+%d(SB)", p.name, p.ref(v))
}

// emit writes the DATA/GLOBL lines.
func (p *pool) emit(g *gen) {
	if len(p.vals) == 0 {
		return
	}
	off := 0
	for _, v := range p.vals {
		for r := 0; r < p.rep; r++ {
			if p.bytes == 8 {
				g.l("DATA %s<>+%d(SB)/8, $0x%016x", p.name, off, v)
			} else {
				g.l("DATA %s<>+%d(SB)/4, $0x%08x", p.name, off, v)
			}
			off += p.bytes
		}
	}
	g.l("GLOBL %s<>(SB), RODATA|NOPTR, $%d", p.name, off)
	g.l("")
}

// The layout of lanes.State that kernels address: four sections (inner
// and outer keyed states, U, the accumulated T) of eight 64-byte rows;
// row j of a section holds word j of every lane.
const (
	rowBytes   = 64
	secBytes   = 8 * rowBytes
	secInner   = 0
	secOuter   = 1
	secU       = 2
	secAcc     = 3
	stateBytes = 4 * secBytes
)

func rowOff(sec, row int) int { return sec*secBytes + row*rowBytes }
