// Command asmgen writes the PBKDF2 lane kernels of package lanes: the
// SHA-2 constants (zconst.go), the amd64 kernels (AVX-512, AVX2, SHA-NI,
// and SHA-512's one-chain scalar ones; chain_amd64.s) and the arm64 ones
// (NEON; chain_arm64.s). Every kernel runs n PBKDF2-HMAC iterations
// (u = HMAC(u); T ^= u) of one or several independent chains, with the
// one-block messages' padding folded into constants. Run it with
// "go generate" in kdf/internal/lanes.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
)

func main() {
	s512, s256 := sha2Specs()
	writeConsts()

	amd := &gen{}
	amd.header("amd64")
	var body gen
	b64 := newPool("bcst512", 8, 1)
	b32 := newPool("bcst256", 4, 1)
	(&avx512{g: &body, s: s512, reg: "Z", sfx: "Q", pool: b64}).kernel("chain512AVX512x8")
	(&avx512{g: &body, s: s512, reg: "Y", sfx: "Q", pool: b64}).kernel("chain512AVX512x4")
	(&avx512{g: &body, s: s256, reg: "Z", sfx: "D", pool: b32}).kernel("chain256AVX512x16")
	(&avx512{g: &body, s: s256, reg: "Y", sfx: "D", pool: b32}).kernel("chain256AVX512x8")
	r64 := newPool("rep512", 8, 4)
	r32 := newPool("rep256", 4, 8)
	(&avx2{g: &body, s: s512, pool: r64}).kernel("chain512AVX2x4")
	(&avx2{g: &body, s: s256, pool: r32}).kernel("chain256AVX2x8")
	(&avx2{g: &body, s: s512, pool: r64, xmm: true}).kernel("chain512AVXx2")
	(&avx2{g: &body, s: s256, pool: r32, xmm: true}).kernel("chain256AVXx4")
	ni := newPool("shani", 4, 1)
	(&shani{g: &body, s: s256, k: 1, pool: ni}).kernel("chain256SHANIx1")
	(&shani{g: &body, s: s256, k: 2, pool: ni}).kernel("chain256SHANIx2")
	ripemdKernel(&ripemdAVX512{g: &body, reg_: "Z", pool: b32}, "chainRIPEMD160AVX512x16")
	ripemdKernel(&ripemdAVX512{g: &body, reg_: "Y", pool: b32}, "chainRIPEMD160AVX512x8")
	ripemdKernel(&ripemdAVX2{g: &body, pool: r32}, "chainRIPEMD160AVX2x8")
	ripemdKernel(&ripemdAVX2{g: &body, pool: r32, xmm: true}, "chainRIPEMD160AVXx4")
	(&blake2sAVX512{g: &body, reg_: "Z", pool: b32}).kernel("chainBLAKE2sAVX512x16")
	(&blake2sAVX512{g: &body, reg_: "Y", pool: b32}).kernel("chainBLAKE2sAVX512x8")
	sc := &scalar512{g: &body, s: s512, variant: "sse2"}
	sc.kernel("chain512SSE2x1")
	(&scalar512{g: &body, s: s512, variant: "bmi2"}).kernel("chain512BMI2x1")
	b64.emit(amd)
	sc.emitTable(amd)
	ni.emit(amd)
	r64.emit(amd)
	r32.emit(amd)
	emitRot8(amd)
	b32.emit(amd)
	amd.b.Write(body.b.Bytes())
	must(os.WriteFile("chain_amd64.s", amd.b.Bytes(), 0o644))

	arm := &gen{}
	arm.header("arm64")
	var armBody gen
	n64 := newPool("neon512", 8, 2)
	n32 := newPool("neon256", 4, 4)
	(&neon{g: &armBody, s: s512, pool: n64}).kernel("chain512NEONx2")
	(&neon{g: &armBody, s: s256, pool: n32}).kernel("chain256NEONx4")
	ripemdKernel(&ripemdNEON{g: &armBody, pool: n32}, "chainRIPEMD160NEONx4")
	(&blake2sNEON{g: &armBody, pool: n32}).kernel("chainBLAKE2sNEONx4")
	n64.emit(arm)
	n32.emit(arm)
	arm.b.Write(armBody.b.Bytes())
	must(os.WriteFile("chain_arm64.s", arm.b.Bytes(), 0o644))
}

// writeConsts writes zconst.go, the tables of the generic Go kernels.
func writeConsts() {
	k, iv := sha2Constants()
	var b bytes.Buffer
	b.WriteString(generatedMarker + "\n\npackage lanes\n\n")
	b.WriteString("// SHA-512's round constants and initial hash value (FIPS 180-4 4.2.3, 5.3.5).\n")
	b.WriteString("var k512 = [80]uint64{\n")
	for i, v := range k {
		fmt.Fprintf(&b, "0x%016x,", v)
		if i%4 == 3 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n\nvar iv512 = [8]uint64{\n")
	for _, v := range iv {
		fmt.Fprintf(&b, "0x%016x,", v)
	}
	b.WriteString("\n}\n\n// SHA-256's (4.2.2, 5.3.3): the upper halves of the first 64 of the same.\n")
	b.WriteString("var k256 = [64]uint32{\n")
	for i, v := range k[:64] {
		fmt.Fprintf(&b, "0x%08x,", v>>32)
		if i%8 == 7 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n\nvar iv256 = [8]uint32{\n")
	for _, v := range iv {
		fmt.Fprintf(&b, "0x%08x,", v>>32)
	}
	b.WriteString("\n}\n")
	src, err := format.Source(b.Bytes())
	must(err)
	must(os.WriteFile("zconst.go", src, 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
