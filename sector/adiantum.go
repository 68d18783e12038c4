package sector

import (
	"fmt"
	"sync"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
)

// adiantumMode encrypts each sector as one Adiantum message (a wide-block
// cipher: no chaining, no per-block tweak), the way dm-crypt runs
// adiantum(xchacha12,aes) and adiantum(xchacha20,aes).
type adiantumMode struct {
	c          *adiantum.Cipher
	iv         IVGenerator
	sectorSize int
	perChunk   int
	tweaks     sync.Pool // *[]byte, 32 bytes per sector of a chunk
}

// NewAdiantum returns the Adiantum sector mode of dm-crypt
// (xchacha12,aes-adiantum-plain64 and xchacha20,aes-adiantum-plain64):
// sector n is one message of sectorSize bytes whose 32-byte tweak is the
// IV iv makes for n, which dm-crypt hands Adiantum as its tweak. With
// plain64 that is n as 8 little-endian bytes and 24 zero bytes. iv must be
// keyless: plain64, plain or plain64be, or one of them through Stride (a
// LUKS2 segment of 4096-byte sectors numbers its IVs in 512-byte units:
// Stride(IVPlain64, 8)). sectorSize is a multiple of 16 up to 4096
// (cryptsetup uses 512 to 4096; 4096, its default on a 4 KiB-aligned
// device, is also the fastest here).
func NewAdiantum(c *adiantum.Cipher, iv IVGenerator, sectorSize int) (Mode, error) {
	if c == nil {
		return nil, fmt.Errorf("sector: Adiantum needs a cipher")
	}
	if err := checkSectorSize(sectorSize, 16); err != nil {
		return nil, err
	}
	base := iv
	if s, ok := iv.(stridedIV); ok {
		base = s.g
	}
	switch base {
	case IVPlain64, IVPlain, IVPlain64BE:
	default:
		return nil, fmt.Errorf("sector: Adiantum takes the plain64, plain or plain64be IV, not %v", iv)
	}
	m := &adiantumMode{c: c, iv: iv, sectorSize: sectorSize, perChunk: sectorsPerChunk(sectorSize)}
	m.tweaks.New = func() any {
		b := make([]byte, adiantum.TweakSize*m.perChunk)
		return &b
	}
	return m, nil
}

// SectorSize implements Mode.
func (m *adiantumMode) SectorSize() int { return m.sectorSize }

// Encrypt implements Mode.
func (m *adiantumMode) Encrypt(dst, src []byte, first uint64) { m.crypt(dst, src, first, false) }

// Decrypt implements Mode.
func (m *adiantumMode) Decrypt(dst, src []byte, first uint64) { m.crypt(dst, src, first, true) }

func (m *adiantumMode) crypt(dst, src []byte, first uint64, decrypt bool) {
	checkRun(dst, src, m.sectorSize)
	if len(src) == 0 {
		return
	}
	bp := m.tweaks.Get().(*[]byte)
	ss := m.sectorSize
	for len(src) > 0 {
		n := min(len(src)/ss, m.perChunk)
		size := n * ss
		tw := (*bp)[:adiantum.TweakSize*n]
		m.iv.IVs(tw, adiantum.TweakSize, first)
		if decrypt {
			m.c.DecryptSectors(dst[:size], src[:size], ss, tw)
		} else {
			m.c.EncryptSectors(dst[:size], src[:size], ss, tw)
		}
		dst, src = dst[size:], src[size:]
		first += uint64(n)
	}
	m.tweaks.Put(bp)
}
