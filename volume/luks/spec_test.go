package luks

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/volume"
)

func TestParseCipherSpec(t *testing.T) {
	for _, tc := range []struct{ in, want, mode string }{
		{"aes-xts-plain64", "aes-xts-plain64", "xts-plain64"},
		{"AES-XTS-PLAIN64", "aes-xts-plain64", "xts-plain64"},
		{"serpent-cbc-essiv:sha256", "serpent-cbc-essiv:sha256", "cbc-essiv:sha256"},
		{"aes-xts-essiv:wp256", "aes-xts-essiv:wp256", "xts-essiv:wp256"},
		{"twofish-lrw-benbi", "twofish-lrw-benbi", "lrw-benbi"},
		{"aes-ecb", "aes-ecb", "ecb"},
		{"capi:xts(aes)-plain64", "aes-xts-plain64", "xts-plain64"},
		{"capi:cbc(serpent)-essiv:sha256", "serpent-cbc-essiv:sha256", "cbc-essiv:sha256"},
		{"xchacha12,aes-adiantum-plain64", "xchacha12,aes-adiantum-plain64", "adiantum-plain64"},
		{"xchacha20,aes-adiantum-plain64", "xchacha20,aes-adiantum-plain64", "adiantum-plain64"},
		{"capi:adiantum(xchacha12,aes)-plain64", "xchacha12,aes-adiantum-plain64", "adiantum-plain64"},
	} {
		s, err := ParseCipherSpec(tc.in)
		if err != nil || s.String() != tc.want || s.Mode() != tc.mode {
			t.Errorf("%s: %v %q %q", tc.in, err, s, s.Mode())
		}
	}
	for _, bad := range []string{"", "aes", "aes-xts", "aes-gcm-random", "aes-xts-essiv:nohash", "aes-ecb-plain64",
		"capi:xts(ecb(aes-generic))-plain64", "capi:xts", "aes-cbc-lmk",
		"xchacha12,aes-adiantum", "xchacha8,aes-adiantum-plain64", "xchacha12,serpent-adiantum-plain64",
		"xchacha12,aes-adiantum-essiv:sha256", "xchacha12,aes-adiantum-benbi", "aes-adiantum-plain64"} {
		if _, err := ParseCipherSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	s, _ := ParseCipherSpec("aes-xts-plain64")
	for _, n := range []int{32, 48, 64} {
		if err := s.Check(n); err != nil {
			t.Errorf("aes-xts %d bytes: %v", n, err)
		}
	}
	for _, n := range []int{16, 33, 128} {
		if err := s.Check(n); err == nil {
			t.Errorf("aes-xts with %d bytes accepted", n)
		}
	}
	a, _ := ParseCipherSpec("xchacha12,aes-adiantum-plain64")
	if a.Check(32) != nil || a.Check(64) == nil || a.Check(16) == nil {
		t.Error("adiantum takes exactly a 256-bit key")
	}
	l, _ := ParseCipherSpec("aes-lrw-plain64")
	if l.Check(48) != nil || l.Check(32) != nil || l.Check(40) != nil || l.Check(36) == nil {
		t.Error("lrw key sizes: AES key plus a 16-byte tweak key")
	}
}

// TestAFRoundTrip: a key split with afSplit merges back; changing any
// stripe loses it.
func TestAFRoundTrip(t *testing.T) {
	for _, name := range []string{"sha1", "sha256", "sha512", "ripemd160", "whirlpool"} {
		h := hashes.MustLookup(name)
		key := make([]byte, 64)
		rand.Read(key)
		material := make([]byte, afSize(len(key), luks1Stripes))
		if err := afSplit(material, key, luks1Stripes, h, rand.Reader); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(key))
		afMerge(got, material, luks1Stripes, h)
		if !bytes.Equal(got, key) {
			t.Fatalf("%s: merge(split(k)) != k", name)
		}
		material[len(material)/2] ^= 1
		afMerge(got, material, luks1Stripes, h)
		if bytes.Equal(got, key) {
			t.Fatalf("%s: a damaged stripe still yields the key", name)
		}
	}
}

