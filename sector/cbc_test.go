package sector

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/twofish"
)

// refIV computes dm-crypt's IV for one sector from its definition in
// drivers/md/dm-crypt.c, independently of iv.go. essiv is the ESSIV cipher
// (nil for the keyless generators).
func refIV(kind string, sector uint64, ivSize int, essiv cipher.Block) []byte {
	iv := make([]byte, ivSize)
	switch kind {
	case "null":
	case "plain":
		binary.LittleEndian.PutUint32(iv, uint32(sector&0xffffffff))
	case "plain64":
		binary.LittleEndian.PutUint64(iv, sector)
	case "plain64be":
		binary.BigEndian.PutUint64(iv[ivSize-8:], sector)
	case "benbi":
		shift := map[int]uint{8: 6, 16: 5}[ivSize] // 9 - log2(block size)
		binary.BigEndian.PutUint64(iv[ivSize-8:], sector<<shift+1)
	case "essiv":
		binary.LittleEndian.PutUint64(iv, sector)
		essiv.Encrypt(iv, iv)
	default:
		panic(kind)
	}
	return iv
}

// TestCBCMatchesStdlib compares runs of sectors against crypto/cipher's CBC
// encrypter restarted per sector with the IV computed by refIV, for every IV
// generator, 16- and 8-byte block ciphers, in place and out of place.
func TestCBCMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type cipherCase struct {
		name string
		std  cipher.Block
	}
	aesKey := make([]byte, 32)
	fill(rng, aesKey)
	aes256, _ := aes.NewCipher(aesKey)
	aes128, _ := aes.NewCipher(aesKey[:16])
	tfKey := make([]byte, 32)
	fill(rng, tfKey)
	tf, _ := twofish.NewCipher(tfKey)
	desKey := make([]byte, 24)
	fill(rng, desKey)
	des3, _ := des.NewTripleDESCipher(desKey)
	cases := []cipherCase{{"AES-256", aes256}, {"AES-128", aes128}, {"Twofish", tf}, {"3DES", des3}}

	for _, cc := range cases {
		bs := cc.std.BlockSize()
		kinds := []string{"null", "plain", "plain64", "plain64be", "benbi"}
		gens := []IVGenerator{IVNull, IVPlain, IVPlain64, IVPlain64BE, IVBenbi}
		var essivRef cipher.Block
		if cc.name == "AES-256" || cc.name == "AES-128" {
			key := aesKey
			if cc.name == "AES-128" {
				key = aesKey[:16]
			}
			salt := sha256.Sum256(key)
			essivRef, _ = aes.NewCipher(salt[:])
			g, err := ESSIV(newAESBlock, sha256.New(), key)
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, "essiv")
			gens = append(gens, g)
		}
		for i, kind := range kinds {
			for _, ss := range []int{512, 4096} {
				m, err := NewCBC(stdBlock{cc.std}, gens[i], ss)
				if err != nil {
					t.Fatal(err)
				}
				for r := 0; r < 6; r++ {
					n := 1 + rng.IntN(40)
					first := rng.Uint64() >> uint(rng.IntN(64))
					if r == 0 {
						first = 1<<32 - 1 // plain wraps here
					}
					pt := make([]byte, n*ss)
					fill(rng, pt)
					want := make([]byte, len(pt))
					for s := 0; s < n; s++ {
						iv := refIV(kind, first+uint64(s), bs, essivRef)
						cipher.NewCBCEncrypter(cc.std, iv).CryptBlocks(want[s*ss:(s+1)*ss], pt[s*ss:(s+1)*ss])
					}
					got := make([]byte, len(pt))
					m.Encrypt(got, pt, first)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s cbc-%s %d: %d sectors from %d: encrypt differs", cc.name, kind, ss, n, first)
					}
					inPlace := append([]byte(nil), pt...)
					m.Encrypt(inPlace, inPlace, first)
					if !bytes.Equal(inPlace, want) {
						t.Fatalf("%s cbc-%s %d: in-place encrypt differs", cc.name, kind, ss)
					}
					dec := make([]byte, len(pt))
					m.Decrypt(dec, want, first)
					if !bytes.Equal(dec, pt) {
						t.Fatalf("%s cbc-%s %d: decrypt differs", cc.name, kind, ss)
					}
					m.Decrypt(inPlace, inPlace, first)
					if !bytes.Equal(inPlace, pt) {
						t.Fatalf("%s cbc-%s %d: in-place decrypt differs", cc.name, kind, ss)
					}
				}
			}
		}
	}
}

