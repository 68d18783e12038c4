package sector

import (
	"crypto/subtle"
	"fmt"
	"sync"

	"github.com/cryptvol/cryptvol/ciphers"
)

// cbc is CBC restarted at every sector with the IV of that sector, as
// dm-crypt's cbc-plain, cbc-plain64 and cbc-essiv:HASH do.
//
// Decryption has no chain dependency: one DecryptBlocks call covers a whole
// chunk of sectors, then each block is XORed with the ciphertext block
// before it (or the sector's IV).
//
// Encryption is serial within a sector, but sectors are independent, so the
// run is encrypted as interleaved lanes: the j-th block of every sector in a
// chunk is gathered into one buffer and encrypted with a single
// EncryptBlocks call, then the next position. That is one cipher call per
// block position per chunk (32 calls per 64 KiB of 512-byte sectors) instead
// of one per block, and it hands a pipelined cipher (AES-NI, bitsliced
// Serpent) many independent blocks at once.
type cbc struct {
	b          ciphers.Block
	iv         IVGenerator
	bs         int
	sectorSize int
	perChunk   int
	scratch    sync.Pool // *cbcScratch
}

type cbcScratch struct {
	lanes []byte // encrypt: chain value per sector; decrypt: IV per sector
	ct    []byte // decrypt in place: copy of the ciphertext chunk
}

// NewCBC returns CBC with each sector's IV made by iv (IVPlain, IVPlain64,
// IVPlain64BE, IVBenbi, IVNull or an ESSIV generator). sectorSize is a
// multiple of the cipher's block size up to 4096.
func NewCBC(b ciphers.Block, iv IVGenerator, sectorSize int) (Mode, error) {
	if b == nil {
		return nil, fmt.Errorf("sector: CBC needs a cipher")
	}
	bs := b.BlockSize()
	if bs < 8 {
		return nil, fmt.Errorf("sector: CBC needs a block size of at least 8 bytes, not %d", bs)
	}
	if err := checkSectorSize(sectorSize, bs); err != nil {
		return nil, err
	}
	if err := checkIV(iv, bs); err != nil {
		return nil, err
	}
	c := &cbc{b: b, iv: iv, bs: bs, sectorSize: sectorSize, perChunk: sectorsPerChunk(sectorSize)}
	c.scratch.New = func() any {
		return &cbcScratch{lanes: make([]byte, c.perChunk*c.bs)}
	}
	return c, nil
}

// SectorSize implements Mode.
func (c *cbc) SectorSize() int { return c.sectorSize }

// Encrypt implements Mode.
func (c *cbc) Encrypt(dst, src []byte, first uint64) {
	checkRun(dst, src, c.sectorSize)
	if len(src) == 0 {
		return
	}
	s := c.scratch.Get().(*cbcScratch)
	for len(src) > 0 {
		n := min(len(src)/c.sectorSize, c.perChunk)
		size := n * c.sectorSize
		c.encryptLanes(dst[:size], src[:size], s.lanes[:n*c.bs], first)
		dst, src = dst[size:], src[size:]
		first += uint64(n)
	}
	c.scratch.Put(s)
}

// encryptLanes encrypts len(lanes)/bs sectors as interleaved CBC chains.
// lanes[k] holds the chain value of sector k: IV ⊕ P_0 before the first
// call, then C_j ⊕ P_{j+1}. In place works because block j of a sector is
// read before C_j is stored over it.
func (c *cbc) encryptLanes(dst, src, lanes []byte, first uint64) {
	bs, ss := c.bs, c.sectorSize
	c.iv.IVs(lanes, bs, first)
	for k := 0; k*bs < len(lanes); k++ {
		l := lanes[k*bs : k*bs+bs]
		xorBlock(l, l, src[k*ss:k*ss+bs])
	}
	for j := 0; j < ss; j += bs {
		c.b.EncryptBlocks(lanes, lanes)
		last := j+bs == ss
		if bs == 16 {
			scatter16(dst[j:], src[j:], lanes, ss, last)
			continue
		}
		for k := 0; k*bs < len(lanes); k++ {
			l := lanes[k*bs : k*bs+bs]
			o := k*ss + j
			copy(dst[o:o+bs], l)
			if !last {
				xorBlock(l, l, src[o+bs:o+2*bs])
			}
		}
	}
}

// scatter16 stores each 16-byte lane as the current ciphertext block of its
// sector (dst[k*stride:]) and, unless this was the last block, folds the
// next plaintext block (src[k*stride+16:]) into the lane.
func scatter16(dst, src, lanes []byte, stride int, last bool) {
	for k := 0; len(lanes) >= 16; k += stride {
		c0, c1 := ne.Uint64(lanes), ne.Uint64(lanes[8:16])
		d := dst[k : k+16]
		ne.PutUint64(d, c0)
		ne.PutUint64(d[8:], c1)
		if !last {
			p := src[k+16 : k+32]
			ne.PutUint64(lanes, c0^ne.Uint64(p))
			ne.PutUint64(lanes[8:16], c1^ne.Uint64(p[8:]))
		}
		lanes = lanes[16:]
	}
}

// Decrypt implements Mode.
func (c *cbc) Decrypt(dst, src []byte, first uint64) {
	checkRun(dst, src, c.sectorSize)
	if len(src) == 0 {
		return
	}
	s := c.scratch.Get().(*cbcScratch)
	inPlace := sameStart(dst, src)
	if inPlace && s.ct == nil {
		s.ct = make([]byte, c.perChunk*c.sectorSize)
	}
	bs, ss := c.bs, c.sectorSize
	for len(src) > 0 {
		n := min(len(src)/ss, c.perChunk)
		size := n * ss
		d, ct := dst[:size], src[:size]
		if inPlace {
			// Decrypting in place overwrites the ciphertext the XOR needs.
			ct = s.ct[:size]
			copy(ct, src[:size])
		}
		ivs := s.lanes[:n*bs]
		c.iv.IVs(ivs, bs, first)
		c.b.DecryptBlocks(d, ct)
		for k := 0; k < n; k++ {
			o := k * ss
			xorBlock(d[o:o+bs], d[o:o+bs], ivs[k*bs:k*bs+bs])
			subtle.XORBytes(d[o+bs:o+ss], d[o+bs:o+ss], ct[o:o+ss-bs])
		}
		dst, src = dst[size:], src[size:]
		first += uint64(n)
	}
	c.scratch.Put(s)
}
