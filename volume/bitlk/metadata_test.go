package bitlk

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

func corpusImage(t testing.TB, name string) testdata.BitLockerImage {
	t.Helper()
	for _, im := range testdata.BitLockerImages(t) {
		if im.Name == name {
			return im
		}
	}
	t.Fatalf("no image %s in the corpus", name)
	return testdata.BitLockerImage{}
}

// TestMetadataCopies: the "crc" image has two metadata copies whose CRC-32
// is wrong (their description was changed); the third is used, and says so.
func TestMetadataCopies(t *testing.T) {
	for name, want := range map[string]int{"bitlk-aes-xts-128": 0, "bitlk-aes-xts-128-crc": 2} {
		m := metadataOf(t, corpusImage(t, name).Path)
		if m.Copy != want {
			t.Errorf("%s: read copy %d, want %d", name, m.Copy, want)
		}
		if m.Description != "DESKTOP-NPM7RCA H: 7/4/2019" || m.Method != AESXTS128 || len(m.VMKs) != 2 {
			t.Errorf("%s: %+v", name, m)
		}
	}
	m := metadataOf(t, corpusImage(t, "bitlk-togo-aes-cbc-128").Path)
	if !m.ToGo || m.HeaderSize != 5258240 || m.HeaderOffset != 92342272 {
		t.Errorf("To Go: %+v", m)
	}
}

// patchBlocks applies f to each of the three FVE metadata blocks of a copy
// of the image at path, then recomputes their CRC-32 when fixCRC is set.
func patchBlocks(t *testing.T, path string, fixCRC bool, f func(i int, block []byte)) string {
	t.Helper()
	p := testdata.CopyFile(t, path)
	os.Chmod(p, 0o644)
	m := metadataOf(t, path)
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	for i, off := range m.MetadataOffsets {
		area := make([]byte, fveAreaSize)
		if _, err := fh.ReadAt(area, off); err != nil {
			t.Fatal(err)
		}
		size := int(binary.LittleEndian.Uint16(area[8:])) << 4
		f(i, area[:size])
		if fixCRC {
			binary.LittleEndian.PutUint32(area[size+4:], crc32.ChecksumIEEE(area[:size]))
		}
		if _, err := fh.WriteAt(area, off); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestDamagedMetadata(t *testing.T) {
	im := corpusImage(t, "bitlk-aes-xts-128-startup-key")
	// A flipped bit in every copy: no copy passes its CRC.
	p := patchBlocks(t, im.Path, false, func(i int, b []byte) { b[200] ^= 1 })
	_, err := open(t, p, volume.Credentials{StartupKey: im.StartupKey})
	if !errors.Is(err, volume.ErrDamaged) || !strings.Contains(err.Error(), "CRC-32") || !strings.Contains(err.Error(), "other two copies") {
		t.Errorf("all copies damaged: %v", err)
	}
	// Only the first: the second opens it.
	p = patchBlocks(t, im.Path, false, func(i int, b []byte) {
		if i == 0 {
			b[200] ^= 1
		}
	})
	v, err := open(t, p, volume.Credentials{StartupKey: im.StartupKey})
	if err != nil {
		t.Fatalf("first copy damaged: %v", err)
	}
	v.Close()
	if m := metadataOf(t, p); m.Copy != 1 {
		t.Errorf("read copy %d, want 1", m.Copy)
	}
}

// TestTamperedMetadata changes the description in every copy and fixes
// the CRCs, as someone editing the metadata would: the digest signed with
// the volume master key catches it.
func TestTamperedMetadata(t *testing.T) {
	im := corpusImage(t, "bitlk-aes-xts-128-startup-key")
	p := patchBlocks(t, im.Path, true, func(i int, b []byte) {
		// The description ("DESKTOP-...") is the first entry.
		b[blockHeaderLen+metadataHeaderLen+entryHeaderLen] ^= 0x20
	})
	m := metadataOf(t, p)
	if !strings.HasPrefix(m.Description, "dESKTOP") {
		t.Fatalf("patch did not take: %q", m.Description)
	}
	_, err := open(t, p, volume.Credentials{StartupKey: im.StartupKey})
	if !errors.Is(err, volume.ErrDamaged) || !strings.Contains(err.Error(), "tampered") {
		t.Errorf("tampered metadata: %v", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	sk := corpusImage(t, "bitlk-aes-xts-128-startup-key")
	win11 := corpusImage(t, "bitlk-aes-xts-128-startup-key-win11")
	_, err := open(t, sk.Path, volume.Credentials{StartupKey: win11.StartupKey})
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "belongs to volume "+win11.GUID) {
		t.Errorf("another volume's startup key: %v", err)
	}
	sc := corpusImage(t, "bitlk-aes-xts-128-smart-card")
	_, err = open(t, sc.Path, volume.Credentials{})
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "no password, recovery password or startup key given; this volume opens with: recovery password (not usable here: smart card)") {
		t.Errorf("smart card, nothing given: %v", err)
	}
	// A key file that is not a .BEK file is a password, as for cryptsetup.
	kf := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(kf, []byte("not it\n"), 0o600)
	_, err = open(t, sc.Path, volume.Credentials{Keyfiles: []string{kf}})
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "no protector opened with the credentials given") {
		t.Errorf("smart card, a password: %v", err)
	}
	_, err = open(t, sc.Path, volume.Credentials{RecoveryPassword: []byte("123456")})
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "6 digits, want 48") {
		t.Errorf("malformed recovery password: %v", err)
	}
	if testing.Short() {
		return // the rest costs a key stretch
	}
	_, err = open(t, corpusImage(t, "bitlk-aes-xts-128").Path, volume.Credentials{Password: []byte("wrong password")})
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "this volume opens with: password, recovery password") {
		t.Errorf("wrong password: %v", err)
	}
}

