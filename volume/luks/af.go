package luks

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"hash"
	"io"

	"github.com/cryptvol/cryptvol/hashes"
)

// The anti-forensic splitter of the LUKS1 specification (section 2.4),
// which LUKS2 keyslots of af type "luks1" use unchanged. A key of n bytes
// is stored as stripes·n bytes: stripes-1 random blocks s_i and a last
// block s_{k-1} = key ⊕ d_{k-1}, where d_0 = 0 and d_{i+1} = H(d_i ⊕ s_i).
// Losing any one block of the stored material loses the key.

// afSize is the number of bytes the split key occupies.
func afSize(keyBytes, stripes int) int64 { return int64(keyBytes) * int64(stripes) }

// afSectors rounds the split key up to whole 512-byte sectors, the unit the
// key material is encrypted and stored in.
func afSectors(keyBytes, stripes int) int64 {
	return (afSize(keyBytes, stripes) + 511) / 512
}

// afDiffuser applies the diffusion function H with one hash instance and
// reused scratch, so merging 4000 stripes allocates nothing per stripe.
type afDiffuser struct {
	h   hash.Hash
	sum []byte
	ctr [4]byte
}

func newDiffuser(h hashes.Spec) *afDiffuser {
	return &afDiffuser{h: h.New(), sum: make([]byte, 0, h.Size)}
}

// diffuse replaces b with H(b): b is cut into digest-sized pieces, piece j
// becomes hash(be32(j) ‖ piece) (the last piece takes a prefix of its
// digest).
func (d *afDiffuser) diffuse(b []byte) {
	ds := d.h.Size()
	for j, off := 0, 0; off < len(b); j, off = j+1, off+ds {
		end := min(off+ds, len(b))
		d.h.Reset()
		binary.BigEndian.PutUint32(d.ctr[:], uint32(j))
		d.h.Write(d.ctr[:])
		d.h.Write(b[off:end])
		d.sum = d.h.Sum(d.sum[:0])
		copy(b[off:end], d.sum)
	}
	clear(d.sum[:cap(d.sum)])
}

// afMerge recovers the key of len(key) bytes from split material (at least
// len(key)·stripes bytes).
func afMerge(key, material []byte, stripes int, h hashes.Spec) error {
	n := len(key)
	if stripes < 1 || int64(len(material)) < afSize(n, stripes) {
		return fmt.Errorf("anti-forensic material too short: %d bytes for %d stripes of %d", len(material), stripes, n)
	}
	d := newDiffuser(h)
	clear(key)
	for i := 0; i < stripes-1; i++ {
		subtle.XORBytes(key, key, material[i*n:(i+1)*n])
		d.diffuse(key)
	}
	subtle.XORBytes(key, key, material[(stripes-1)*n:stripes*n])
	return nil
}

// afSplit writes the split form of key into material (len(key)·stripes
// bytes), drawing the random stripes from rnd.
func afSplit(material, key []byte, stripes int, h hashes.Spec, rnd io.Reader) error {
	n := len(key)
	if stripes < 1 || int64(len(material)) < afSize(n, stripes) {
		return fmt.Errorf("anti-forensic buffer too short")
	}
	last := (stripes - 1) * n
	if _, err := io.ReadFull(rnd, material[:last]); err != nil {
		return fmt.Errorf("reading random bytes: %w", err)
	}
	d := newDiffuser(h)
	acc := make([]byte, n)
	defer clear(acc)
	for i := 0; i < stripes-1; i++ {
		subtle.XORBytes(acc, acc, material[i*n:(i+1)*n])
		d.diffuse(acc)
	}
	subtle.XORBytes(material[last:last+n], acc, key)
	return nil
}
