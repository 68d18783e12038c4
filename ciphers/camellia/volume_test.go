package camellia

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestVeraCryptVolume opens a real VeraCrypt Camellia volume (made by
// VeraCrypt, from cryptsetup's test corpus) with this package's XTS:
//
//   - the header (448 bytes, XTS data unit 0 under the PBKDF2-derived keys)
//     must show the "VERA" magic and both CRC32s, which only happens if all
//     28 blocks decrypt exactly as VeraCrypt's own Camellia would;
//   - the first data sector, decrypted with the master keys from the header
//     (data unit = byte offset / 512, as VeraCrypt numbers them), must be the
//     FAT boot sector with serial DEAD-BABE that the corpus README promises.
func TestVeraCryptVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("PBKDF2 with 500000 iterations; skipped in -short mode")
	}
	dir := testdata.Unpack(t, "tcrypt-images.tar.xz")
	img, err := os.ReadFile(filepath.Join(dir, "tcrypt-images", "vc_1-sha512-xts-camellia"))
	if err != nil {
		t.Fatal(err)
	}
	hk, err := pbkdf2.Key(sha512.New, "aaaaaaaaaaaa", img[:64], 500000, 64)
	if err != nil {
		t.Fatal(err)
	}
	forEachImplementation(t, func(t *testing.T) {
		hdr := make([]byte, 448)
		xtsDecrypt(t, hk, hdr, img[64:512], 0)
		if string(hdr[:4]) != "VERA" {
			t.Fatalf("magic %q, want VERA", hdr[:4])
		}
		if got, want := crc32.ChecksumIEEE(hdr[192:448]), binary.BigEndian.Uint32(hdr[8:12]); got != want {
			t.Fatalf("key area CRC %08x, header says %08x", got, want)
		}
		if got, want := crc32.ChecksumIEEE(hdr[:188]), binary.BigEndian.Uint32(hdr[188:192]); got != want {
			t.Fatalf("header CRC %08x, header says %08x", got, want)
		}

		off := binary.BigEndian.Uint64(hdr[44:52]) // master key scope offset
		if off%512 != 0 || off+512 > uint64(len(img)) {
			t.Fatalf("data offset %d outside the %d-byte image", off, len(img))
		}
		boot := make([]byte, 512)
		xtsDecrypt(t, hdr[192:256], boot, img[off:off+512], off/512)
		if boot[510] != 0x55 || boot[511] != 0xAA {
			t.Fatalf("first data sector has no boot signature: %x", boot[500:])
		}
		serial := []byte{0xBE, 0xBA, 0xAD, 0xDE} // DEAD-BABE, little-endian
		if !bytes.Equal(boot[39:43], serial) && !bytes.Equal(boot[67:71], serial) {
			t.Fatalf("FAT serial not DEAD-BABE: %x / %x", boot[39:43], boot[67:71])
		}
	})
}

// xtsDecrypt decrypts one XTS data unit (len(src) bytes) numbered unit with
// the 64-byte key pair key (data key, then tweak key), via DecryptXTS.
func xtsDecrypt(t *testing.T, key, dst, src []byte, unit uint64) {
	t.Helper()
	k1, err := New(key[:32])
	if err != nil {
		t.Fatal(err)
	}
	k2, err := New(key[32:64])
	if err != nil {
		t.Fatal(err)
	}
	var tweak [16]byte
	binary.LittleEndian.PutUint64(tweak[:], unit)
	k2.EncryptBlocks(tweak[:], tweak[:])
	k1.DecryptXTS(dst, src, tweak[:], len(src))
}
