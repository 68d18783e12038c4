package armneon

import "testing"

// TestKnownEncodings checks instructions of each family against words
// worked out from the ARM Architecture Reference Manuals' encoding tables
// (and confirmed with binutils when the table was made), so the encoders
// are checked even where no cross assembler is installed. For example
// VEOR q15, q9, q14 is 1111 0011 0 D=1 00 Vn=0010 Vd=1110 0001 N=1 Q=1 M=1
// 1 Vm=1100 (d30, d18, d28) = 0xf342e1fc.
func TestKnownEncodings(t *testing.T) {
	arm := ARM{TmpReg: 4}
	for _, c := range []struct {
		t    Target
		in   Inst
		want string
	}{
		{arm, Inst{Kind: Eor, Dst: []V{15}, Src: []V{9, 14}}, "WORD $0xf342e1fc // veor q15, q9, q14"},
		{arm, Inst{Kind: Bic, Dst: []V{1}, Src: []V{8, 3}}, "WORD $0xf21021d6 // vbic q1, q8, q3"},
		{arm, Inst{Kind: Not, Dst: []V{11}, Src: []V{12}}, "WORD $0xf3f065e8 // vmvn q11, q12"},
		{arm, Inst{Kind: Shl, Dst: []V{12}, Src: []V{5}, Imm: 13, Esize: 32}, "WORD $0xf2ed855a // vshl.i32 q12, q5, #13"},
		{arm, Inst{Kind: Sri, Dst: []V{9}, Src: []V{9, 15}, Imm: 19, Esize: 32}, "WORD $0xf3ed247e // vsri.32 q9, q15, #19"},
		{arm, Inst{Kind: Shr, Dst: []V{5}, Src: []V{13}, Imm: 16, Esize: 64}, "WORD $0xf3b0a0fa // vshr.u64 q5, q13, #16"},
		{arm, Inst{Kind: Sli, Dst: []V{8}, Src: []V{8, 1}, Imm: 48, Esize: 64}, "WORD $0xf3f005d2 // vsli.64 q8, q1, #48"},
		{arm, Inst{Kind: Trn, Dst: []V{3, 12}, Src: []V{3, 12}, Esize: 32}, "WORD $0xf3ba60e8 // vtrn.32 q3, q12"},
		{arm, Inst{Kind: SwapHL, Dst: []V{0, 9}, Src: []V{0, 9}}, "WORD $0xf3b21022 // vswp d1, d18"},
		{arm, Inst{Kind: Const, Dst: []V{14}, C: 0x0f0f0f0f0f0f0f0f}, "WORD $0xf2c0ce5f // vmov.i8 q14, #0xf"},
		{arm, Inst{Kind: Const, Dst: []V{8}, C: 0xffff0000ffff0000}, "WORD $0xf3c40e7c // vmov.i64 q8, #0xffff0000ffff0000"},
		{arm, Inst{Kind: Load, Dst: []V{14}, Base: 1}, "WORD $0xf461ca0d // vld1.8 {d28-d29}, [r1]!"},
		{arm, Inst{Kind: Add, Dst: []V{14}, Src: []V{9, 1}, Esize: 32}, "WORD $0xf262c8c2 // vadd.i32 q14, q9, q1"},
		{ARM64{}, Inst{Kind: Eor, Dst: []V{31}, Src: []V{16, 29}}, "WORD $0x6e3d1e1f // eor v31.16b, v16.16b, v29.16b"},
		{ARM64{}, Inst{Kind: Bic, Dst: []V{1}, Src: []V{8, 3}}, "WORD $0x4e631d01 // bic v1.16b, v8.16b, v3.16b"},
		{ARM64{}, Inst{Kind: Shr, Dst: []V{5}, Src: []V{13}, Imm: 16, Esize: 64}, "WORD $0x6f7005a5 // ushr v5.2d, v13.2d, #16"},
		{ARM64{}, Inst{Kind: Sli, Dst: []V{8}, Src: []V{8, 1}, Imm: 12, Esize: 16}, "WORD $0x6f1c5428 // sli v8.8h, v1.8h, #12"},
		{ARM64{}, Inst{Kind: Trn1, Dst: []V{30}, Src: []V{17, 2}, Esize: 64}, "WORD $0x4ec22a3e // trn1 v30.2d, v17.2d, v2.2d"},
		{ARM64{}, Inst{Kind: Rev64, Dst: []V{2}, Src: []V{15}}, "WORD $0x4ea009e2 // rev64 v2.4s, v15.4s"},
		{ARM64{}, Inst{Kind: Const, Dst: []V{8}, C: 0xffff0000ffff0000}, "WORD $0x6f06e588 // movi v8.2d, #0xffff0000ffff0000"},
		{ARM64{}, Inst{Kind: Load, Dst: []V{27}, Base: 19}, "WORD $0x4cdf727b // ld1 {v27.16b}, [x19], #16"},
	} {
		if got := c.t.Encode(c.in)[0]; got != c.want {
			t.Errorf("%v: got %q, want %q", c.in.Kind, got, c.want)
		}
	}
}

// TestAllocateSpills runs a program that needs more values live than the
// target has registers and checks that allocation spills instead of
// failing, and that every register named is within range.
func TestAllocateSpills(t *testing.T) {
	p := &Prog{}
	var vs []V
	for i := 0; i < 24; i++ {
		vs = append(vs, p.Load(1))
	}
	acc := vs[0]
	for _, v := range vs[1:] {
		acc = p.Eor(acc, v)
	}
	for _, v := range vs {
		p.Store(p.Eor(acc, v), 2)
	}
	lines, slots, st := p.Allocate(ARM{TmpReg: 4}, 5)
	if st.Spills == 0 || slots == 0 {
		t.Fatalf("24 live values on 16 registers: %d spills in %d slots", st.Spills, slots)
	}
	if st.Reloads < st.Spills {
		t.Errorf("%d spills but %d reloads", st.Spills, st.Reloads)
	}
	if len(lines) == 0 {
		t.Fatal("no code")
	}
}