// TestCBCOpenSSL uses `openssl enc -aes-256-cbc -nopad` as an external
// oracle for cbc-plain64: each sector is encrypted by openssl with the
// plain64 IV of its number and compared with one run of the Mode.
func TestCBCOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed: external CBC oracle not run")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	key := make([]byte, 32)
	fill(rng, key)
	const ss, n = 512, 3
	const first uint64 = 0x1_2345_6789
	pt := make([]byte, n*ss)
	fill(rng, pt)
	m, err := NewCBC(newAES(t, key), IVPlain64, ss)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(pt))
	m.Encrypt(got, pt, first)
	dir := t.TempDir()
	for s := 0; s < n; s++ {
		iv := make([]byte, 16)
		binary.LittleEndian.PutUint64(iv, first+uint64(s))
		in := filepath.Join(dir, "in")
		if err := os.WriteFile(in, pt[s*ss:(s+1)*ss], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(openssl, "enc", "-aes-256-cbc", "-K", hex.EncodeToString(key),
			"-iv", hex.EncodeToString(iv), "-nopad", "-in", in).Output()
		if err != nil {
			t.Fatalf("openssl: %v", err)
		}
		if !bytes.Equal(out, got[s*ss:(s+1)*ss]) {
			t.Fatalf("sector %d differs from openssl enc", first+uint64(s))
		}
		if err := os.WriteFile(in, got[s*ss:(s+1)*ss], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err = exec.Command(openssl, "enc", "-d", "-aes-256-cbc", "-K", hex.EncodeToString(key),
			"-iv", hex.EncodeToString(iv), "-nopad", "-in", in).Output()
		if err != nil {
			t.Fatalf("openssl -d: %v", err)
		}
		if !bytes.Equal(out, pt[s*ss:(s+1)*ss]) {
			t.Fatalf("sector %d: openssl does not decrypt our ciphertext", first+uint64(s))
		}
	}
}

func TestECBMatchesBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	key := make([]byte, 16)
	fill(rng, key)
	ref, _ := aes.NewCipher(key)
	m, err := NewECB(newAES(t, key), 512)
	if err != nil {
		t.Fatal(err)
	}
	pt := make([]byte, 4*512)
	fill(rng, pt)
	got := make([]byte, len(pt))
	m.Encrypt(got, pt, 99)
	for i := 0; i < len(pt); i += 16 {
		var want [16]byte
		ref.Encrypt(want[:], pt[i:i+16])
		if !bytes.Equal(got[i:i+16], want[:]) {
			t.Fatalf("block %d differs", i/16)
		}
	}
	m.Decrypt(got, got, 5)
	if !bytes.Equal(got, pt) {
		t.Fatal("decrypt does not invert")
	}
}

// TestESSIVTruncatedHash checks TruncatedHash (how wp256 is made from
// Whirlpool) on SHA-512 cut to 32 bytes, used as an ESSIV hash.
func TestESSIVTruncatedHash(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	h := TruncatedHash(sha512.New(), 32)
	full := sha512.Sum512(key)
	h.Write(key)
	if got := h.Sum([]byte{0xaa}); !bytes.Equal(got, append([]byte{0xaa}, full[:32]...)) || h.Size() != 32 {
		t.Fatalf("truncated sum %x", got)
	}
	g, err := ESSIV(newAESBlock, TruncatedHash(sha512.New(), 32), key)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := aes.NewCipher(full[:32])
	got := make([]byte, 32)
	g.IVs(got, 16, 1<<40)
	for i := 0; i < 2; i++ {
		if want := refIV("essiv", 1<<40+uint64(i), 16, ref); !bytes.Equal(got[16*i:16*i+16], want) {
			t.Fatalf("IV %d: got %x want %x", i, got[16*i:16*i+16], want)
		}
	}
	// SHA-512's 64-byte digest is no AES key: ESSIV must say so.
	if _, err := ESSIV(newAESBlock, sha512.New(), key); err == nil {
		t.Error("ESSIV accepted a 64-byte AES key")
	}
	// An ESSIV generator over 16-byte blocks cannot serve 8-byte CBC.
	if _, err := NewCBC(stdBlock{mustDES3(t)}, g, 512); err == nil {
		t.Error("16-byte ESSIV accepted for an 8-byte block cipher")
	}
}

func TestLookupIV(t *testing.T) {
	for _, g := range []StandardIV{IVNull, IVPlain, IVPlain64, IVPlain64BE, IVBenbi} {
		got, err := LookupIV(g.String())
		if err != nil || got != g {
			t.Errorf("LookupIV(%q) = %v, %v", g.String(), got, err)
		}
	}
	for _, bad := range []string{"essiv:sha256", "lmk", "tcw", "random", ""} {
		if _, err := LookupIV(bad); err == nil {
			t.Errorf("LookupIV(%q) succeeded", bad)
		}
	}
}
