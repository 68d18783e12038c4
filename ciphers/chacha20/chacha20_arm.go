//go:build arm && !purego

package chacha20

import "golang.org/x/sys/cpu"

// xorKeyStreamNEON XORs lumps*1024 bytes of src with the key stream of
// state's next lumps*16 blocks into dst and moves state[12] past them
// (chacha20_arm.s, ARMv7 NEON); lanes holds 0..15, the blocks' counter
// offsets within a lump.
//
//go:noescape
func xorKeyStreamNEON(state *[16]uint32, dst, src *byte, lanes *[16]uint32, lumps int)

var laneOffsets = [16]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// haveKernel: NEON, from the HWCAP bit (GOARM=6 and 7 binaries also run on
// the Raspberry Pi 1's ARM1176, which has none; GODEBUG=cpu.neon=off masks
// it).
var haveKernel = cpu.ARM.HasNEON

// xorKeyStream16AVX512 is the package's kernel entry point, named after
// the amd64 kernel it was written for; on 32-bit ARM it runs the NEON one.
func xorKeyStream16AVX512(state *[16]uint32, dst, src *byte, lumps int) {
	xorKeyStreamNEON(state, dst, src, &laneOffsets, lumps)
}

// Implementation names the code path New's ciphers take here.
func Implementation() string {
	if haveKernel {
		return "NEON, 16 blocks at once"
	}
	return "golang.org/x/crypto/chacha20"
}
