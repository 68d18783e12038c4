package opensslenc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// patternReader yields size bytes of a fixed random pattern whose period
// (1 MiB + 13) is not a multiple of any buffer size, without holding more
// than the pattern in memory.
type patternReader struct {
	pattern []byte
	off     int64
	size    int64
}

func newPattern(size int64) *patternReader {
	return &patternReader{pattern: randomBytes(1<<20+13, 9), size: size}
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	if rem := p.size - p.off; int64(len(b)) > rem {
		b = b[:rem]
	}
	n := 0
	for n < len(b) {
		i := int((p.off + int64(n)) % int64(len(p.pattern)))
		n += copy(b[n:], p.pattern[i:])
	}
	p.off += int64(n)
	return n, nil
}

// patternChecker compares what is written to it with the pattern.
type patternChecker struct {
	want *patternReader
	buf  []byte
	n    int64
	bad  bool
}

func (c *patternChecker) Write(b []byte) (int, error) {
	if len(c.buf) < len(b) {
		c.buf = make([]byte, len(b))
	}
	k, _ := io.ReadFull(c.want, c.buf[:len(b)])
	if k != len(b) || !bytes.Equal(c.buf[:k], b) {
		c.bad = true
	}
	c.n += int64(len(b))
	return len(b), nil
}

// TestStreamingMemory encrypts 1 GiB (64 MiB with -short) from a generator
// and decrypts it again through a pipe, both at once, and checks that the
// plaintext comes back, that the live heap (sampled every few
// milliseconds) stays under 64 MiB, and that the run allocates only a few
// fixed buffers however large the data.
func TestStreamingMemory(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	c, _ := LookupCipher("aes-256-cbc")
	p := Params{Cipher: c, Password: []byte("memory"), PBKDF2: true, Iterations: 1}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	ctx := context.Background()
	pr, pw := io.Pipe()
	encErr := make(chan error, 1)
	go func() {
		op, err := NewEncryption(ctx, p, pw, newPattern(size))
		if err == nil {
			err = op.Run(ctx)
		}
		pw.CloseWithError(err)
		encErr <- err
	}()
	check := &patternChecker{want: newPattern(size)}
	op, err := NewDecryption(ctx, p, check, pr)
	if err == nil {
		err = op.Run(ctx)
	}
	close(stop)
	sampler.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-encErr; err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if check.bad || check.n != size {
		t.Fatalf("plaintext differs (%d of %d bytes)", check.n, size)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB through: peak heap %.1f MiB, allocated %.1f MiB in all", size>>20,
		float64(peak.Load())/(1<<20), float64(allocated)/(1<<20))
	if peak.Load() > 64<<20 {
		t.Errorf("peak heap %d bytes, want < 64 MiB", peak.Load())
	}
	// Buffers are fixed: Run's two chunks per direction, the modes'
	// scratch, the two patterns and the checker's buffer.
	if allocated > 16<<20 {
		t.Errorf("allocated %d bytes for %d bytes of data: buffers grow with the input", allocated, size)
	}
}

// TestNoAllocations checks that the modes allocate nothing per call and
// that a whole Run allocates the same for 1 MiB as for 16 MiB.
func TestNoAllocations(t *testing.T) {
	for _, c := range Ciphers() {
		for _, decrypt := range []bool{false, true} {
			tr, err := c.newTransform(make([]byte, c.KeySize), make([]byte, c.IVSize), decrypt)
			if err != nil {
				t.Fatal(err)
			}
			src, dst := make([]byte, 64<<10), make([]byte, 64<<10)
			if n := testing.AllocsPerRun(5, func() { tr.crypt(dst, src) }); n != 0 {
				t.Errorf("%s decrypt=%v: %v allocations per call", c.Name, decrypt, n)
			}
		}
	}
	c, _ := LookupCipher("aes-128-ctr")
	allocs := func(size int64) float64 {
		return testing.AllocsPerRun(3, func() {
			op, err := NewEncryption(context.Background(), Params{Cipher: c, Key: make([]byte, 16), IV: make([]byte, 16)},
				io.Discard, io.LimitReader(zeroReader{}, size))
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if small, large := allocs(1<<20), allocs(16<<20); small != large {
		t.Errorf("Run allocates %v times for 1 MiB, %v for 16 MiB", small, large)
	} else {
		t.Log(fmt.Sprintf("Run: %v allocations whatever the size", small))
	}
}

type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) { clear(b); return len(b), nil }
