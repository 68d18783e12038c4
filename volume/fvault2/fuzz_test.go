package fvault2

import (
	"context"
	"crypto/aes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/volume"
)

// A fuzz input is the metadata ReadMetadata follows, packed: the physical
// volume header, the disk label block, the volume groups descriptor and
// then the encrypted metadata blocks in plaintext. fuzzDevice lays them
// out where the (fuzzed) pointers say, fixing each CRC-32C and encrypting
// the metadata with the header's key, as a Mac would: without that the
// fuzzer would have to forge checksums through AES-XTS and would never get
// past the header.
const (
	fuzzVGOff    = headerSize + mdBlockSize
	fuzzBlocksAt = fuzzVGOff + 40
	// fuzzDevSize is the device's apparent size: any metadata pointer
	// inside maxMetadataOffset can be laid out.
	fuzzDevSize = maxMetadataOffset + 64*mdBlockSize
)

// extentDevice is a sparse read-only device: zeros but for extents, the
// later of two overlapping ones winning. It lets a fuzz input point at
// metadata a GiB away without allocating a GiB.
type extentDevice struct {
	ext []extent
}

type extent struct {
	off int64
	b   []byte
}

func (d *extentDevice) Size() int64 { return fuzzDevSize }
func (d *extentDevice) Sync() error { return nil }
func (d *extentDevice) WriteAt(p []byte, off int64) (int, error) {
	return 0, errors.New("extentDevice is read-only")
}

func (d *extentDevice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= fuzzDevSize {
		return 0, io.EOF
	}
	n := len(p)
	if off+int64(n) > fuzzDevSize {
		n = int(fuzzDevSize - off)
	}
	clear(p[:n])
	for _, e := range d.ext {
		lo, hi := max(off, e.off), min(off+int64(n), e.off+int64(len(e.b)))
		if lo < hi {
			copy(p[lo-off:hi-off], e.b[lo-e.off:hi-e.off])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// setCRC writes b's CoreStorage checksum (seed 0xFFFFFFFF) into its first
// eight bytes.
func setCRC(b []byte) {
	binary.LittleEndian.PutUint32(b[4:], 0xffffffff)
	binary.LittleEndian.PutUint32(b, ^crc32.Update(0, castagnoli, b[8:]))
}

func fuzzDevice(data []byte) *extentDevice {
	part := func(lo, n int) []byte {
		b := make([]byte, n)
		if lo < len(data) {
			copy(b, data[lo:])
		}
		return b
	}
	le := binary.LittleEndian
	d := &extentDevice{}
	h := part(0, headerSize)
	setCRC(h)
	d.ext = append(d.ext, extent{0, h})
	bs := int64(le.Uint32(h[96:]))
	labelBlk := le.Uint64(h[104:])
	if bs <= 0 || bs > 1<<20 || labelBlk > maxMetadataOffset/uint64(bs) {
		return d
	}
	labelOff := int64(labelBlk) * bs
	label := part(headerSize, mdBlockSize)
	setCRC(label)
	d.ext = append(d.ext, extent{labelOff, label})
	vgOff := labelOff + int64(le.Uint32(label[220:]))
	vg := part(fuzzVGOff, 40)
	d.ext = append(d.ext, extent{vgOff, vg})
	encBlk := le.Uint64(vg[32:])
	if encBlk > maxMetadataOffset/uint64(bs) {
		return d
	}
	encOff := int64(encBlk) * bs
	key := make([]byte, 32)
	copy(key, h[176:192])
	copy(key[16:], h[304:320])
	c, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		panic(err)
	}
	for i := 0; fuzzBlocksAt+i*mdBlockSize < len(data); i++ {
		b := part(fuzzBlocksAt+i*mdBlockSize, mdBlockSize)
		setCRC(b)
		c.Encrypt(b, b, uint64(i))
		d.ext = append(d.ext, extent{encOff + int64(i)*mdBlockSize, b})
	}
	return d
}

// FuzzReadMetadata feeds CoreStorage headers, disk labels, volume group
// descriptors and metadata blocks (with the plists of keys and logical
// volume) to ReadMetadata through fuzzDevice. Nothing may panic or hang;
// every error wraps ErrDamaged, ErrUnsupported or ErrWrongPassword (not
// CoreStorage); accepted metadata has at least one user key, a non-empty
// logical volume and a block size that is a power of two. When its PBKDF2
// is cheap, deriving the volume key from a passphrase must not fail other
// than cleanly. The seed in testdata/fuzz/FuzzReadMetadata is cryptsetup's
// fvault2-images "small" packed this way (its metadata decrypted).
func FuzzReadMetadata(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzBlocksAt+16*mdBlockSize {
			return
		}
		m, err := ReadMetadata(fuzzDevice(data))
		if err != nil {
			if !errors.Is(err, volume.ErrDamaged) && !errors.Is(err, volume.ErrUnsupported) && !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if len(m.passphrases) == 0 || len(m.wrappedVKs) == 0 || m.LVSize <= 0 || m.BlockSize&(m.BlockSize-1) != 0 || m.LVOffset < 0 {
			t.Fatalf("accepted metadata %+v", m)
		}
		m.info()
		cheap := true
		for _, p := range m.passphrases {
			cheap = cheap && p.iterations <= 16
		}
		if cheap {
			if _, err := m.VolumeKey(context.Background(), []byte(smallPassword)); err != nil &&
				!errors.Is(err, volume.ErrDamaged) && !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("VolumeKey: error wraps no sentinel: %v", err)
			}
		}
	})
}
