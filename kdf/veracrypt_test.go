package kdf

import (
	"bytes"
	"context"
	"crypto/aes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestVeraCryptIterations checks the table of VeraCrypt's
// get_pkcs5_iteration_count (Pkcs5.c) and cryptsetup's tcrypt_kdf.
func TestVeraCryptIterations(t *testing.T) {
	for _, c := range []struct {
		prf    string
		pim    int
		system bool
		want   int
	}{
		{"SHA-512", 0, false, 500000}, {"SHA-512", 1, false, 16000}, {"SHA-512", 485, false, 500000},
		{"SHA-512", 0, true, 500000}, {"SHA-512", 98, true, 113000},
		{"Whirlpool", 0, false, 500000}, {"whirlpool", 10, false, 25000}, {"Whirlpool", 0, true, 500000},
		{"SHA-256", 0, false, 500000}, {"sha256", 1234, false, 1249000},
		{"SHA-256", 0, true, 200000}, {"SHA-256", 98, true, 200704},
		{"BLAKE2s-256", 0, false, 500000}, {"blake2s", 0, true, 200000}, {"BLAKE2s-256", 5, true, 10240},
		{"Streebog", 0, false, 500000}, {"stribog512", 7, false, 22000}, {"Streebog", 0, true, 200000},
		{"RIPEMD-160", 0, false, 655331}, {"ripemd160", 0, true, 327661},
		{"RIPEMD-160", 3, false, 18000}, {"RIPEMD-160", 3, true, 6144},
	} {
		got, err := VeraCryptIterations(c.prf, c.pim, c.system)
		if err != nil || got != c.want {
			t.Errorf("VeraCryptIterations(%s, pim %d, system %v) = %d, %v; want %d", c.prf, c.pim, c.system, got, err, c.want)
		}
	}
	if _, err := VeraCryptIterations("SHA-1", 0, false); err == nil {
		t.Error("SHA-1 accepted as a VeraCrypt PRF")
	}
	if _, err := VeraCryptIterations("SHA-512", -1, false); err == nil {
		t.Error("negative PIM accepted")
	}
}

func TestTrueCryptIterations(t *testing.T) {
	for _, c := range []struct {
		prf    string
		system bool
		want   int
	}{
		{"RIPEMD-160", false, 2000}, {"RIPEMD-160", true, 1000},
		{"SHA-512", false, 1000}, {"Whirlpool", false, 1000}, {"SHA-1", false, 2000},
	} {
		got, err := TrueCryptIterations(c.prf, c.system)
		if err != nil || got != c.want {
			t.Errorf("TrueCryptIterations(%s, %v) = %d, %v; want %d", c.prf, c.system, got, err, c.want)
		}
	}
	if _, err := TrueCryptIterations("SHA-256", false); err == nil {
		t.Error("SHA-256 accepted as a TrueCrypt PRF")
	}
}

// TestVeraCryptArgon2 checks get_argon2_params at the points its comment
// and cryptsetup's table give: PIM 0 = PIM 12 = 416 MiB (425,984 KiB) and 6
// passes; PIM 31 = 1 GiB, 13 passes; PIM 32 = 1 GiB, 14 passes.
func TestVeraCryptArgon2(t *testing.T) {
	for _, c := range []struct {
		pim       int
		passes    uint32
		memoryKiB uint32
	}{
		{0, 6, 425984}, {12, 6, 425984}, {1, 3, 65536}, {8, 5, 288 << 10},
		{31, 13, 1 << 20}, {32, 14, 1 << 20}, {33, 15, 1 << 20},
	} {
		passes, mem := VeraCryptArgon2(c.pim)
		if passes != c.passes || mem != c.memoryKiB {
			t.Errorf("PIM %d: %d passes, %d KiB; want %d, %d", c.pim, passes, mem, c.passes, c.memoryKiB)
		}
	}
	p, err := VeraCryptParams(Argon2idPRF, 0, false)
	if err != nil || p != (Params{Kind: KindArgon2id, Iterations: 6, MemoryKiB: 425984, Parallelism: 1}) {
		t.Errorf("VeraCryptParams(Argon2id, 0) = %+v, %v", p, err)
	}
	if _, err := VeraCryptParams(Argon2idPRF, 0, true); err == nil {
		t.Error("Argon2id accepted for system encryption")
	}
}

func TestPRFOrder(t *testing.T) {
	want := []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "Argon2id"}
	if got := VeraCryptPRFs(false); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("VeraCryptPRFs = %v", got)
	}
	if got := VeraCryptPRFs(true); strings.Join(got, ",") != strings.Join(want[:6], ",") {
		t.Errorf("VeraCryptPRFs(system) = %v", got)
	}
	if got := TrueCryptPRFs(); strings.Join(got, ",") != "RIPEMD-160,SHA-512,Whirlpool,SHA-1" {
		t.Errorf("TrueCryptPRFs = %v", got)
	}
	for _, prf := range append(VeraCryptPRFs(false), TrueCryptPRFs()...) {
		if prf == Argon2idPRF {
			continue
		}
		if _, err := hashes.Lookup(prf); err != nil {
			t.Error(err)
		}
	}
}