func TestBEK(t *testing.T) {
	for _, name := range []string{"bitlk-aes-xts-128-startup-key", "bitlk-aes-xts-128-startup-key-win11"} {
		im := corpusImage(t, name)
		b, err := os.ReadFile(im.StartupKey)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ParseBEK(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if k.ID.String() != im.StartupVMK || k.Name != "ExternalKey" || len(k.key) != 32 {
			t.Errorf("%s: %+v", name, k)
		}
		if win11 := strings.HasSuffix(name, "win11"); k.hasVolume != win11 || (win11 && k.Volume.String() != im.GUID) {
			t.Errorf("%s: volume GUID %v %s", name, k.hasVolume, k.Volume)
		}
		if _, err := ParseBEK(b[:len(b)-1]); err == nil {
			t.Errorf("%s: a truncated file parsed", name)
		}
		bad := append([]byte(nil), b...)
		bad[4] = 2
		if _, err := ParseBEK(bad); err == nil || !strings.Contains(err.Error(), "version 2") {
			t.Errorf("%s: version 2: %v", name, err)
		}
	}
	if _, err := ParseBEK([]byte("anaconda")); !errors.Is(err, errNotBEK) {
		t.Errorf("a password parsed as a .BEK file: %v", err)
	}
}

// memDev is an in-memory volume.Device.
type memDev struct{ b []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(m.b)) {
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

func TestNotBitLocker(t *testing.T) {
	dev := &memDev{b: make([]byte, 1<<20)}
	if _, err := ReadMetadata(dev); !errors.Is(err, volume.ErrWrongPassword) {
		t.Errorf("zeros: %v", err)
	}
	// A FAT32 boot sector with Windows 98's OEM name is not BitLocker To Go.
	copy(dev.b[3:], "MSWIN4.1")
	dev.b[510], dev.b[511] = 0x55, 0xaa
	if IsBitLocker(dev.b) {
		t.Error("a plain MSWIN4.1 FAT boot sector detected as BitLocker")
	}
	if _, err := ReadMetadata(dev); !errors.Is(err, volume.ErrWrongPassword) {
		t.Errorf("plain FAT: %v", err)
	}
}

// fuzzDevice builds a small volume: the boot sector of a corpus image
// pointing at three metadata areas, the first holding data.
func fuzzDevice(boot, area []byte) *memDev {
	dev := &memDev{b: make([]byte, 5*fveAreaSize)}
	copy(dev.b, boot)
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint64(dev.b[superblockOffset+16+8*i:], uint64((i+1)*fveAreaSize))
	}
	copy(dev.b[fveAreaSize:], area)
	return dev
}

// FuzzReadMetadata feeds FVE metadata blocks (the header, then the
// entries: key protectors, volume key, description, ...) to ReadMetadata
// behind the boot sector of the corpus image bitlk-aes-xts-128
// (testdata/fuzz-boot.bin, copied from ../shared/testdata). Nothing may
// panic; errors wrap the volume sentinels. The seeds in
// testdata/fuzz/FuzzReadMetadata are the first metadata block of corpus
// images with different protectors and ciphers (copied in, so the
// target runs without ../shared).
func FuzzReadMetadata(f *testing.F) {
	boot, err := os.ReadFile("testdata/fuzz-boot.bin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, area []byte) {
		dev := fuzzDevice(boot, area)
		// The fuzzer rarely fixes a CRC: do it for it, so the entry
		// parsers behind it are reached.
		a := dev.b[fveAreaSize : 2*fveAreaSize]
		if size := int(binary.LittleEndian.Uint16(a[8:])) << 4; size >= 8 && size <= fveAreaSize-8 {
			binary.LittleEndian.PutUint32(a[size+4:], crc32.ChecksumIEEE(a[:size]))
		}
		m, err := ReadMetadata(dev)
		if err != nil {
			if !errors.Is(err, volume.ErrDamaged) && !errors.Is(err, volume.ErrUnsupported) && !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		m.segments(dev.Size())
		m.Details()
	})
}
