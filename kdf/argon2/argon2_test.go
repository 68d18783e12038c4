package argon2

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	xargon2 "golang.org/x/crypto/argon2"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

func TestRFC9106Vectors(t *testing.T) { forEachImpl(t, testRFC9106Vectors) }

func testRFC9106Vectors(t *testing.T) {
	f, err := os.Open("testdata/rfc9106.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	modes := map[string]Mode{"Argon2d": Argon2d, "Argon2i": Argon2i, "Argon2id": Argon2id}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "|")
		num := func(s string) uint32 {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(v)
		}
		var bin [5][]byte
		for i := range bin {
			if bin[i], err = hex.DecodeString(fs[4+i]); err != nil {
				t.Fatal(err)
			}
		}
		p := Params{Mode: modes[fs[0]], MemoryKiB: num(fs[1]), Passes: num(fs[2]), Parallelism: num(fs[3]),
			Secret: bin[2], Associated: bin[3]}
		got, err := Key(context.Background(), p, bin[0], bin[1], uint32(len(bin[4])))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bin[4]) {
			t.Errorf("%s: got %x, want %x", fs[0], got, bin[4])
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d vectors, want 3", n)
	}
}

// TestAgainstXCrypto compares Argon2i and Argon2id (no secret, no
// associated data) with golang.org/x/crypto/argon2 on random small
// parameters, including several lanes, non-multiple-of-4p memory, and tag
// lengths around the 64-byte boundary of H'.
func TestAgainstXCrypto(t *testing.T) { forEachImpl(t, testAgainstXCrypto) }

func testAgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for trial := 0; trial < 40; trial++ {
		lanes := uint8(1 + rng.IntN(5))
		mem := uint32(8*int(lanes) + rng.IntN(300))
		passes := uint32(1 + rng.IntN(4))
		tagLen := uint32(4 + rng.IntN(150))
		pw, salt := rnd(rng.IntN(70)), rnd(8+rng.IntN(40))
		p := Params{Passes: passes, MemoryKiB: mem, Parallelism: uint32(lanes)}
		p.Mode = Argon2i
		got, err := Key(context.Background(), p, pw, salt, tagLen)
		if err != nil {
			t.Fatal(err)
		}
		if want := xargon2.Key(pw, salt, passes, mem, lanes, tagLen); !bytes.Equal(got, want) {
			t.Fatalf("Argon2i t=%d m=%d p=%d len=%d: got %x, want %x", passes, mem, lanes, tagLen, got, want)
		}
		p.Mode = Argon2id
		got, err = Key(context.Background(), p, pw, salt, tagLen)
		if err != nil {
			t.Fatal(err)
		}
		if want := xargon2.IDKey(pw, salt, passes, mem, lanes, tagLen); !bytes.Equal(got, want) {
			t.Fatalf("Argon2id t=%d m=%d p=%d len=%d: got %x, want %x", passes, mem, lanes, tagLen, got, want)
		}
	}
}

// TestVeraCryptHeaderKeyLength derives a 192-byte tag (VeraCrypt's header
// key) and checks it against x/crypto, which shares H' for long outputs.
func TestVeraCryptHeaderKeyLength(t *testing.T) {
	pw, salt := []byte("aaaaaaaaaaaa"), bytes.Repeat([]byte{0x5a}, 64)
	got, err := Key(context.Background(), Params{Mode: Argon2id, Passes: 2, MemoryKiB: 1024, Parallelism: 1}, pw, salt, 192)
	if err != nil {
		t.Fatal(err)
	}
	if want := xargon2.IDKey(pw, salt, 2, 1024, 1, 192); !bytes.Equal(got, want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}
}

func TestInsufficientMemory(t *testing.T) {
	saved := availableMemory
	availableMemory = func() (uint64, string) { return 100 << 20, "test machine" }
	defer func() { availableMemory = saved }()
	_, err := Key(context.Background(), Params{Mode: Argon2id, Passes: 1, MemoryKiB: 416 << 10, Parallelism: 1}, []byte("pw"), make([]byte, 16), 32)
	if !errors.Is(err, ErrInsufficientMemory) {
		t.Fatalf("err = %v, want ErrInsufficientMemory", err)
	}
	if !strings.Contains(err.Error(), "416 MiB") || !strings.Contains(err.Error(), "100 MiB") {
		t.Errorf("error lacks the figures: %v", err)
	}
	// A request that fits still works.
	if _, err := Key(context.Background(), Params{Mode: Argon2id, Passes: 1, MemoryKiB: 1024, Parallelism: 1}, []byte("pw"), make([]byte, 16), 32); err != nil {
		t.Fatal(err)
	}
}

