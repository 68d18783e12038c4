package bitlk

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/aes"
	"github.com/cryptvol/cryptvol/sector"
)

// BitLocker's three sector modes, keyed with the FVEK, as dm-crypt runs
// them (cryptsetup's aes-xts-plain64, aes-cbc-eboiv, aes-cbc-elephant):
//
//   - AES-XTS with the sector number as the tweak (Windows 10 and later);
//   - AES-CBC whose IV is the byte offset of the sector encrypted with the
//     data key ("eboiv");
//   - the same AES-CBC after Niels Ferguson's Elephant diffuser (Windows
//     Vista and 7): the plaintext is XORed with a 32-byte sector key, the
//     key encrypted with a second AES key, then stirred by diffusers A and
//     B, so a changed bit changes the whole sector.
//
// Sector numbers count the volume's own sectors (512 or 4096 bytes), from
// the start of the volume: the relocated first sectors keep the numbers of
// the place they are stored at.

// newMode keys the sector mode of method with the FVEK key data.
func newMode(method Method, key []byte, sectorSize int) (sector.Mode, []byte, error) {
	need := map[Method]int{
		AESXTS128: 32, AESXTS256: 64, AESCBC128: 16, AESCBC256: 32,
		AESCBC128Elephant: 64, AESCBC256Elephant: 64,
	}[method]
	if need == 0 {
		return nil, nil, unsupported("encryption method %s", method)
	}
	if len(key) < need {
		return nil, nil, damaged("the FVEK has %d bytes, %s needs %d", len(key), method, need)
	}
	switch method {
	case AESXTS128, AESXTS256:
		k1, err := aes.New(key[:need/2])
		if err != nil {
			return nil, nil, err
		}
		k2, err := aes.New(key[need/2 : need])
		if err != nil {
			return nil, nil, err
		}
		m, err := sector.NewXTS(k1, k2, sectorSize)
		return m, append([]byte(nil), key[:need]...), err
	case AESCBC128, AESCBC256:
		m, err := newEBOIVCBC(key[:need], sectorSize)
		return m, append([]byte(nil), key[:need]...), err
	}
	// Elephant: the key data holds the CBC key and the sector key in two
	// 32-byte halves, of which AES-128 uses the first 16 bytes each.
	n := 32
	if method == AESCBC128Elephant {
		n = 16
	}
	m, err := newElephant(key[:n], key[32:32+n], sectorSize)
	if err != nil {
		return nil, nil, err
	}
	// The volume key as cryptsetup shows it: CBC key, then sector key.
	vk := append(append([]byte(nil), key[:n]...), key[32:32+n]...)
	return m, vk, nil
}

// eboiv is dm-crypt's "encrypted byte-offset IV": the IV of a sector is
// its byte offset (64-bit little-endian, zero-padded to a block) encrypted
// with the data key.
type eboiv struct {
	c          ciphers.Block
	sectorSize uint64
}

// IVs implements sector.IVGenerator with one cipher call per run.
func (e eboiv) IVs(dst []byte, ivSize int, first uint64) {
	clear(dst)
	for off := 0; off < len(dst); off += ivSize {
		binary.LittleEndian.PutUint64(dst[off:], first*e.sectorSize)
		first++
	}
	e.c.EncryptBlocks(dst, dst)
}

func newEBOIVCBC(key []byte, sectorSize int) (sector.Mode, error) {
	c, err := aes.New(key)
	if err != nil {
		return nil, err
	}
	return sector.NewCBC(c, eboiv{c: c, sectorSize: uint64(sectorSize)}, sectorSize)
}

// elephant is AES-CBC (EBOIV) with the Elephant diffuser.
type elephant struct {
	cbc        sector.Mode
	sectorKey  ciphers.Block
	sectorSize int
	perChunk   int
	keys       sync.Pool // *[]byte: 32 bytes of sector key per sector of a chunk
}

// elephantChunk is how many sectors share one sector-key computation.
const elephantChunk = 64

func newElephant(cbcKey, sectorKey []byte, sectorSize int) (sector.Mode, error) {
	if sectorSize%32 != 0 || sectorSize < 64 || bits.OnesCount(uint(sectorSize)) != 1 {
		return nil, fmt.Errorf("bitlk: the Elephant diffuser needs a power-of-two sector size, not %d", sectorSize)
	}
	cbc, err := newEBOIVCBC(cbcKey, sectorSize)
	if err != nil {
		return nil, err
	}
	sk, err := aes.New(sectorKey)
	if err != nil {
		return nil, err
	}
	e := &elephant{cbc: cbc, sectorKey: sk, sectorSize: sectorSize, perChunk: elephantChunk}
	e.keys.New = func() any { b := make([]byte, 32*e.perChunk); return &b }
	return e, nil
}

func (e *elephant) SectorSize() int { return e.sectorSize }

