package sector

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
)

// IVGenerator derives the per-sector IV (CBC) or tweak input (XTS, LRW) from
// the sector number, the way dm-crypt's IV generators do.
//
// IVs fills dst, which holds len(dst)/ivSize IVs of ivSize bytes each, with
// the IVs of sectors first, first+1, ... . ivSize is the block size of the
// mode's cipher (8 or 16). Generating a whole run of IVs per call lets ESSIV
// encrypt them all with one EncryptBlocks call. IVs must not allocate and
// must be safe for concurrent use.
type IVGenerator interface {
	IVs(dst []byte, ivSize int, first uint64)
}

// StandardIV is one of dm-crypt's IV generators that need no key. Their
// definitions follow drivers/md/dm-crypt.c; the sector number they are given
// is the one dm-crypt calls iv_sector (512-byte units, or units of the
// sector size when the mapping uses iv_large_sectors — the caller decides).
type StandardIV uint8

const (
	// IVNull is an all-zero IV ("null"); only for obsolete loop_fish2 volumes.
	IVNull StandardIV = iota
	// IVPlain is the low 32 bits of the sector number, little-endian,
	// zero-padded ("plain"); it wraps after 2 TiB of 512-byte sectors.
	IVPlain
	// IVPlain64 is the 64-bit sector number, little-endian, zero-padded
	// ("plain64"). It is IEEE 1619's XTS data unit number.
	IVPlain64
	// IVPlain64BE is the 64-bit sector number, big-endian, in the last 8
	// bytes of the IV, zero-padded in front ("plain64be").
	IVPlain64BE
	// IVBenbi is the big-endian count of cipher-block-sized ("narrow")
	// blocks, starting at 1 ("benbi"): (sector << (9 - log2(ivSize))) + 1 in
	// the last 8 bytes. dm-crypt uses it for LRW; the shift counts blocks in
	// a 512-byte sector whatever the sector size, as the kernel does.
	IVBenbi
)

var ivNames = [...]string{"null", "plain", "plain64", "plain64be", "benbi"}

// String returns dm-crypt's spelling of the generator.
func (g StandardIV) String() string {
	if int(g) < len(ivNames) {
		return ivNames[g]
	}
	return fmt.Sprintf("StandardIV(%d)", uint8(g))
}

// LookupIV returns the keyless generator that dm-crypt spells name
// ("plain64", "benbi", ...). "essiv:HASH" needs the volume key and is built
// with ESSIV; dm-crypt's lmk, tcw, random and eboiv generators are not
// supported.
func LookupIV(name string) (StandardIV, error) {
	n := strings.ToLower(name)
	for i, s := range ivNames {
		if s == n {
			return StandardIV(i), nil
		}
	}
	if strings.HasPrefix(n, "essiv:") {
		return 0, fmt.Errorf("sector: IV %q needs the volume key: use ESSIV", name)
	}
	return 0, fmt.Errorf("sector: unsupported IV generator %q", name)
}

// IVs implements IVGenerator.
func (g StandardIV) IVs(dst []byte, ivSize int, first uint64) { g.ivsStride(dst, ivSize, first, 1) }

// ivsStride fills dst with the IVs of sector numbers first*stride,
// (first+1)*stride, ... (see Stride).
func (g StandardIV) ivsStride(dst []byte, ivSize int, first, stride uint64) {
	if ivSize < 8 || len(dst)%ivSize != 0 {
		panic("sector: IV size must be at least 8 and divide the IV buffer")
	}
	clear(dst)
	n := first * stride
	switch g {
	case IVNull:
	case IVPlain:
		for off := 0; off < len(dst); off += ivSize {
			binary.LittleEndian.PutUint32(dst[off:], uint32(n))
			n += stride
		}
	case IVPlain64:
		for off := 0; off < len(dst); off += ivSize {
			binary.LittleEndian.PutUint64(dst[off:], n)
			n += stride
		}
	case IVPlain64BE:
		for off := ivSize - 8; off < len(dst); off += ivSize {
			binary.BigEndian.PutUint64(dst[off:], n)
			n += stride
		}
	case IVBenbi:
		shift := 9 - (bits.Len(uint(ivSize)) - 1)
		for off := ivSize - 8; off < len(dst); off += ivSize {
			binary.BigEndian.PutUint64(dst[off:], n<<shift+1)
			n += stride
		}
	default:
		panic("sector: unknown StandardIV")
	}
}

// stridedIV is what Stride returns.
type stridedIV struct {
	g      IVGenerator
	stride uint64
}

// Stride returns the generator whose IV for sector n is g's IV for sector
// n*stride. dm-crypt counts its IV sectors in 512-byte units whatever the
// encryption sector size (unless the table says iv_large_sectors, which
// cryptsetup sets only for plain and BitLocker mappings asked to), so a
// LUKS2 segment of 4096-byte sectors takes every eighth IV: stride 8.
// Stride 1 returns g itself.
func Stride(g IVGenerator, stride uint64) IVGenerator {
	if stride <= 1 {
		return g
	}
	return stridedIV{g: g, stride: stride}
}

// IVs implements IVGenerator, in one pass for the generators of this
// package.
func (s stridedIV) IVs(dst []byte, ivSize int, first uint64) {
	switch g := s.g.(type) {
	case StandardIV:
		g.ivsStride(dst, ivSize, first, s.stride)
	case *essiv:
		g.ivsStride(dst, ivSize, first, s.stride)
	default:
		for off := 0; off < len(dst); off += ivSize {
			s.g.IVs(dst[off:off+ivSize], ivSize, (first+uint64(off/ivSize))*s.stride)
		}
	}
}

// checkIV reports whether iv can produce IVs of ivSize bytes.
func checkIV(iv IVGenerator, ivSize int) error {
	if s, ok := iv.(stridedIV); ok {
		iv = s.g
	}
	switch g := iv.(type) {
	case nil:
		return fmt.Errorf("sector: nil IV generator")
	case StandardIV:
		if g > IVBenbi {
			return fmt.Errorf("sector: unknown IV generator %d", uint8(g))
		}
		if g == IVBenbi && ivSize&(ivSize-1) != 0 {
			return fmt.Errorf("sector: benbi needs a power-of-two block size, not %d", ivSize)
		}
	case *essiv:
		if g.c.BlockSize() != ivSize {
			return fmt.Errorf("sector: ESSIV cipher has %d-byte blocks, the mode needs %d-byte IVs",
				g.c.BlockSize(), ivSize)
		}
	}
	return nil
}
