package reencrypt

import (
	"bytes"
	"context"
	"crypto/aes"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// TestReencrypted4096SectorIVs is issue 29 item 12 for re-encryption: a
// LUKS2 volume with 512-byte sectors re-encrypted to aes-xts-plain64 with
// 4096-byte sectors must follow dm-crypt's convention for LUKS2 (IVs in
// 512-byte units, which volume/luks's TestDmcrypt4096SectorIVs proves on a
// kernel-made image): its data area, decrypted with x/crypto/xts (not
// cryptvol's sector code) with the key cryptvol unlocks and IV
// iv_tweak+8n for sector n (iv_tweak and the data offset as cryptsetup's
// luksDump reads them), is the plaintext read before re-encryption.
func TestReencrypted4096SectorIVs(t *testing.T) {
	p, _ := newLUKS(t, 20<<20, luksCreds, luks.CreateOptions{SectorSize: 512})
	v, err := volume.OpenWith(context.Background(), p, luksCreds, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, 256<<10)
	if _, err := v.ReadAt(plain, 0); err != nil {
		t.Fatal(err)
	}
	v.Close()
	reencrypt(t, p, luksCreds, Options{Cipher: "aes-xts-plain64", KeySize: 256, SectorSize: 4096}, 1<<20)
	_, key, err := sumOf(t, p, luksCreds, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, ok := cryptsetup(t, "", "luksDump", "--dump-json-metadata", p)
	if !ok {
		t.Fatalf("cryptsetup luksDump:\n%s", out)
	}
	var meta struct {
		Segments map[string]struct {
			Offset     string `json:"offset"`
			IVTweak    string `json:"iv_tweak"`
			Encryption string `json:"encryption"`
			SectorSize int    `json:"sector_size"`
		} `json:"segments"`
	}
	if err := json.Unmarshal([]byte(out), &meta); err != nil {
		t.Fatal(err)
	}
	seg, ok := meta.Segments["0"]
	if len(meta.Segments) != 1 || !ok || seg.SectorSize != 4096 || seg.Encryption != "aes-xts-plain64" {
		t.Fatalf("segments after re-encryption: %+v", meta.Segments)
	}
	off, err1 := strconv.ParseInt(seg.Offset, 10, 64)
	tweak, err2 := strconv.ParseUint(seg.IVTweak, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("segment %+v", seg)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	for n := uint64(0); n < uint64(len(plain))/4096; n++ {
		at := off + int64(n)*4096
		c.Decrypt(got, raw[at:at+4096], tweak+8*n)
		if !bytes.Equal(got, plain[n*4096:(n+1)*4096]) {
			t.Fatalf("sector %d (iv_tweak %d) does not decrypt with IV iv_tweak+8n", n, tweak)
		}
	}
}
