package chacha20

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	xchacha20 "golang.org/x/crypto/chacha20"
)

type xvector struct {
	name                           string
	rounds                         int
	key, iv, plaintext, ciphertext []byte
}

// readXVectors reads testdata/xchacha.txt: Linux's testmgr.h XChaCha20 and
// XChaCha12 vectors.
func readXVectors(t *testing.T) []xvector {
	f, err := os.Open("testdata/xchacha.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []xvector
	var v xvector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "# "); ok && strings.Contains(name, "_tv_template[") {
			v.name = name
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		if name == "rounds" {
			if v.rounds, err = strconv.Atoi(val); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := hex.DecodeString(val)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "key":
			v.key = b
		case "iv":
			v.iv = b
		case "plaintext":
			v.plaintext = b
		case "ciphertext":
			v.ciphertext = b
			out = append(out, v)
			v = xvector{}
		default:
			t.Fatalf("unknown field %q", name)
		}
	}
	if len(out) != 14 {
		t.Fatalf("%d vectors, want testmgr.h's 7 XChaCha20 and 7 XChaCha12", len(out))
	}
	return out
}

// TestXChaChaVectors checks Linux's XChaCha vectors, on every kernel this
// CPU runs: Linux's 32-byte IV is the 24-byte nonce, then the 64-bit
// stream position (a block counter; every vector's fits in 32 bits).
func TestXChaChaVectors(t *testing.T) {
	vs := readXVectors(t)
	for _, k := range allKernels() {
		withKernels(t, []kernel{k}, func() {
			for _, v := range vs {
				pos := binary.LittleEndian.Uint64(v.iv[24:])
				if pos >= 1<<32 {
					t.Fatalf("%s: stream position %d beyond the 32-bit counter", v.name, pos)
				}
				c, err := NewRounds(v.key, v.iv[:24], uint32(pos), v.rounds)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(v.plaintext))
				c.XORKeyStream(got, v.plaintext)
				if !bytes.Equal(got, v.ciphertext) {
					t.Errorf("%s, %s: got %x, want %x", k.name, v.name, got, v.ciphertext)
				}
				if pos == 0 && v.rounds != 8 {
					xk, _ := NewXKey(v.key, v.rounds)
					got := bytes.Clone(v.plaintext)
					xk.XORKeyStream(got, got, (*[XNonceSize]byte)(v.iv))
					if !bytes.Equal(got, v.ciphertext) {
						t.Errorf("%s, %s: XKey got %x, want %x", k.name, v.name, got, v.ciphertext)
					}
				}
			}
		})
	}
}

// TestHChaCha20Vector is draft-irtf-cfrg-xchacha-03 section 2.2.1.
func TestHChaCha20Vector(t *testing.T) {
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	in, _ := hex.DecodeString("000000090000004a0000000031415927")
	want, _ := hex.DecodeString("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")
	got := make([]byte, 32)
	if err := HChaCha(got, key, in, 20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("HChaCha20 = %x, want %x", got, want)
	}
	ref, _ := xchacha20.HChaCha20(key, in)
	if !bytes.Equal(ref, want) {
		t.Fatal("x/crypto disagrees with the draft")
	}
}

// TestXChaCha20MatchesXCrypto: 24-byte-nonce ChaCha20 is x/crypto's
// XChaCha20 for random keys, nonces, counters and lengths.
func TestXChaCha20MatchesXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 100; iter++ {
		key := make([]byte, KeySize)
		nonce := make([]byte, XNonceSize)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		for i := range nonce {
			nonce[i] = byte(rng.Uint32())
		}
		counter := rng.Uint32() >> 4
		n := rng.IntN(9000)
		want := make([]byte, n)
		ref, _ := xchacha20.NewUnauthenticatedCipher(key, nonce)
		ref.SetCounter(counter)
		ref.XORKeyStream(want, want)
		c, err := New(key, nonce, counter)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		c.XORKeyStream(got, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("iteration %d (%d bytes): differs from x/crypto's XChaCha20", iter, n)
		}
	}
}

func TestXKeyErrorsAndAllocs(t *testing.T) {
	if _, err := NewXKey(make([]byte, 31), 12); err == nil {
		t.Error("31-byte key accepted")
	}
	if _, err := NewXKey(make([]byte, 32), 8); err == nil {
		t.Error("XChaCha8 accepted for XKey")
	}
	if _, err := NewRounds(make([]byte, 32), make([]byte, 12), 0, 10); err == nil {
		t.Error("10 rounds accepted")
	}
	k, _ := NewXKey(make([]byte, 32), 12)
	var nonce [XNonceSize]byte
	for _, n := range []int{4096, 4080, 100} {
		buf := make([]byte, n)
		if a := testing.AllocsPerRun(50, func() { k.XORKeyStream(buf, buf, &nonce) }); a != 0 {
			t.Errorf("%d bytes: %v allocations per XORKeyStream", n, a)
		}
	}
}
