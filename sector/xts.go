package sector

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cryptvol/cryptvol/ciphers"
)

// xts is IEEE 1619 XTS over whole sectors (no ciphertext stealing: sectors
// are whole blocks).
type xts struct {
	k1, k2 ciphers.Block
	fused  ciphers.XTSBlock // k1's fused kernel, or nil
	// p64 is k1's kernel that also derives plain64 tweaks, when iv is
	// IVPlain64 (it may still decline a k2 of another kind).
	p64        ciphers.XTSPlain64Block
	iv         IVGenerator
	sectorSize int
	perChunk   int       // sectors per scratch chunk
	scratch    sync.Pool // *xtsScratch
	// cache keeps one scratch out of the pool: most runs come from one
	// goroutine at a time, and an atomic swap costs less than a pool
	// round trip, which matters next to a 4 KiB AES-NI kernel (~0.5 µs).
	cache   atomic.Pointer[xtsScratch]
	plain64 bool // iv is IVPlain64: the initial tweaks are written inline
	shift   int  // log2(sectorSize), or -1 if it is not a power of two
}

type xtsScratch struct {
	tweaks []byte // one encrypted initial tweak per sector of a chunk
	mask   []byte // expanded tweaks of a chunk; nil on the fused path
}

// NewXTS returns XTS (IEEE 1619-2007) with data key k1 and tweak key k2,
// both 16-byte block ciphers. The tweak of sector n is E_k2(n) with n as a
// 16-byte little-endian number (dm-crypt's xts-plain64, TrueCrypt and
// VeraCrypt XTS). sectorSize is the data unit: a multiple of 16 up to 4096
// (512 or 4096 on disks; IEEE 1619's own vectors use 32 and 512).
//
// If k1 implements ciphers.XTSBlock, each run is handed to its fused kernel
// with all initial tweaks precomputed; otherwise the tweak sequences are
// expanded into a buffer and k1 encrypts many sectors per call.
func NewXTS(k1, k2 ciphers.Block, sectorSize int) (Mode, error) {
	return NewXTSWithIV(k1, k2, IVPlain64, sectorSize)
}

// NewXTSWithIV is NewXTS with the tweak input of each sector made by iv
// instead of plain64: xts-plain uses IVPlain, and xts-essiv:sha256 uses an
// ESSIV generator, whose output XTS then encrypts again with k2 (the kernel
// wraps essiv around xts(aes)).
func NewXTSWithIV(k1, k2 ciphers.Block, iv IVGenerator, sectorSize int) (Mode, error) {
	if k1 == nil || k2 == nil {
		return nil, fmt.Errorf("sector: XTS needs two ciphers")
	}
	if k1.BlockSize() != 16 || k2.BlockSize() != 16 {
		return nil, fmt.Errorf("sector: XTS needs 16-byte block ciphers, not %d and %d bytes",
			k1.BlockSize(), k2.BlockSize())
	}
	if err := checkSectorSize(sectorSize, 16); err != nil {
		return nil, err
	}
	if err := checkIV(iv, 16); err != nil {
		return nil, err
	}
	x := &xts{k1: k1, k2: k2, iv: iv, sectorSize: sectorSize, perChunk: sectorsPerChunk(sectorSize), shift: -1}
	x.plain64 = iv == IVPlain64
	if sectorSize&(sectorSize-1) == 0 {
		x.shift = bits.TrailingZeros(uint(sectorSize))
	}
	x.fused, _ = k1.(ciphers.XTSBlock)
	if iv == IVPlain64 {
		x.p64, _ = k1.(ciphers.XTSPlain64Block)
	}
	x.scratch.New = func() any {
		s := &xtsScratch{tweaks: make([]byte, 16*x.perChunk)}
		if x.fused == nil {
			s.mask = make([]byte, x.perChunk*x.sectorSize)
		}
		return s
	}
	return x, nil
}

// SectorSize implements Mode.
func (x *xts) SectorSize() int { return x.sectorSize }

// Encrypt implements Mode.
func (x *xts) Encrypt(dst, src []byte, first uint64) {
	if !x.plain64Run(dst, src, first, false) {
		x.crypt(dst, src, first, false)
	}
}

// Decrypt implements Mode.
func (x *xts) Decrypt(dst, src []byte, first uint64) {
	if !x.plain64Run(dst, src, first, true) {
		x.crypt(dst, src, first, true)
	}
}

// plain64Run hands a valid run straight to k1's kernel that derives the
// plain64 tweaks itself, and reports whether it took it (not if there is
// no such kernel, the run is empty or invalid, or k1 declines k2). It is
// the whole of the sector layer's work on the usual path, one call level
// above the kernel: next to an AES-NI kernel of half a microsecond per
// 4 KiB, every call level between runs costs about a percent.
func (x *xts) plain64Run(dst, src []byte, first uint64, decrypt bool) bool {
	if x.p64 == nil || x.shift < 0 || len(src)&(x.sectorSize-1) != 0 || len(dst) < len(src) || len(src) == 0 {
		return false
	}
	if decrypt {
		return x.p64.DecryptXTSPlain64(dst, src, x.k2, first, x.sectorSize)
	}
	return x.p64.EncryptXTSPlain64(dst, src, x.k2, first, x.sectorSize)
}

func (x *xts) crypt(dst, src []byte, first uint64, decrypt bool) {
	if x.shift < 0 || len(src)&(x.sectorSize-1) != 0 || len(dst) < len(src) {
		checkRun(dst, src, x.sectorSize)
	}
	if len(src) == 0 {
		return
	}
	s := x.getScratch()
	ss := x.sectorSize
	for len(src) > 0 {
		n := min(x.sectors(len(src)), x.perChunk)
		size := n * ss
		tw := s.tweaks[:16*n]
		// All initial tweaks of the chunk with one k2 call.
		x.initialTweaks(tw, first)
		x.k2.EncryptBlocks(tw, tw)
		d, sc := dst[:size], src[:size]
		switch {
		case x.fused != nil && decrypt:
			x.fused.DecryptXTS(d, sc, tw, ss)
		case x.fused != nil:
			x.fused.EncryptXTS(d, sc, tw, ss)
		default:
			m := s.mask[:size]
			xtsMask(d, sc, m, tw, ss)
			if decrypt {
				x.k1.DecryptBlocks(d, d)
			} else {
				x.k1.EncryptBlocks(d, d)
			}
			subtle.XORBytes(d, d, m)
		}
		dst, src = dst[size:], src[size:]
		first += uint64(n)
	}
	x.putScratch(s)
}

// sectors returns how many sectors n bytes hold.
func (x *xts) sectors(n int) int {
	if x.shift >= 0 {
		return n >> x.shift
	}
	return n / x.sectorSize
}

// initialTweaks writes the tweak inputs of len(tw)/16 sectors from first
// (to be encrypted with k2): plain64 inline, other generators through iv.
func (x *xts) initialTweaks(tw []byte, first uint64) {
	if !x.plain64 {
		x.iv.IVs(tw, 16, first)
		return
	}
	for i := 0; i+16 <= len(tw); i += 16 {
		binary.LittleEndian.PutUint64(tw[i:], first)
		binary.LittleEndian.PutUint64(tw[i+8:], 0)
		first++
	}
}

func (x *xts) getScratch() *xtsScratch {
	if s := x.cache.Swap(nil); s != nil {
		return s
	}
	return x.scratch.Get().(*xtsScratch)
}

func (x *xts) putScratch(s *xtsScratch) {
	if !x.cache.CompareAndSwap(nil, s) {
		x.scratch.Put(s)
	}
}
