package volume_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	mrand "math/rand"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// memDev is an in-memory Device.
type memDev struct{ b []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (m *memDev) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }
func (m *memDev) Size() int64                              { return int64(len(m.b)) }
func (m *memDev) Sync() error                              { return nil }

// newTestVolume makes a volume whose data area is dev[4096:4096+size],
// encrypted with AES-XTS, the IV of its first sector being 8.
func newTestVolume(t testing.TB, size int64, o volume.Options, protOff, protSize int64) (*volume.Volume, *memDev, sector.Mode) {
	t.Helper()
	dev := &memDev{b: make([]byte, 4096+size+1024)}
	c, _ := ciphers.LookupChain("AES")
	key := make([]byte, 64)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, 512)
	if err != nil {
		t.Fatal(err)
	}
	u := &volume.Unlocked{Mode: m, DataOffset: 4096, DataSize: size, FirstSector: 8, ProtectedOffset: protOff, ProtectedSize: protSize}
	v, err := volume.New(dev, u, o)
	if err != nil {
		t.Fatal(err)
	}
	return v, dev, m
}

// TestReadWriteAgainstModel does random unaligned reads and writes and
// checks them against a plain byte slice, and the ciphertext on the device
// against the mode applied sector by sector.
func TestReadWriteAgainstModel(t *testing.T) {
	const size = 64 << 10
	v, dev, m := newTestVolume(t, size, volume.Options{}, 0, 0)
	model := make([]byte, size)
	v.WriteAt(model, 0)
	rng := mrand.New(mrand.NewSource(1))
	for i := 0; i < 2000; i++ {
		off := rng.Int63n(size)
		n := rng.Intn(int(min(size-off, 5000)) + 1)
		if rng.Intn(2) == 0 {
			p := make([]byte, n)
			rng.Read(p)
			if k, err := v.WriteAt(p, off); err != nil || k != n {
				t.Fatalf("write %d at %d: %d, %v", n, off, k, err)
			}
			copy(model[off:], p)
		} else {
			p := make([]byte, n)
			if k, err := v.ReadAt(p, off); k != n || (err != nil && err != io.EOF) {
				t.Fatalf("read %d at %d: %d, %v", n, off, k, err)
			}
			if !bytes.Equal(p, model[off:off+int64(n)]) {
				t.Fatalf("read %d at %d differs from the model", n, off)
			}
		}
	}
	// The device holds the model encrypted sector by sector, IVs from 8.
	want := make([]byte, size)
	for s := 0; s < size/512; s++ {
		m.Encrypt(want[s*512:(s+1)*512], model[s*512:(s+1)*512], uint64(8+s))
	}
	if !bytes.Equal(dev.b[4096:4096+size], want) {
		t.Fatal("ciphertext on the device is not the model encrypted with sector IVs from 8")
	}
	if !bytes.Equal(dev.b[:4096], make([]byte, 4096)) || !bytes.Equal(dev.b[4096+size:], make([]byte, 1024)) {
		t.Fatal("a write touched bytes outside the data area")
	}
}

func TestBoundsReadOnlyAndProtection(t *testing.T) {
	const size = 8192
	v, dev, _ := newTestVolume(t, size, volume.Options{}, 4096, 2048)
	before := append([]byte(nil), dev.b...)
	if _, err := v.WriteAt(make([]byte, 10), size-5); !errors.Is(err, volume.ErrOutOfRange) {
		t.Fatalf("write past the end: %v", err)
	}
	if _, err := v.WriteAt(make([]byte, 100), 4000); !errors.Is(err, volume.ErrProtected) {
		t.Fatalf("write into the protected range: %v", err)
	}
	if !bytes.Equal(before, dev.b) {
		t.Fatal("a refused write changed the device")
	}
	// The refusal makes the volume read-only, as TrueCrypt does: a write
	// outside the hidden volume is refused too, and nothing changes.
	if _, err := v.WriteAt(make([]byte, 100), 6144); !errors.Is(err, volume.ErrProtected) || !v.ProtectionTriggered() {
		t.Fatalf("write after the protection triggered: %v (triggered %v)", err, v.ProtectionTriggered())
	}
	if !bytes.Equal(before, dev.b) {
		t.Fatal("a write after the protection triggered changed the device")
	}
	fresh, _, _ := newTestVolume(t, size, volume.Options{}, 4096, 2048)
	if _, err := fresh.WriteAt(make([]byte, 100), 6144); err != nil || fresh.ProtectionTriggered() {
		t.Fatalf("write after the protected range: %v (triggered %v)", err, fresh.ProtectionTriggered())
	}
	if _, err := fresh.WriteAt(make([]byte, 100), 2000); err != nil {
		t.Fatalf("write before the protected range: %v", err)
	}
	p := make([]byte, 100)
	if n, err := v.ReadAt(p, size-50); n != 50 || err != io.EOF {
		t.Fatalf("read across the end: %d, %v", n, err)
	}
	if n, err := v.ReadAt(p, size); n != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d, %v", n, err)
	}

	ro, _, _ := newTestVolume(t, size, volume.Options{ReadOnly: true}, 0, 0)
	if _, err := ro.WriteAt([]byte("x"), 0); !errors.Is(err, volume.ErrReadOnly) {
		t.Fatalf("write to a read-only volume: %v", err)
	}
}

// TestAlignedIOAllocatesNothing: the steady-state read and write path of
// whole sectors makes no allocation.
func TestAlignedIOAllocatesNothing(t *testing.T) {
	v, _, _ := newTestVolume(t, 1<<20, volume.Options{}, 0, 0)
	buf := make([]byte, 256<<10)
	v.WriteAt(buf, 0)
	v.ReadAt(buf, 0)
	if n := testing.AllocsPerRun(20, func() { v.ReadAt(buf, 4096) }); n != 0 {
		t.Errorf("ReadAt allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { v.WriteAt(buf, 4096) }); n != 0 {
		t.Errorf("WriteAt allocates %v times per call", n)
	}
}

func BenchmarkVolumeReadAt1M(b *testing.B) {
	v, _, _ := newTestVolume(b, 8<<20, volume.Options{}, 0, 0)
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		v.ReadAt(buf, int64(i%8)<<20)
	}
}

// BenchmarkVolumeWriteAt4K is the small-write path (a FAT directory entry,
// a FUSE page): what the header check adds to it is one atomic load per
// write once the first write has checked the header.
func BenchmarkVolumeWriteAt4K(b *testing.B) {
	v, _, _ := newTestVolume(b, 8<<20, volume.Options{}, 0, 0)
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		v.WriteAt(buf, int64(i%2048)<<12)
	}
}
