package bitlk

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"
	mrand "math/rand"
	"testing"

	"golang.org/x/crypto/xts"
)

// The corpus checks decryption exactly (sha256 of whole volumes); these
// check encryption too, against slow references built from the standard
// library and the formulas as the paper and libbde state them.

// refCBC is AES-CBC per sector with IV = E_K(byte offset).
func refCBC(t *testing.T, key []byte, ss int, src []byte, first uint64, decrypt bool) []byte {
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(src))
	for s := 0; s*ss < len(src); s++ {
		iv := make([]byte, 16)
		binary.LittleEndian.PutUint64(iv, (first+uint64(s))*uint64(ss))
		b.Encrypt(iv, iv)
		in, o := src[s*ss:(s+1)*ss], out[s*ss:(s+1)*ss]
		if decrypt {
			cipher.NewCBCDecrypter(b, iv).CryptBlocks(o, in)
		} else {
			cipher.NewCBCEncrypter(b, iv).CryptBlocks(o, in)
		}
	}
	return out
}

// refElephantEncrypt follows Ferguson's description literally, with
// indices taken modulo n at every step.
func refElephantEncrypt(t *testing.T, cbcKey, sectorKey []byte, ss int, src []byte, first uint64) []byte {
	sk, _ := aes.NewCipher(sectorKey)
	n := ss / 4
	ra := []int{9, 0, 13, 0}
	rb := []int{0, 10, 0, 25}
	mod := func(i int) int { return ((i % n) + n) % n }
	out := make([]byte, len(src))
	for s := 0; s*ss < len(src); s++ {
		off := (first + uint64(s)) * uint64(ss)
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], off)
		binary.LittleEndian.PutUint64(key[16:], off)
		key[31] = 0x80
		sk.Encrypt(key[:16], key[:16])
		sk.Encrypt(key[16:], key[16:])
		p := append([]byte(nil), src[s*ss:(s+1)*ss]...)
		for i := range p {
			p[i] ^= key[i%32]
		}
		d := make([]uint32, n)
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
		for i := 5*n - 1; i >= 0; i-- { // A, encryption direction
			d[mod(i)] -= d[mod(i-2)] ^ bits.RotateLeft32(d[mod(i-5)], ra[i%4])
		}
		for i := 3*n - 1; i >= 0; i-- { // B, encryption direction
			d[mod(i)] -= d[mod(i+2)] ^ bits.RotateLeft32(d[mod(i+5)], rb[i%4])
		}
		for i, v := range d {
			binary.LittleEndian.PutUint32(p[4*i:], v)
		}
		copy(out[s*ss:], refCBC(t, cbcKey, ss, p, first+uint64(s), false))
	}
	return out
}

func TestModesAgainstReferences(t *testing.T) {
	rng := mrand.New(mrand.NewSource(1))
	key := make([]byte, 64)
	rng.Read(key)
	for _, ss := range []int{512, 4096} {
		for _, method := range []Method{AESXTS128, AESXTS256, AESCBC128, AESCBC256, AESCBC128Elephant, AESCBC256Elephant} {
			m, vk, err := newMode(method, key, ss)
			if err != nil {
				t.Fatal(err)
			}
			plain := make([]byte, 70*ss) // more than one Elephant chunk
			rng.Read(plain)
			first := uint64(rng.Int63n(1 << 40))
			var want []byte
			switch method {
			case AESXTS128, AESXTS256:
				c, err := xts.NewCipher(aes.NewCipher, vk)
				if err != nil {
					t.Fatal(err)
				}
				want = make([]byte, len(plain))
				for s := 0; s*ss < len(plain); s++ {
					c.Encrypt(want[s*ss:(s+1)*ss], plain[s*ss:(s+1)*ss], first+uint64(s))
				}
			case AESCBC128, AESCBC256:
				want = refCBC(t, vk, ss, plain, first, false)
			default:
				n := len(vk) / 2
				want = refElephantEncrypt(t, vk[:n], vk[n:], ss, plain, first)
			}
			orig := append([]byte(nil), plain...)
			got := make([]byte, len(plain))
			m.Encrypt(got, plain, first)
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d-byte sectors: encryption differs from the reference", method, ss)
			}
			if !bytes.Equal(plain, orig) {
				t.Errorf("%s: Encrypt changed its source", method)
			}
			back := append([]byte(nil), got...)
			m.Decrypt(back, back, first) // in place
			if !bytes.Equal(back, plain) {
				t.Errorf("%s, %d-byte sectors: decryption does not undo encryption", method, ss)
			}
			// A single sector at a time gives the same as the whole run.
			one := make([]byte, ss)
			m.Encrypt(one, plain[3*ss:4*ss], first+3)
			if !bytes.Equal(one, want[3*ss:4*ss]) {
				t.Errorf("%s: sector 3 alone differs", method)
			}
		}
	}
}

// TestElephantDiffusion: a changed bit anywhere in a sector's plaintext
// changes the first ciphertext block, which plain CBC never does.
func TestElephantDiffusion(t *testing.T) {
	key := make([]byte, 64)
	m, _, err := newMode(AESCBC128Elephant, key, 512)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 512)
	a := make([]byte, 512)
	m.Encrypt(a, p, 0)
	p[511] ^= 1
	b := make([]byte, 512)
	m.Encrypt(b, p, 0)
	if bytes.Equal(a[:16], b[:16]) {
		t.Error("the last bit did not reach the first block")
	}
}

func TestNewModeRejects(t *testing.T) {
	if _, _, err := newMode(Method(0x1234), make([]byte, 64), 512); err == nil {
		t.Error("unknown method accepted")
	}
	if _, _, err := newMode(AESXTS256, make([]byte, 32), 512); err == nil {
		t.Error("short key accepted")
	}
}