// decryptHeaderAESXTS decrypts bytes 64..511 of a TrueCrypt/VeraCrypt
// header with AES-256-XTS keyed by the first 64 bytes of the derived key
// (data unit 0), enough to see the "TRUE"/"VERA" magic.
func decryptHeaderAESXTS(t *testing.T, key, hdr []byte) []byte {
	t.Helper()
	c1, err := aes.NewCipher(key[:32])
	if err != nil {
		t.Fatal(err)
	}
	c2, err := aes.NewCipher(key[32:64])
	if err != nil {
		t.Fatal(err)
	}
	var tweak [16]byte
	c2.Encrypt(tweak[:], tweak[:]) // data unit number 0
	out := make([]byte, 448)
	for off := 0; off < 448; off += 16 {
		var b [16]byte
		for i := range b {
			b[i] = hdr[64+off+i] ^ tweak[i]
		}
		c1.Decrypt(b[:], b[:])
		for i := range b {
			out[off+i] = b[i] ^ tweak[i]
		}
		// tweak *= x in GF(2^128), little-endian
		lo, hi := binary.LittleEndian.Uint64(tweak[:8]), binary.LittleEndian.Uint64(tweak[8:])
		carry := hi >> 63
		hi = hi<<1 | lo>>63
		lo = lo<<1 ^ carry*0x87
		binary.LittleEndian.PutUint64(tweak[:8], lo)
		binary.LittleEndian.PutUint64(tweak[8:], hi)
	}
	return out
}

// TestCorpusVolumes derives the header key of real TrueCrypt and VeraCrypt
// volumes from cryptsetup's test images with the PRF and the iteration
// rules above, and checks that it decrypts the header (the AES-XTS ones,
// which need nothing but the standard library). This is the end-to-end
// proof of the PRFs, of PBKDF2 and of the PIM/Argon2 formulas, including
// the two Argon2id PIM images (8 and 33).
func TestCorpusVolumes(t *testing.T) {
	dir := filepath.Join(testdata.Unpack(t, "tcrypt-images.tar.xz"), "tcrypt-images")
	for _, c := range []struct {
		file      string
		veracrypt bool
		system    bool
		prf       string
		password  string
		pim       int
		heavy     bool // seconds of work: skipped with -short
		slow      bool // tens of seconds: only with -tags slow
	}{
		{file: "tc_3-ripemd160-xts-aes", prf: "RIPEMD-160"},
		{file: "tc_4-sha512-xts-aes", prf: "SHA-512"},
		{file: "tc_5-ripemd160-xts-aes", prf: "RIPEMD-160"},
		{file: "tc_5-whirlpool-xts-aes", prf: "Whirlpool"},
		{file: "vc_1-sha512-xts-aes", veracrypt: true, prf: "SHA-512"},
		{file: "vc_1-sha256-xts-aes", veracrypt: true, prf: "SHA-256"},
		{file: "vc_1-whirlpool-xts-aes", veracrypt: true, prf: "Whirlpool", heavy: true},
		{file: "vc_1-blake2s-xts-aes", veracrypt: true, prf: "BLAKE2s-256", heavy: true},
		{file: "vc_1-ripemd160-xts-aes", veracrypt: true, prf: "RIPEMD-160", heavy: true},
		{file: "vcpim_1_1234-sha256-xts-aes", veracrypt: true, prf: "SHA-256", password: strings.Repeat("c", 20), pim: 1234, heavy: true},
		{file: "vc_1-argon2id-xts-aes", veracrypt: true, prf: Argon2idPRF, heavy: true},
		{file: "vcpim_1_8-argon2id-xts-aes", veracrypt: true, prf: Argon2idPRF, password: strings.Repeat("c", 20), pim: 8, heavy: true},
		{file: "vcpim_1_33-argon2id-xts-aes", veracrypt: true, prf: Argon2idPRF, password: strings.Repeat("c", 20), pim: 33, heavy: true, slow: true},
		{file: "sys_vc_1_mbr_full-sha256-xts-aes", veracrypt: true, system: true, prf: "SHA-256"},
		{file: "sys_vc_1_gpt_part-sha512-xts-aes", veracrypt: true, system: true, prf: "SHA-512"},
	} {
		t.Run(c.file, func(t *testing.T) {
			if c.heavy && testing.Short() {
				t.Skip("seconds of key derivation; run without -short")
			}
			if c.slow && !slowTests {
				t.Skip("1 GiB x 15 passes of Argon2id; run with -tags slow")
			}
			f, err := os.Open(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			hdr := make([]byte, 512)
			offset := int64(0)
			if c.system {
				offset = 31744 // TrueCrypt/VeraCrypt system header: sector 62 of the disk
			}
			if _, err := f.ReadAt(hdr, offset); err != nil {
				t.Fatal(err)
			}
			password := c.password
			if password == "" {
				password = strings.Repeat("a", 12)
			}
			var p Params
			if c.veracrypt {
				p, err = VeraCryptParams(c.prf, c.pim, c.system)
			} else {
				p, err = TrueCryptParams(c.prf, c.system)
			}
			if err != nil {
				t.Fatal(err)
			}
			key, err := Derive(context.Background(), p, []byte(password), hdr[:64], 192)
			if err != nil {
				t.Fatal(err)
			}
			plain := decryptHeaderAESXTS(t, key, hdr)
			magic := "TRUE"
			if c.veracrypt {
				magic = "VERA"
			}
			if !bytes.Equal(plain[:4], []byte(magic)) {
				t.Fatalf("%s: header does not decrypt to %q (got %q)", p, magic, plain[:4])
			}
			t.Logf("%s: header version %s", p, strconv.Itoa(int(binary.BigEndian.Uint16(plain[4:]))))
		})
	}
}
