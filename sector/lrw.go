package sector

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/cryptvol/cryptvol/ciphers"
)

// lrw is the kernel's lrw(cipher) template as dm-crypt uses it (lrw-benbi,
// lrw-plain64): each sector's IV is read as a 128-bit big-endian block index
// I, incremented per 16-byte block, and block P becomes
// C = E(P ⊕ T) ⊕ T with T = I·K2.
type lrw struct {
	b          ciphers.Block
	key        *lrwKey
	iv         IVGenerator
	sectorSize int
	perChunk   int
	scratch    sync.Pool // *lrwScratch
}

type lrwScratch struct {
	ivs  []byte
	mask []byte
}

// NewLRW returns LRW with data cipher b (16-byte blocks) and the 16-byte
// tweak key K2. dm-crypt's key for lrw(aes) is the AES key followed by K2,
// so b is keyed with key[:len(key)-16] and tweakKey is key[len(key)-16:].
// iv makes each sector's initial block index: IVBenbi for lrw-benbi, which
// is also how cryptsetup opens TrueCrypt 4.x/5.x LRW volumes (lib/tcrypt;
// their key layout differs, the caller splits the key), and IVPlain64 for
// lrw-plain64, whose little-endian bytes LRW then reads big-endian, as the
// kernel does. Like the kernel's template, only 16-byte block ciphers are
// supported (not TrueCrypt's 64-bit-block LRW for Blowfish, CAST5, 3DES).
func NewLRW(b ciphers.Block, tweakKey []byte, iv IVGenerator, sectorSize int) (Mode, error) {
	if b == nil {
		return nil, fmt.Errorf("sector: LRW needs a cipher")
	}
	if b.BlockSize() != 16 {
		return nil, fmt.Errorf("sector: LRW needs a 16-byte block cipher, not %d bytes", b.BlockSize())
	}
	if len(tweakKey) != 16 {
		return nil, fmt.Errorf("sector: LRW tweak key must be 16 bytes, not %d", len(tweakKey))
	}
	if err := checkSectorSize(sectorSize, 16); err != nil {
		return nil, err
	}
	if err := checkIV(iv, 16); err != nil {
		return nil, err
	}
	l := &lrw{b: b, key: newLRWKey(tweakKey), iv: iv, sectorSize: sectorSize,
		perChunk: sectorsPerChunk(sectorSize)}
	l.scratch.New = func() any {
		return &lrwScratch{ivs: make([]byte, 16*l.perChunk), mask: make([]byte, l.perChunk*l.sectorSize)}
	}
	return l, nil
}

// SectorSize implements Mode.
func (l *lrw) SectorSize() int { return l.sectorSize }

// Encrypt implements Mode.
func (l *lrw) Encrypt(dst, src []byte, first uint64) { l.crypt(dst, src, first, false) }

// Decrypt implements Mode.
func (l *lrw) Decrypt(dst, src []byte, first uint64) { l.crypt(dst, src, first, true) }

func (l *lrw) crypt(dst, src []byte, first uint64, decrypt bool) {
	checkRun(dst, src, l.sectorSize)
	if len(src) == 0 {
		return
	}
	s := l.scratch.Get().(*lrwScratch)
	ss := l.sectorSize
	for len(src) > 0 {
		n := min(len(src)/ss, l.perChunk)
		size := n * ss
		ivs := s.ivs[:16*n]
		l.iv.IVs(ivs, 16, first)
		d, m := dst[:size], s.mask[:size]
		l.mask(d, src[:size], m, ivs)
		if decrypt {
			l.b.DecryptBlocks(d, d)
		} else {
			l.b.EncryptBlocks(d, d)
		}
		subtle.XORBytes(d, d, m)
		dst, src = dst[size:], src[size:]
		first += uint64(n)
	}
	l.scratch.Put(s)
}

// mask stores the tweak T of every block in mask and src ⊕ T in dst, for
// the len(ivs)/16 sectors whose initial indices are in ivs.
func (l *lrw) mask(dst, src, mask, ivs []byte) {
	be := binary.BigEndian
	ss := l.sectorSize
	low := &l.key.low
	for i := 0; i+16 <= len(ivs); i += 16 {
		idx := loadBE128(ivs[i:])
		v := idx.lo & 0xff
		idx.lo &^= 0xff
		base := l.key.mul(idx)
		off := i / 16 * ss
		m := mask[off : off+ss]
		d := dst[off:][:len(m)]
		s := src[off:][:len(m)]
		for j := 0; j+16 <= len(m); j += 16 {
			if v == 256 {
				// The low byte wrapped: carry into the rest of the index
				// (wrapping past 2^128 like the kernel's counter).
				v = 0
				idx.lo += 256
				if idx.lo == 0 {
					idx.hi++
				}
				base = l.key.mul(idx)
			}
			t := base.xor(low[v&0xff])
			mb, db, sb := m[j:j+16], d[j:j+16], s[j:j+16]
			be.PutUint64(mb, t.hi)
			be.PutUint64(mb[8:], t.lo)
			be.PutUint64(db, be.Uint64(sb)^t.hi)
			be.PutUint64(db[8:], be.Uint64(sb[8:])^t.lo)
			v++
		}
	}
}