// sectorKeys fills keys with the 32-byte sector key of each sector from
// first on: E(K, offset) then E(K, offset with its last byte 0x80).
func (e *elephant) sectorKeys(keys []byte, first uint64) {
	clear(keys)
	for off := 0; off < len(keys); off += 32 {
		o := first * uint64(e.sectorSize)
		binary.LittleEndian.PutUint64(keys[off:], o)
		binary.LittleEndian.PutUint64(keys[off+16:], o)
		keys[off+31] = 0x80
		first++
	}
	e.sectorKey.EncryptBlocks(keys, keys)
}

// Decrypt implements sector.Mode: CBC, then diffuser B and A undone, then
// the sector key removed.
func (e *elephant) Decrypt(dst, src []byte, first uint64) {
	e.cbc.Decrypt(dst, src, first)
	kp := e.keys.Get().(*[]byte)
	var w [4096 / 4]uint32
	ss := e.sectorSize
	for len(dst) > 0 {
		n := min(len(dst)/ss, e.perChunk)
		keys := (*kp)[:32*n]
		e.sectorKeys(keys, first)
		for s := 0; s < n; s++ {
			d := w[:ss/4]
			p := dst[s*ss : (s+1)*ss]
			load(d, p)
			diffuserBDecrypt(d)
			diffuserADecrypt(d)
			storeXOR(p, d, keys[32*s:32*s+32])
		}
		dst = dst[n*ss:]
		first += uint64(n)
	}
	e.keys.Put(kp)
}

// Encrypt implements sector.Mode: sector key, diffusers A and B, CBC.
func (e *elephant) Encrypt(dst, src []byte, first uint64) {
	kp := e.keys.Get().(*[]byte)
	var w [4096 / 4]uint32
	ss := e.sectorSize
	out, start := dst[:len(src)], first
	for len(src) > 0 {
		n := min(len(src)/ss, e.perChunk)
		keys := (*kp)[:32*n]
		e.sectorKeys(keys, first)
		for s := 0; s < n; s++ {
			d := w[:ss/4]
			loadXOR(d, src[s*ss:(s+1)*ss], keys[32*s:32*s+32])
			diffuserAEncrypt(d)
			diffuserBEncrypt(d)
			store(dst[s*ss:(s+1)*ss], d)
		}
		src, dst = src[n*ss:], dst[n*ss:]
		first += uint64(n)
	}
	e.keys.Put(kp)
	e.cbc.Encrypt(out, out, start)
}

// load, store and their variants with the sector key move a sector
// between bytes and little-endian words, eight words (one sector key's
// worth) per step.
func load(d []uint32, p []byte) {
	var zero [8]uint32
	loadWords(d, p, &zero)
}

func loadXOR(d []uint32, p, key []byte) {
	var k [8]uint32
	load(k[:], key)
	loadWords(d, p, &k)
}

func loadWords(d []uint32, p []byte, k *[8]uint32) {
	for len(d) >= 8 && len(p) >= 32 {
		q, w := p[:32], d[:8]
		w[0], w[1] = binary.LittleEndian.Uint32(q[0:])^k[0], binary.LittleEndian.Uint32(q[4:])^k[1]
		w[2], w[3] = binary.LittleEndian.Uint32(q[8:])^k[2], binary.LittleEndian.Uint32(q[12:])^k[3]
		w[4], w[5] = binary.LittleEndian.Uint32(q[16:])^k[4], binary.LittleEndian.Uint32(q[20:])^k[5]
		w[6], w[7] = binary.LittleEndian.Uint32(q[24:])^k[6], binary.LittleEndian.Uint32(q[28:])^k[7]
		d, p = d[8:], p[32:]
	}
}

func store(p []byte, d []uint32) {
	var zero [8]uint32
	storeWords(p, d, &zero)
}

func storeXOR(p []byte, d []uint32, key []byte) {
	var k [8]uint32
	load(k[:], key)
	storeWords(p, d, &k)
}

func storeWords(p []byte, d []uint32, k *[8]uint32) {
	for len(d) >= 8 && len(p) >= 32 {
		q, w := p[:32], d[:8]
		binary.LittleEndian.PutUint32(q[0:], w[0]^k[0])
		binary.LittleEndian.PutUint32(q[4:], w[1]^k[1])
		binary.LittleEndian.PutUint32(q[8:], w[2]^k[2])
		binary.LittleEndian.PutUint32(q[12:], w[3]^k[3])
		binary.LittleEndian.PutUint32(q[16:], w[4]^k[4])
		binary.LittleEndian.PutUint32(q[20:], w[5]^k[5])
		binary.LittleEndian.PutUint32(q[24:], w[6]^k[6])
		binary.LittleEndian.PutUint32(q[28:], w[7]^k[7])
		d, p = d[8:], p[32:]
	}
}

