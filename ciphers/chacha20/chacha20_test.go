package chacha20

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	xchacha20 "golang.org/x/crypto/chacha20"
)

type vector struct {
	key, nonce, plaintext, ciphertext []byte
	counter                           uint32
}

func readVectors(t *testing.T) []vector {
	f, err := os.Open("testdata/rfc8439.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	var v vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		var b []byte
		switch {
		case name == "counter":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			v.counter = uint32(n)
			continue
		case strings.HasPrefix(val, "text:"):
			b = []byte(strings.TrimPrefix(val, "text:"))
		default:
			if b, err = hex.DecodeString(val); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		switch name {
		case "key":
			v.key = b
		case "nonce":
			v.nonce = b
		case "plaintext":
			v.plaintext = b
		case "ciphertext":
			v.ciphertext = b
			out = append(out, v)
			v = vector{}
		}
	}
	if len(out) == 0 {
		t.Fatal("no vectors")
	}
	return out
}

func TestRFC8439Vectors(t *testing.T) {
	t.Logf("implementation: %s", Implementation())
	for i, v := range readVectors(t) {
		c, err := New(v.key, v.nonce, v.counter)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(v.plaintext))
		c.XORKeyStream(got, v.plaintext)
		if !bytes.Equal(got, v.ciphertext) {
			t.Errorf("vector %d: got %x, want %x", i, got, v.ciphertext)
		}
	}
}

// TestMatchesXCrypto compares the key stream with x/crypto's for random
// keys, nonces, counters and lengths, fed in random pieces (the kernel's
// 1 KiB lumps, the buffered tail, in-place and separate buffers).
func TestMatchesXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		key := make([]byte, KeySize)
		nonce := make([]byte, NonceSize)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		for i := range nonce {
			nonce[i] = byte(rng.Uint32())
		}
		counter := rng.Uint32() >> 8 // far from the end of the counter
		n := rng.IntN(6000)
		if iter%10 == 0 {
			n = 64<<10 + rng.IntN(3000)
		}
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		want := make([]byte, n)
		ref, _ := xchacha20.NewUnauthenticatedCipher(key, nonce)
		ref.SetCounter(counter)
		ref.XORKeyStream(want, src)

		c, err := New(key, nonce, counter)
		if err != nil {
			t.Fatal(err)
		}
		got := bytes.Clone(src)
		inPlace := iter%2 == 0
		out := got
		if !inPlace {
			out = make([]byte, n)
		}
		for at := 0; at < n; {
			step := min(n-at, 1+rng.IntN(2500))
			c.XORKeyStream(out[at:at+step], got[at:at+step])
			at += step
		}
		if !bytes.Equal(out, want) {
			i := 0
			for out[i] == want[i] {
				i++
			}
			t.Fatalf("iteration %d (counter %d, %d bytes, in place %v): first difference at byte %d", iter, counter, n, inPlace, i)
		}
	}
}

// TestCounterEnd runs a stream up to the counter's last block, which must
// match x/crypto, and checks that one more byte panics as x/crypto's does
// instead of wrapping round to block 0.
func TestCounterEnd(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	nonce := bytes.Repeat([]byte{9}, NonceSize)
	const start = 1<<32 - 37 // 37 blocks left: two lumps plus a part
	c, err := New(key, nonce, start)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := xchacha20.NewUnauthenticatedCipher(key, nonce)
	ref.SetCounter(start)
	want := make([]byte, 37*BlockSize)
	ref.XORKeyStream(want, want)
	got := make([]byte, len(want))
	c.XORKeyStream(got[:100], got[:100])
	c.XORKeyStream(got[100:], got[100:])
	if !bytes.Equal(got, want) {
		t.Fatal("key stream up to the last block differs from x/crypto's")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic past block 2^32-1")
		}
	}()
	c.XORKeyStream(make([]byte, 1), make([]byte, 1))
}

func TestBadSizes(t *testing.T) {
	if _, err := New(make([]byte, 31), make([]byte, NonceSize), 0); err == nil {
		t.Error("31-byte key accepted")
	}
	if _, err := New(make([]byte, KeySize), make([]byte, 8), 0); err == nil {
		t.Error("8-byte nonce accepted")
	}
}

// TestAllocs: a stream in steady state makes no allocation.
func TestAllocs(t *testing.T) {
	c, _ := New(make([]byte, KeySize), make([]byte, NonceSize), 0)
	buf := make([]byte, 5000)
	if n := testing.AllocsPerRun(100, func() { c.XORKeyStream(buf, buf) }); n != 0 {
		t.Errorf("%v allocations per XORKeyStream", n)
	}
}
