package volume_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	mrand "math/rand"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

const segSS = 512

// segmentedVolume lays out a 64-sector data area the way BitLocker does:
// the first 8 sectors stored at sector 40 (and encrypted with that place's
// IVs), zeros at 16-19 and at 40-47, the rest in place.
func segmentedVolume(t *testing.T) (*volume.Volume, *memDev, sector.Mode, []volume.Segment) {
	t.Helper()
	c, _ := ciphers.LookupChain("AES")
	key := make([]byte, 64)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, segSS)
	if err != nil {
		t.Fatal(err)
	}
	s := func(n int) int64 { return int64(n * segSS) }
	segs := []volume.Segment{
		{Offset: 0, Size: s(8), DevOffset: s(40), FirstSector: 40},
		{Offset: s(8), Size: s(8), DevOffset: s(8), FirstSector: 8},
		{Offset: s(16), Size: s(4), Zero: true, Name: "metadata A"},
		{Offset: s(20), Size: s(20), DevOffset: s(20), FirstSector: 20},
		{Offset: s(40), Size: s(8), Zero: true, Name: "the copy of the first sectors"},
		{Offset: s(48), Size: s(16), DevOffset: s(48), FirstSector: 48},
	}
	dev := &memDev{b: make([]byte, 64*segSS)}
	rand.Read(dev.b)
	v, err := volume.New(dev, &volume.Unlocked{Mode: m, DataSize: 64 * segSS, Segments: segs}, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, dev, m, segs
}

// TestSegmentsReadWrite writes a model through the volume, then checks
// every sector of the device against the mode applied by hand, and random
// unaligned reads and writes against the model.
func TestSegmentsReadWrite(t *testing.T) {
	v, dev, m, segs := segmentedVolume(t)
	model := make([]byte, v.Size())
	rand.Read(model)
	for _, s := range segs {
		if s.Zero {
			clear(model[s.Offset : s.Offset+s.Size])
		}
	}
	if _, err := v.WriteAt(model, 0); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.Zero {
			continue
		}
		for off := int64(0); off < s.Size; off += segSS {
			ct := dev.b[s.DevOffset+off : s.DevOffset+off+segSS]
			pt := make([]byte, segSS)
			m.Decrypt(pt, ct, s.FirstSector+uint64(off/segSS))
			if !bytes.Equal(pt, model[s.Offset+off:s.Offset+off+segSS]) {
				t.Fatalf("sector at %d: the device does not hold it at %d with IV %d", s.Offset+off, s.DevOffset+off, s.FirstSector+uint64(off/segSS))
			}
		}
	}
	rng := mrand.New(mrand.NewSource(2))
	for i := 0; i < 3000; i++ {
		off := rng.Int63n(v.Size())
		n := rng.Intn(int(min(v.Size()-off, 3000))) + 1
		p := make([]byte, n)
		if rng.Intn(2) == 0 {
			rng.Read(p)
			// Zero areas only take zeros.
			for _, s := range segs {
				if s.Zero {
					lo, hi := max(s.Offset, off), min(s.Offset+s.Size, off+int64(n))
					if lo < hi {
						clear(p[lo-off : hi-off])
					}
				}
			}
			if k, err := v.WriteAt(p, off); err != nil || k != n {
				t.Fatalf("write %d at %d: %d, %v", n, off, k, err)
			}
			copy(model[off:], p)
			continue
		}
		if k, err := v.ReadAt(p, off); k != n || err != nil {
			t.Fatalf("read %d at %d: %d, %v", n, off, k, err)
		}
		if !bytes.Equal(p, model[off:off+int64(n)]) {
			t.Fatalf("read %d at %d differs from the model", n, off)
		}
	}
}

// TestSegmentsReserved: a write that would put data into a zero segment
// is refused whole, before anything is written.
func TestSegmentsReserved(t *testing.T) {
	v, dev, _, _ := segmentedVolume(t)
	before := append([]byte(nil), dev.b...)
	p := make([]byte, 10*segSS)
	p[len(p)-1] = 1 // lands in sector 19 (metadata A)
	_, err := v.WriteAt(p, 10*segSS)
	if !errors.Is(err, volume.ErrReserved) || !bytes.Contains([]byte(err.Error()), []byte("metadata A")) {
		t.Fatalf("got %v, want ErrReserved naming the segment", err)
	}
	if !bytes.Equal(dev.b, before) {
		t.Fatal("the refused write changed the device")
	}
	// Zeros are what the segment holds: writing them is fine.
	p[len(p)-1] = 0
	if _, err := v.WriteAt(p, 10*segSS); err != nil {
		t.Fatal(err)
	}
	// The device's own sectors under the zero segment are left alone.
	if !bytes.Equal(dev.b[16*segSS:20*segSS], before[16*segSS:20*segSS]) {
		t.Fatal("writing zeros into a zero segment wrote to the device")
	}
}

func TestSegmentsChecked(t *testing.T) {
	c, _ := ciphers.LookupChain("AES")
	m, _ := sector.ChainXTS(c, make([]byte, 64), segSS)
	dev := &memDev{b: make([]byte, 64*segSS)}
	for name, segs := range map[string][]volume.Segment{
		"gap":         {{Size: 8 * segSS}, {Offset: 9 * segSS, Size: 55 * segSS}},
		"short":       {{Size: 8 * segSS}},
		"unaligned":   {{Size: 100}, {Offset: 100, Size: 64*segSS - 100}},
		"overlapping": {{Size: 8 * segSS}, {Offset: 4 * segSS, Size: 60 * segSS}},
	} {
		_, err := volume.New(dev, &volume.Unlocked{Mode: m, DataSize: 64 * segSS, Segments: segs}, volume.Options{})
		if !errors.Is(err, volume.ErrDamaged) {
			t.Errorf("%s: %v, want ErrDamaged", name, err)
		}
	}
}