// The diffusers work on the sector as n 32-bit little-endian words, all
// indices modulo n (Ferguson, "AES-CBC + Elephant diffuser", 2006). The
// decryption direction of each is
//
//	A: for i = 0 .. 5n-1:  d[i] += d[i-2] ^ (d[i-5] <<< Ra[i mod 4]),  Ra = 9, 0, 13, 0
//	B: for i = 0 .. 3n-1:  d[i] += d[i+2] ^ (d[i+5] <<< Rb[i mod 4]),  Rb = 0, 10, 0, 25
//
// and encryption runs the same steps backwards with subtraction. n is a
// power of two (128 or 1024), so the indices wrap with a mask.
const (
	cyclesA = 5
	cyclesB = 3
)

// diffuserADecrypt keeps the last five words written in registers: each
// step reads the words written two and five steps before it (across the
// wrap from one cycle to the next too, since n > 5), so only the word it
// updates comes from memory.
func diffuserADecrypt(d []uint32) {
	n := len(d)
	a1, a2, a3, a4, a5 := d[n-1], d[n-2], d[n-3], d[n-4], d[n-5]
	for c := 0; c < cyclesA; c++ {
		for i := 0; i+4 <= len(d); i += 4 {
			q := d[i : i+4]
			x0 := q[0] + (a2 ^ bits.RotateLeft32(a5, 9))
			x1 := q[1] + (a1 ^ a4)
			x2 := q[2] + (x0 ^ bits.RotateLeft32(a3, 13))
			x3 := q[3] + (x1 ^ a2)
			q[0], q[1], q[2], q[3] = x0, x1, x2, x3
			a1, a2, a3, a4, a5 = x3, x2, x1, x0, a1
		}
	}
}

// diffuserAEncrypt undoes diffuserADecrypt's steps from the last: the
// words it reads (two and five places back) are not undone yet.
func diffuserAEncrypt(d []uint32) {
	n := len(d)
	m := n - 1
	for c := 0; c < cyclesA; c++ {
		for i := n - 4; i >= 8; i -= 4 {
			q := d[i-5 : i+4]
			q[8] -= q[6] ^ q[3]
			q[7] -= q[5] ^ bits.RotateLeft32(q[2], 13)
			q[6] -= q[4] ^ q[1]
			q[5] -= q[3] ^ bits.RotateLeft32(q[0], 9)
		}
		for i := 4; i >= 0; i -= 4 {
			d[i+3] -= d[i+1] ^ d[(i-2)&m]
			d[i+2] -= d[i] ^ bits.RotateLeft32(d[(i-3)&m], 13)
			d[i+1] -= d[(i-1)&m] ^ d[(i-4)&m]
			d[i] -= d[(i-2)&m] ^ bits.RotateLeft32(d[(i-5)&m], 9)
		}
	}
}

// Diffuser B reads ahead, two and five places on: words last written n-2
// and n-5 steps before, so from memory, with index masks only for the
// last eight words of each cycle.
func diffuserBDecrypt(d []uint32) {
	n := len(d)
	m := n - 1
	for c := 0; c < cyclesB; c++ {
		i := 0
		for ; i+9 <= n; i += 4 {
			q := d[i : i+9]
			q[0] += q[2] ^ q[5]
			q[1] += q[3] ^ bits.RotateLeft32(q[6], 10)
			q[2] += q[4] ^ q[7]
			q[3] += q[5] ^ bits.RotateLeft32(q[8], 25)
		}
		for ; i < n; i += 4 {
			d[i] += d[(i+2)&m] ^ d[(i+5)&m]
			d[i+1] += d[(i+3)&m] ^ bits.RotateLeft32(d[(i+6)&m], 10)
			d[i+2] += d[(i+4)&m] ^ d[(i+7)&m]
			d[i+3] += d[(i+5)&m] ^ bits.RotateLeft32(d[(i+8)&m], 25)
		}
	}
}

func diffuserBEncrypt(d []uint32) {
	n := len(d)
	m := n - 1
	for c := 0; c < cyclesB; c++ {
		i := n - 4
		for ; i+9 > n; i -= 4 {
			d[i+3] -= d[(i+5)&m] ^ bits.RotateLeft32(d[(i+8)&m], 25)
			d[i+2] -= d[(i+4)&m] ^ d[(i+7)&m]
			d[i+1] -= d[(i+3)&m] ^ bits.RotateLeft32(d[(i+6)&m], 10)
			d[i] -= d[(i+2)&m] ^ d[(i+5)&m]
		}
		for ; i >= 0; i -= 4 {
			q := d[i : i+9]
			q[3] -= q[5] ^ bits.RotateLeft32(q[8], 25)
			q[2] -= q[4] ^ q[7]
			q[1] -= q[3] ^ bits.RotateLeft32(q[6], 10)
			q[0] -= q[2] ^ q[5]
		}
	}
}
