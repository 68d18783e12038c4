package luks

import (
	"bytes"
	"context"
	"crypto/aes"
	"fmt"
	"os"
	"testing"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/volume"
)

// The IV of a LUKS2 data sector larger than 512 bytes. dm-crypt counts IVs
// in 512-byte units unless the mapping has iv_large_sectors, and
// cryptsetup sets that flag only for BitLocker and, when asked
// (--iv-large-sectors), for plain mappings, never for LUKS2: 4096-byte
// sector n of a LUKS2 segment has the IV of 512-byte sector 8n (plus
// iv_tweak). These tests prove it with x/crypto/xts, not cryptvol's own
// sector code, as the decryptor.

// xtsSector decrypts one sector of an aes-xts-plain64 data area with the
// tweak iv (the sector's number in the units the mapping counts IVs in).
func xtsSector(t *testing.T, key, ct []byte, iv uint64) []byte {
	t.Helper()
	c, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		t.Fatal(err)
	}
	pt := make([]byte, len(ct))
	c.Decrypt(pt, ct, iv)
	return pt
}

// TestDmcrypt4096SectorIVs is issue 29 item 12. testdata/adiantum's
// fwd-luks2-aes-xts-4096.img was formatted by cryptsetup 2.6.1 with
// --sector-size 4096 and written through Linux 6.1's dm-crypt in a VM
// (mkimages.sh): 16 KiB of known plaintext at data-area offsets 0 and 1536
// KiB, i.e. 4096-byte sectors 0 to 3 and 384 to 387. With the volume key
// cryptvol unlocks, an independent XTS decryption of each of those sectors
// under the tweak 8n gives the plaintext byte for byte, and under the
// tweak n (iv_large_sectors) it does not (sector 0 excepted, whose tweak
// is 0 either way): the image tells the two conventions apart, and dm-crypt
// used 512-byte units. cryptvol's own reading of the same sectors is the
// plaintext too (TestDmcryptImages hashes the whole data area against
// what dm-crypt read).
func TestDmcrypt4096SectorIVs(t *testing.T) {
	p := unxz(t, "testdata/adiantum/fwd-luks2-aes-xts-4096.img.xz")
	v, err := openPath(t, p, pw("adiantum from the kernel"), volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	key, in := v.MasterKey(), v.Info()
	v.Close()
	if in.SectorSize != 4096 || in.Encryption != "aes-xts-plain64" {
		t.Fatalf("info %+v", in)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var pattern bytes.Buffer
	for i := 0; i < 512; i++ {
		fmt.Fprintf(&pattern, "dm-crypt adiantum %013d\n", i)
	}
	for _, start := range []uint64{0, 384} {
		for i := uint64(0); i < 4; i++ {
			n := start + i
			off := in.DataOffset + int64(n)*4096
			ct := raw[off : off+4096]
			want := pattern.Bytes()[i*4096 : (i+1)*4096]
			if got := xtsSector(t, key, ct, 8*n); !bytes.Equal(got, want) {
				t.Fatalf("sector %d with IV 8n = %d is not what dm-crypt was given", n, 8*n)
			}
			if n == 0 {
				continue
			}
			if got := xtsSector(t, key, ct, n); bytes.Equal(got, want) {
				t.Fatalf("sector %d also decrypts with IV n: the image does not tell the conventions apart", n)
			}
		}
	}
}

// TestCreated4096SectorIVs: a LUKS2 volume cryptvol creates with
// 4096-byte sectors follows the convention the kernel's image proves:
// data written through cryptvol decrypts, with x/crypto/xts and IVs in
// 512-byte units (plus the segment's iv_tweak), to what was written, so
// dm-crypt reads it as cryptsetup maps LUKS2. (Re-encryption to 4096-byte
// sectors: TestReencrypted4096SectorIVs in volume/reencrypt.)
func TestCreated4096SectorIVs(t *testing.T) {
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i*7 + i/4096)
	}
	p, dev := newImage(t, 20<<20)
	o := CreateOptions{KDF: fastKDF("pbkdf2"), KeySize: 256, SectorSize: 4096, Quick: true}
	if _, err := Create(context.Background(), dev, o, pw("made")); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	v, err := openPath(t, p, pw("made"), volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	key, in := v.MasterKey(), v.Info()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if in.SectorSize != 4096 || in.Encryption != "aes-xts-plain64" {
		t.Fatalf("info %+v", in)
	}
	d := openDev(t, p)
	l, err := load(d, "luks")
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	seg, err := l.v2.dataSegment()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for n := uint64(0); n < uint64(len(data))/4096; n++ {
		off := in.DataOffset + int64(n)*4096
		got := xtsSector(t, key, raw[off:off+4096], uint64(seg.IVTweak)+8*n)
		if !bytes.Equal(got, data[n*4096:(n+1)*4096]) {
			t.Fatalf("sector %d (iv_tweak %d) does not decrypt with IV iv_tweak+8n", n, seg.IVTweak)
		}
	}
}
