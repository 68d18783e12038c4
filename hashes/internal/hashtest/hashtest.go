// Package hashtest holds test helpers shared by the hash packages: a parser
// for the published test vectors kept in each package's testdata directory,
// an oracle that asks the botan CLI for a digest, and checks of the
// hash.Hash contract (streaming, Sum without side effects, Reset).
package hashtest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"hash"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

// Vector is one message/digest pair from a vector file.
type Vector struct {
	Line    int
	Message []byte
	Digest  []byte
}

// ReadVectors parses a vector file. Each non-blank line that does not start
// with '#' has three '|'-separated fields: a repeat count, the text to
// repeat (taken literally, or as hex when it starts with "hex:") and the
// expected digest in hex.
func ReadVectors(t testing.TB, path string) []Vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Vector
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			t.Fatalf("%s:%d: want count|text|digest", path, n)
		}
		count, err := strconv.Atoi(fields[0])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		unit := []byte(fields[1])
		if s, ok := strings.CutPrefix(fields[1], "hex:"); ok {
			if unit, err = hex.DecodeString(s); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
		}
		digest, err := hex.DecodeString(strings.TrimSpace(fields[2]))
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, Vector{Line: n, Message: bytes.Repeat(unit, count), Digest: digest})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return out
}

// Botan returns the digest botan computes for data with the named
// algorithm, or skips the test when the botan CLI is not installed.
func Botan(t testing.TB, algo string, data []byte) []byte {
	t.Helper()
	bin, err := exec.LookPath("botan")
	if err != nil {
		t.Skip("botan CLI not installed; differential check skipped")
	}
	p := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "hash", "--algo="+algo, p).Output()
	if err != nil {
		t.Fatalf("botan hash --algo=%s: %v", algo, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		t.Fatalf("botan hash: empty output")
	}
	d, err := hex.DecodeString(fields[0])
	if err != nil {
		t.Fatalf("botan hash: %v in %q", err, out)
	}
	return d
}

// CheckStreaming verifies the hash.Hash contract on messages of many
// lengths: writing in random chunks gives the same digest as one Write,
// Sum leaves the state usable (a second Sum and further writes agree) and
// Reset starts over.
func CheckStreaming(t *testing.T, newHash func() hash.Hash) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	msg := make([]byte, 700)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	for n := 0; n <= len(msg); n += 1 + n/7 {
		whole := newHash()
		whole.Write(msg[:n])
		want := whole.Sum(nil)
		if again := whole.Sum([]byte{0xAA}); !bytes.Equal(again[1:], want) || again[0] != 0xAA {
			t.Fatalf("len %d: second Sum differs or clobbers prefix", n)
		}
		chunked := newHash()
		for p := msg[:n]; len(p) > 0; {
			c := 1 + rng.IntN(90)
			if c > len(p) {
				c = len(p)
			}
			chunked.Write(p[:c])
			if rng.IntN(3) == 0 {
				chunked.Sum(nil) // must not disturb the running state
			}
			p = p[c:]
		}
		if got := chunked.Sum(nil); !bytes.Equal(got, want) {
			t.Fatalf("len %d: chunked %x, whole %x", n, got, want)
		}
		whole.Reset()
		whole.Write(msg[:n])
		if got := whole.Sum(nil); !bytes.Equal(got, want) {
			t.Fatalf("len %d: after Reset %x, want %x", n, got, want)
		}
		if len(want) != whole.Size() {
			t.Fatalf("Sum length %d, Size %d", len(want), whole.Size())
		}
	}
}

// RandomMessages returns reproducible pseudo-random messages whose lengths
// straddle the block boundaries of a 64- or 128-byte block hash.
func RandomMessages() [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var out [][]byte
	for _, n := range []int{0, 1, 31, 32, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 191, 192, 255, 256, 1000, 4097} {
		m := make([]byte, n)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		out = append(out, m)
	}
	return out
}

// BenchHash runs a throughput benchmark of h on n-byte messages, reporting
// MB/s (wall clock, through SetBytes) and MB/cpu-s (process CPU time).
func BenchHash(b *testing.B, h hash.Hash, n int) {
	buf := make([]byte, n)
	out := make([]byte, 0, h.Size())
	b.SetBytes(int64(n))
	cpu0 := cputime.ProcessSeconds()
	for i := 0; i < b.N; i++ {
		h.Reset()
		h.Write(buf)
		out = h.Sum(out[:0])
	}
	if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu/1e6, "MB/cpu-s")
	}
}

// BenchVsBotan hashes the same 16 MiB with h and with `botan hash
// --algo=algo` alternately, b.N times each, checks that the digests agree,
// and reports each side's best throughput per CPU second (botan's less its
// start-up, the best of three runs on an empty file) and ours/botan. CPU
// time, not wall time, so that a busy machine distorts the ratio less.
func BenchVsBotan(b *testing.B, algo string, h hash.Hash) {
	bin, err := exec.LookPath("botan")
	if err != nil {
		b.Skip("botan CLI not installed (Debian package botan)")
	}
	const n = 16 << 20
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	dir := b.TempDir()
	empty, full := filepath.Join(dir, "empty"), filepath.Join(dir, "data")
	if os.WriteFile(empty, nil, 0o600) != nil || os.WriteFile(full, data, 0o600) != nil {
		b.Fatal("cannot write the message files")
	}
	run := func(p string) (string, float64) {
		cmd := exec.Command(bin, "hash", "--algo="+algo, p)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("botan hash --algo=%s: %v", algo, err)
		}
		f := strings.Fields(string(out))
		if len(f) == 0 {
			b.Fatalf("botan hash: empty output")
		}
		return strings.ToLower(f[0]), (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	startup := math.Inf(1)
	for range 3 {
		_, t := run(empty)
		startup = min(startup, t)
	}
	ours, theirs := math.Inf(1), math.Inf(1)
	for range b.N {
		want, t := run(full)
		theirs = min(theirs, t-startup)
		c0 := cputime.ProcessSeconds()
		h.Reset()
		h.Write(data)
		got := hex.EncodeToString(h.Sum(nil))
		ours = min(ours, cputime.ProcessSeconds()-c0)
		if got != want {
			b.Fatalf("digest %s, botan %s", got, want)
		}
	}
	b.ReportMetric(n/ours/1e6, "MB/cpu-s")
	b.ReportMetric(n/theirs/1e6, "botan-MB/cpu-s")
	b.ReportMetric(theirs/ours, "x-botan")
	b.ReportMetric(0, "ns/op")
}
