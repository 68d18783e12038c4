package legacy

import (
	"crypto/pbkdf2"
	"crypto/sha1"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ripemd160"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestTrueCryptVolumeHeaders decrypts the headers of real TrueCrypt 4.x
// volumes (from cryptsetup's test corpus) made with each legacy cipher.
// TrueCrypt 4.x encrypts the 448-byte header in CBC mode with the IV taken
// from derived-key bytes 0..7, then XORs it with "whitening" bytes 8..15;
// the cipher key starts at byte 32 (layout as in cryptsetup lib/tcrypt). The
// "TRUE" magic and the CRC32 of the 256-byte key area only come out right if
// all 56 blocks decrypt exactly as TrueCrypt's cipher would, which pins down
// the byte order, most of all Blowfish-LE's.
func TestTrueCryptVolumeHeaders(t *testing.T) {
	dir := testdata.Unpack(t, "tcrypt-images.tar.xz")
	cases := []struct {
		image   string
		hash    func() hash.Hash
		keySize int
		mk      func([]byte) (block, error)
	}{
		{"tc_1-sha1-cbc-blowfish", sha1.New, 56, func(k []byte) (block, error) { return NewBlowfishLE(k) }},
		{"tc_1-ripemd160-cbc-blowfish", ripemd160.New, 56, func(k []byte) (block, error) { return NewBlowfishLE(k) }},
		{"tc_1-sha1-cbc-cast5", sha1.New, 16, func(k []byte) (block, error) { return NewCAST5(k) }},
		{"tc_1-sha1-cbc-des3_ede", sha1.New, 24, func(k []byte) (block, error) { return NewTripleDES(k) }},
	}
	for _, tc := range cases {
		t.Run(tc.image, func(t *testing.T) {
			img, err := os.ReadFile(filepath.Join(dir, "tcrypt-images", tc.image))
			if err != nil {
				t.Fatal(err)
			}
			key, err := pbkdf2.Key(tc.hash, "aaaaaaaaaaaa", img[:64], 2000, 128)
			if err != nil {
				t.Fatal(err)
			}
			c, err := tc.mk(key[32 : 32+tc.keySize])
			if err != nil {
				t.Fatal(err)
			}
			hdr := tcDecryptHeader(c, key, img[64:512])
			if string(hdr[:4]) != "TRUE" {
				t.Fatalf("magic %q, want TRUE", hdr[:4])
			}
			if got, want := crc32.ChecksumIEEE(hdr[192:448]), binary.BigEndian.Uint32(hdr[8:12]); got != want {
				t.Fatalf("key area CRC %08x, header says %08x", got, want)
			}
		})
	}

	// The same Blowfish volume must not open with big-endian Blowfish: the
	// test above would not notice a BlowfishLE that ignored its byte order.
	img, err := os.ReadFile(filepath.Join(dir, "tcrypt-images", "tc_1-sha1-cbc-blowfish"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := pbkdf2.Key(sha1.New, "aaaaaaaaaaaa", img[:64], 2000, 128)
	be, _ := NewBlowfishBE(key[32:88])
	if hdr := tcDecryptHeader(be, key, img[64:512]); string(hdr[:4]) == "TRUE" {
		t.Fatal("big-endian Blowfish also opened the TrueCrypt Blowfish volume")
	}
}

// tcDecryptHeader undoes TrueCrypt 4.x header encryption: remove the
// whitening, then CBC-decrypt with the IV from the derived key.
func tcDecryptHeader(c block, key, enc []byte) []byte {
	hdr := append([]byte(nil), enc...)
	for i := range hdr {
		hdr[i] ^= key[8+i%8]
	}
	bs := c.BlockSize()
	iv := append([]byte(nil), key[:bs]...)
	next := make([]byte, bs)
	for i := 0; i < len(hdr); i += bs {
		b := hdr[i : i+bs]
		copy(next, b)
		c.DecryptBlocks(b, b)
		for j := range b {
			b[j] ^= iv[j]
		}
		copy(iv, next)
	}
	return hdr
}
