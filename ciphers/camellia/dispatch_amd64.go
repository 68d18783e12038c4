//go:build amd64 && !purego

package camellia

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_gfni.go

// gfniKeyWords is the size of the kernel's key layout: kw1..kw4, k1..k24 and
// ke1..ke6, eight bytes each, each byte repeated into a uint32 so that the
// kernel can XOR it into 64 blocks with a 32-bit broadcast.
const gfniKeyWords = 34 * 8

type archSchedule struct {
	wide [gfniKeyWords]uint32
}

var hasGFNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512GFNI

func accelerated() bool { return hasGFNI }

// cryptGFNI runs Camellia over len(src)/1024 groups of 64 blocks.
//
//go:noescape
func cryptGFNI(keys *[gfniKeyWords]uint32, rounds int, dst, src []byte)

// cryptXTSGFNI is cryptGFNI with dst = crypt(src ^ mask) ^ mask.
//
//go:noescape
func cryptXTSGFNI(keys *[gfniKeyWords]uint32, rounds int, dst, src, mask []byte)

func (s *schedule) prepareArch() {
	if !hasGFNI {
		return
	}
	put := func(idx int, v uint64) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], v)
		for j, x := range b {
			s.arch.wide[idx*8+j] = uint32(x) * 0x01010101
		}
	}
	for i, v := range s.kw {
		put(i, v)
	}
	for i, v := range s.k {
		put(4+i, v)
	}
	for i, v := range s.ke {
		put(28+i, v)
	}
}

func cryptBlocks(s *schedule, dst, src []byte) {
	if !hasGFNI || forceGeneric {
		cryptBlocksGeneric(s, dst, src)
		return
	}
	n := len(src) &^ 1023
	if n > 0 {
		cryptGFNI(&s.arch.wide, s.rounds, dst[:n], src[:n])
	}
	switch rest := len(src) - n; {
	case rest >= acceleratedMinTail:
		var buf [1024]byte
		copy(buf[:], src[n:])
		cryptGFNI(&s.arch.wide, s.rounds, buf[:], buf[:])
		copy(dst[n:], buf[:rest])
		clear(buf[:rest])
	case rest > 0:
		cryptBlocksGeneric(s, dst[n:len(src)], src[n:])
	}
}

// cryptMasked sets dst = crypt(src ^ mask) ^ mask for at most 64 blocks.
func cryptMasked(s *schedule, dst, src, mask []byte) {
	switch n := len(src); {
	case !hasGFNI || forceGeneric || n < acceleratedMinTail:
		cryptMaskedGeneric(s, dst, src, mask)
	case n == xtsGroup:
		cryptXTSGFNI(&s.arch.wide, s.rounds, dst, src, mask)
	default:
		var buf, m [xtsGroup]byte
		copy(buf[:], src)
		copy(m[:], mask)
		cryptXTSGFNI(&s.arch.wide, s.rounds, buf[:], buf[:], m[:])
		copy(dst, buf[:n])
		clear(buf[:n])
		clear(m[:n])
	}
}
