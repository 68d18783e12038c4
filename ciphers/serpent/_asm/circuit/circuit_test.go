package circuit

import "testing"

// TestChosenCircuits checks every generated circuit against the S-box table.
func TestChosenCircuits(t *testing.T) {
	for i := 0; i < 16; i++ {
		s := Sboxes[i%8]
		if i >= 8 {
			s = Inverse(s)
		}
		if err := Bool[i].Check(s); err != nil {
			t.Errorf("Bool[%d]: %v", i, err)
		}
		if err := Ternary[i].Check(s); err != nil {
			t.Errorf("Ternary[%d]: %v", i, err)
		}
	}
}

func TestPermuteLut(t *testing.T) {
	// Lut3 with operands swapped must agree after lutOf recomputes the
	// immediate: a sanity check of the truth-table convention.
	a, b, c := InputTT(0), InputTT(1), InputTT(2)
	for imm := 0; imm < 256; imm++ {
		f := Lut3(uint8(imm), a, b, c)
		imm2, ok := lutOf(f, b, a, c)
		if !ok || Lut3(imm2, b, a, c) != f {
			t.Fatalf("imm %#x: permuted operands disagree", imm)
		}
	}
}