func TestSystemAvailableMemory(t *testing.T) {
	avail, source := systemAvailableMemory()
	if avail == 0 || source == "" {
		t.Fatalf("available %d from %q", avail, source)
	}
	t.Logf("%d MiB available (%s)", avail>>20, source)
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := Key(ctx, Params{Mode: Argon2id, Passes: 1000, MemoryKiB: 8 << 10, Parallelism: 2}, []byte("pw"), make([]byte, 16), 32)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestInvalidParams(t *testing.T) {
	ok := Params{Mode: Argon2id, Passes: 1, MemoryKiB: 64, Parallelism: 1}
	salt := make([]byte, 16)
	for name, tc := range map[string]struct {
		p      Params
		salt   []byte
		tagLen uint32
	}{
		"zero passes":  {Params{Mode: Argon2id, MemoryKiB: 64, Parallelism: 1}, salt, 32},
		"zero lanes":   {Params{Mode: Argon2id, Passes: 1, MemoryKiB: 64}, salt, 32},
		"memory < 8p":  {Params{Mode: Argon2id, Passes: 1, MemoryKiB: 15, Parallelism: 2}, salt, 32},
		"short salt":   {ok, make([]byte, 7), 32},
		"short tag":    {ok, salt, 3},
		"unknown mode": {Params{Mode: 3, Passes: 1, MemoryKiB: 64, Parallelism: 1}, salt, 32},
	} {
		if _, err := Key(context.Background(), tc.p, nil, tc.salt, tc.tagLen); !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// BenchmarkArgon2id64MiB times one Argon2id derivation over 64 MiB (one
// pass, one lane) beside golang.org/x/crypto/argon2, whose amd64 build
// uses SSE4.1 assembly. SetBytes counts the memory filled per pass;
// MB/cpu-s is the same per CPU-second (comparable on a busy machine).
func BenchmarkArgon2id64MiB(b *testing.B) {
	pw, salt := []byte("aaaaaaaaaaaa"), make([]byte, 64)
	run := func(b *testing.B, derive func()) {
		b.SetBytes(64 << 20)
		cpu0 := cputime.ProcessSeconds()
		for i := 0; i < b.N; i++ {
			derive()
		}
		if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
			b.ReportMetric(float64(64<<20)*float64(b.N)/cpu/1e6, "MB/cpu-s")
		}
	}
	b.Run("cryptvol", func(b *testing.B) {
		run(b, func() {
			if _, err := Key(context.Background(), Params{Mode: Argon2id, Passes: 1, MemoryKiB: 64 << 10, Parallelism: 1}, pw, salt, 32); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("x-crypto", func(b *testing.B) {
		run(b, func() { xargon2.IDKey(pw, salt, 1, 64<<10, 1, 32) })
	})
}

func BenchmarkProcessBlock(b *testing.B) {
	var x, y, out block
	for i := range x {
		x[i], y[i] = uint64(i)*0x9e3779b97f4a7c15, uint64(i)+1
	}
	b.SetBytes(1024)
	for i := 0; i < b.N; i++ {
		processBlock(&out, &x, &y, true)
	}
}

// TestConcurrentReservations: while one derivation holds its matrix, a
// second that would not fit beside it is refused, and it fits again once
// the first is done.
func TestConcurrentReservations(t *testing.T) {
	saved := availableMemory
	availableMemory = func() (uint64, string) { return 64<<20 + headroom, "test machine" }
	defer func() { availableMemory = saved }()
	release, err := reserveMemory(40 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reserveMemory(40 << 20); !errors.Is(err, ErrInsufficientMemory) || !strings.Contains(err.Error(), "held by other") {
		t.Fatalf("second reservation: %v", err)
	}
	release()
	r2, err := reserveMemory(40 << 20)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r2()
}
