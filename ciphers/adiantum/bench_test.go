package adiantum

import (
	"fmt"
	"testing"
)

// BenchmarkSectors encrypts and decrypts 64 KiB runs of 4096- and
// 512-byte sectors on one core; `cryptvol benchmark` has the Adiantum
// rows beside AES-XTS, measured in the same run.
func BenchmarkSectors(b *testing.B) {
	buf := make([]byte, 64<<10)
	for _, rounds := range []int{12, 20} {
		c, _ := New(make([]byte, KeySize), rounds)
		for _, size := range []int{4096, 512} {
			tweaks := make([]byte, len(buf)/size*TweakSize)
			b.Run(fmt.Sprintf("XChaCha%d/%d/encrypt", rounds, size), func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					c.EncryptSectors(buf, buf, size, tweaks)
				}
			})
			b.Run(fmt.Sprintf("XChaCha%d/%d/decrypt", rounds, size), func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					c.DecryptSectors(buf, buf, size, tweaks)
				}
			})
		}
	}
}

// BenchmarkNH runs each NH path this CPU has over 1 KiB, NH's message.
func BenchmarkNH(b *testing.B) {
	k := newNHKey(make([]byte, nhKeySize))
	msg := make([]byte, nhMessage)
	var out [4]uint64
	for _, impl := range nhImpls() {
		b.Run(nhImplName(impl), func(b *testing.B) {
			b.SetBytes(nhMessage)
			for b.Loop() {
				nhWith(impl, k, msg, &out)
			}
		})
	}
}

// BenchmarkNHPoly1305 hashes an Adiantum 4096-byte sector's bulk.
func BenchmarkNHPoly1305(b *testing.B) {
	k := newNHPolyKey(make([]byte, nhPolyKeySize))
	msg := make([]byte, 4080)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		k.sum(msg)
	}
}

// BenchmarkPoly1305 is the header hash: 48 bytes, three blocks.
func BenchmarkPoly1305(b *testing.B) {
	k := newPolyKey(make([]byte, 16))
	msg := make([]byte, 48)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		var s polyState
		s.blocks(&k, msg)
		s.sum()
	}
}
