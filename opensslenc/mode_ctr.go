package opensslenc

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/cryptvol/cryptvol/ciphers"
)

// ctr is counter mode as OpenSSL runs it: the IV is the first counter
// block, incremented as one 128-bit big-endian number. A batch of counter
// blocks is encrypted in one call, then XORed in. The counter blocks live
// in their own buffer, so between batches only the low 64 bits of each
// need rewriting (the high half changes once in 2^64 blocks).
type ctr struct {
	b      ciphers.Block
	hi, lo uint64 // the next counter block
	ctrs   []byte // counter blocks
	ks     []byte // their encryption
	// highOK says every block of ctrs holds hi as its high half.
	highOK bool
}

func newCTR(b ciphers.Block, iv []byte) *ctr {
	m := &ctr{
		b:    b,
		hi:   binary.BigEndian.Uint64(iv[:8]),
		lo:   binary.BigEndian.Uint64(iv[8:]),
		ctrs: make([]byte, batch),
		ks:   make([]byte, batch),
	}
	return m
}

func (m *ctr) crypt(dst, src []byte) {
	for len(src) > 0 {
		n := min(len(src), len(m.ks))
		nb := (n + 15) / 16
		ctrs, ks := m.ctrs[:16*nb], m.ks[:16*nb]
		lo := m.lo
		if lo+uint64(nb) < lo {
			m.slowFill(ctrs)
		} else {
			if !m.highOK {
				for i := 0; i < len(m.ctrs); i += 16 {
					binary.BigEndian.PutUint64(m.ctrs[i:], m.hi)
				}
				m.highOK = true
			}
			for i := 0; i < len(ctrs); i += 16 {
				binary.BigEndian.PutUint64(ctrs[i+8:], lo)
				lo++
			}
			m.lo = lo
		}
		m.b.EncryptBlocks(ks, ctrs)
		subtle.XORBytes(dst[:n], src[:n], ks)
		dst, src = dst[n:], src[n:]
	}
}

// slowFill writes whole counter blocks one by one when the low half
// wraps within the batch.
func (m *ctr) slowFill(ctrs []byte) {
	hi, lo := m.hi, m.lo
	for i := 0; i < len(ctrs); i += 16 {
		binary.BigEndian.PutUint64(ctrs[i:], hi)
		binary.BigEndian.PutUint64(ctrs[i+8:], lo)
		lo++
		if lo == 0 {
			hi++
		}
	}
	m.hi, m.lo = hi, lo
	m.highOK = false // ctrs now holds two high halves
}

func (m *ctr) wipe() { clear(m.ks); clear(m.ctrs); m.hi, m.lo = 0, 0; wipeBlock(m.b) }
