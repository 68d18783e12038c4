// Package circuit describes Serpent's S-boxes as straight-line boolean
// circuits on bitsliced words, and searches for small ones.
//
// A truth table is a uint16: bit r is the function's value when input bit i
// equals (r>>i)&1, where input 0 is the least significant bit of the S-box
// nibble (Serpent's word x0).
package circuit

import "fmt"

// Sboxes are the eight Serpent S-boxes (Anderson, Biham, Knudsen, "Serpent:
// A Proposal for the Advanced Encryption Standard", section 2 / appendix).
var Sboxes = [8][16]uint8{
	{3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12},
	{15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4},
	{8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2},
	{0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14},
	{1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13},
	{15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1},
	{7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0},
	{1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6},
}

// Inverse returns the inverse permutation of s.
func Inverse(s [16]uint8) [16]uint8 {
	var inv [16]uint8
	for i, v := range s {
		inv[v] = uint8(i)
	}
	return inv
}

// Targets returns the truth tables of the four output bits of s.
func Targets(s [16]uint8) [4]uint16 {
	var t [4]uint16
	for r := 0; r < 16; r++ {
		for j := 0; j < 4; j++ {
			if s[r]>>j&1 == 1 {
				t[j] |= 1 << r
			}
		}
	}
	return t
}

// InputTT is the truth table of input bit i.
func InputTT(i int) uint16 {
	var t uint16
	for r := 0; r < 16; r++ {
		if r>>i&1 == 1 {
			t |= 1 << r
		}
	}
	return t
}

// Op is a gate type.
type Op uint8

// Gate types. AndNot is x86's ANDN/VPANDN: ^A & B. Lut is an AVX-512
// VPTERNLOGD with immediate Imm over A, B, C.
const (
	In Op = iota
	And
	Or
	Xor
	AndNot
	Not
	Lut
)

func (o Op) String() string {
	return [...]string{"in", "and", "or", "xor", "andnot", "not", "lut"}[o]
}

// Gate is one node of a circuit; A, B, C index earlier nodes.
type Gate struct {
	Op      Op
	A, B, C int
	Imm     uint8
}

// Circuit is a straight-line program: nodes 0..3 are the inputs x0..x3,
// Out names the nodes holding y0..y3.
type Circuit struct {
	Gates []Gate
	Out   [4]int
}

// Lut3 evaluates VPTERNLOGD's truth table: bit (a<<2|b<<1|c) of imm.
func Lut3(imm uint8, a, b, c uint16) uint16 {
	var r uint16
	for i := 0; i < 8; i++ {
		if imm>>i&1 == 0 {
			continue
		}
		x := ^uint16(0)
		if i&4 != 0 {
			x &= a
		} else {
			x &^= a
		}
		if i&2 != 0 {
			x &= b
		} else {
			x &^= b
		}
		if i&1 != 0 {
			x &= c
		} else {
			x &^= c
		}
		r |= x
	}
	return r
}

// Eval computes every node's truth table.
func (c *Circuit) Eval() []uint16 {
	tt := make([]uint16, len(c.Gates))
	for i, g := range c.Gates {
		switch g.Op {
		case In:
			tt[i] = InputTT(i)
		case And:
			tt[i] = tt[g.A] & tt[g.B]
		case Or:
			tt[i] = tt[g.A] | tt[g.B]
		case Xor:
			tt[i] = tt[g.A] ^ tt[g.B]
		case AndNot:
			tt[i] = ^tt[g.A] & tt[g.B]
		case Not:
			tt[i] = ^tt[g.A]
		case Lut:
			tt[i] = Lut3(g.Imm, tt[g.A], tt[g.B], tt[g.C])
		}
	}
	return tt
}

// Check reports whether c computes the S-box s.
func (c *Circuit) Check(s [16]uint8) error {
	tt := c.Eval()
	want := Targets(s)
	for j := 0; j < 4; j++ {
		if tt[c.Out[j]] != want[j] {
			return fmt.Errorf("output %d: got %04x want %04x", j, tt[c.Out[j]], want[j])
		}
	}
	return nil
}

// Cost is the number of gates, inputs excluded.
func (c *Circuit) Cost() int { return len(c.Gates) - 4 }
