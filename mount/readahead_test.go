package mount

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// countingFile is a file in memory that counts its reads and can change
// under the reader (as writes through other handles do).
type countingFile struct {
	mu    sync.Mutex
	data  []byte
	reads atomic.Int64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func newTestReadAhead(f *countingFile, gen *atomic.Uint64) *readAhead {
	return &readAhead{r: f, gen: gen, barrier: func() {}, pool: newWindowPool()}
}

// readAll reads the file in 128 KiB requests in the order given.
func readAll(t *testing.T, ra *readAhead, size int64, order []int64) []byte {
	t.Helper()
	got := make([]byte, size)
	for _, off := range order {
		end := min(off+128<<10, size)
		n, err := ra.read(got[off:end], off)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if int64(n) != end-off {
			t.Fatalf("read at %d: %d bytes, want %d", off, n, end-off)
		}
	}
	return got
}

func offsets(size int64) []int64 {
	var o []int64
	for off := int64(0); off < size; off += 128 << 10 {
		o = append(o, off)
	}
	return o
}

// TestReadAheadSequential reads a file front to back in the kernel's
// 128 KiB pieces: the content is exact, most pieces come from windows (few
// reads of the file), and the end of the file reads short with EOF.
func TestReadAheadSequential(t *testing.T) {
	size := int64(19<<20 + 12345)
	f := &countingFile{data: randomBytes(int(size))}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	got := readAll(t, ra, size, offsets(size))
	if !bytes.Equal(got, f.data) {
		t.Fatal("content differs")
	}
	requests := int64(len(offsets(size)))
	if r := f.reads.Load(); r > requests/4 {
		t.Errorf("%d reads of the file for %d requests: read-ahead not used", r, requests)
	}
	n, err := ra.read(make([]byte, 100), size)
	if n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("read at the end: %d, %v; want 0, EOF", n, err)
	}
}

// TestReadAheadOutOfOrder swaps neighbouring requests, as concurrent
// kernel read-ahead requests arrive: still exact, still read ahead.
func TestReadAheadOutOfOrder(t *testing.T) {
	size := int64(16 << 20)
	f := &countingFile{data: randomBytes(int(size))}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	order := offsets(size)
	for i := 2; i+1 < len(order); i += 3 {
		order[i], order[i+1] = order[i+1], order[i]
	}
	if got := readAll(t, ra, size, order); !bytes.Equal(got, f.data) {
		t.Fatal("content differs")
	}
	if r := f.reads.Load(); r > int64(len(order))/4 {
		t.Errorf("%d reads of the file for %d requests", r, len(order))
	}
}

// TestReadAheadRandom reads at random places: exact, and no read-ahead
// wasted on it.
func TestReadAheadRandom(t *testing.T) {
	size := int64(64 << 20)
	f := &countingFile{data: randomBytes(int(size))}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 4096)
	for i := 0; i < 200; i++ {
		off := rng.Int64N(size-4096) &^ 4095
		if _, err := ra.read(buf, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, f.data[off:off+4096]) {
			t.Fatalf("read at %d differs", off)
		}
	}
	if r := f.reads.Load(); r > 210 {
		t.Errorf("%d reads of the file for 200 random requests: read ahead without need", r)
	}
}

// TestReadAheadSeesChanges changes the file while it is read sequentially
// (bumping the change count as the filesystem does after a write): no
// piece read after the change may come from before it.
func TestReadAheadSeesChanges(t *testing.T) {
	size := int64(12 << 20)
	f := &countingFile{data: randomBytes(int(size))}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	buf := make([]byte, 128<<10)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if off == 3<<20 || off == 7<<20+128<<10 {
			// Overwrite everything ahead, as another handle's write would.
			f.mu.Lock()
			for i := off; i < size; i++ {
				f.data[i]++
			}
			f.mu.Unlock()
			gen.Add(1)
		}
		if _, err := ra.read(buf, off); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		f.mu.Lock()
		same := bytes.Equal(buf, f.data[off:off+int64(len(buf))])
		f.mu.Unlock()
		if !same {
			t.Fatalf("read at %d returned data from before a change", off)
		}
	}
}

// TestReadAheadHitNoAllocs checks a read served from a window allocates
// nothing.
func TestReadAheadHitNoAllocs(t *testing.T) {
	size := int64(64 << 20)
	f := &countingFile{data: make([]byte, size)}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	buf := make([]byte, 128<<10)
	off := int64(0)
	for i := 0; i < 3; i++ { // start the stream
		ra.read(buf, off)
		off += int64(len(buf))
	}
	<-ra.wins[0].done
	allocs := testing.AllocsPerRun(20, func() {
		ra.read(buf, off)
		off += int64(len(buf))
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per read from a window", allocs)
	}
}

// BenchmarkReadAhead measures serving a sequential stream of 128 KiB
// requests from memory through the windows.
func BenchmarkReadAhead(b *testing.B) {
	size := int64(256 << 20)
	f := &countingFile{data: make([]byte, size)}
	var gen atomic.Uint64
	ra := newTestReadAhead(f, &gen)
	defer ra.close()
	buf := make([]byte, 128<<10)
	b.SetBytes(int64(len(buf)))
	off := int64(0)
	for b.Loop() {
		if off+int64(len(buf)) > size {
			off = 0
		}
		ra.read(buf, off)
		off += int64(len(buf))
	}
}