// TestLargeSectorIVs writes through LUKS2 volumes with 512- and 4096-byte
// sectors and decrypts the raw sectors with golang.org/x/crypto/xts (an
// independent XTS), the IV being the number of the sector's first 512
// bytes: cryptsetup maps LUKS2 without dm-crypt's iv_large_sectors (it
// sets that flag only for plain mappings asked to and for BitLocker), so
// 4096-byte sector n has IV 8n. Linux's dm-crypt itself agrees:
// testdata/adiantum/mkimages.sh decrypts aes-xts-plain64 and Adiantum
// volumes with 4096-byte sectors in a VM, both ways.
func TestLargeSectorIVs(t *testing.T) {
	for _, ss := range []int{512, 4096} {
		p, dev := newImage(t, 17<<20)
		if _, err := Create(context.Background(), dev, CreateOptions{KDF: fastKDF("pbkdf2"), Quick: true, SectorSize: ss}, pw("k")); err != nil {
			t.Fatal(err)
		}
		v, err := openPath(t, p, pw("k"), volume.Options{})
		if err != nil {
			t.Fatal(err)
		}
		plain := make([]byte, 3*4096)
		rand.Read(plain)
		if _, err := v.WriteAt(plain, 8192); err != nil {
			t.Fatal(err)
		}
		key := v.MasterKey()
		off := v.Info().DataOffset
		v.Close()
		for i := 0; i < len(plain)/ss; i++ {
			sectorNo := uint64(8192/ss+i) * uint64(ss/512)
			raw := make([]byte, ss)
			dev.ReadAt(raw, off+8192+int64(i*ss))
			x, err := xts.NewCipher(aes.NewCipher, key)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, ss)
			x.Decrypt(out, raw, sectorNo)
			if !bytes.Equal(out, plain[i*ss:(i+1)*ss]) {
				t.Fatalf("sector size %d: sector %d does not decrypt with IV %d", ss, i, sectorNo)
			}
		}
	}
}

// TestCalibration benchmarks short targets: the parameters respect
// cryptsetup's minimums and the memory cap, and a volume made with them
// opens (here and with cryptsetup). Time itself is not asserted.
func TestCalibration(t *testing.T) {
	o, err := KDFOptions{PBKDF: "argon2id", IterTime: 300 * time.Millisecond, MemoryKiB: 64 << 10}.resolved(2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.params(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	if p.Iterations < minArgon2Time || p.MemoryKiB > 64<<10 || p.MemoryKiB < minArgon2Memory || p.Parallelism != uint32(o.Parallel) {
		t.Fatalf("argon2 parameters %+v", p)
	}
	n, err := calibratePBKDF2(context.Background(), "sha256", 64, 100*time.Millisecond)
	if err != nil || n < minPBKDF2Iterations {
		t.Fatalf("PBKDF2 iterations %d, %v", n, err)
	}
	path, dev := newImage(t, 20<<20)
	if _, err := Create(context.Background(), dev, CreateOptions{Quick: true, KDF: KDFOptions{PBKDF: "pbkdf2", IterTime: 100 * time.Millisecond}}, pw("cal")); err != nil {
		t.Fatal(err)
	}
	if out, ok := cryptsetup(t, "cal", "open", "--test-passphrase", "--key-file", "-", path); !ok {
		t.Fatalf("cryptsetup: %s", out)
	}
	if _, err := (KDFOptions{PBKDF: "argon2id"}).resolved(1); err == nil || !strings.Contains(err.Error(), "LUKS1") {
		t.Fatalf("argon2 on LUKS1 accepted: %v", err)
	}
}

func BenchmarkAFMerge(b *testing.B) {
	h := hashes.MustLookup("sha256")
	key := make([]byte, 64)
	material := make([]byte, afSize(len(key), luks1Stripes))
	rand.Read(material)
	b.SetBytes(int64(len(material)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		afMerge(key, material, luks1Stripes, h)
	}
}

// BenchmarkVolumeRead reads a LUKS2 aes-xts-plain64 volume through the
// generic Volume (the hot path belongs to package sector; this shows the
// driver adds nothing to it).
func BenchmarkVolumeRead(b *testing.B) {
	p, dev := newImage(b, 32<<20)
	if _, err := Create(context.Background(), dev, CreateOptions{KDF: fastKDF("pbkdf2"), Quick: true}, pw("b")); err != nil {
		b.Fatal(err)
	}
	v, err := openPath(b, p, pw("b"), volume.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	buf := make([]byte, 4<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		v.ReadAt(buf, int64(i%4)*int64(len(buf)))
	}
}
