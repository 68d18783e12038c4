package exfat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// memDev is an in-memory device. Reads and writes outside it fail the
// test: the package must never issue them.
type memDev struct {
	t    testing.TB
	data []byte
}

func newMemDev(t testing.TB, size int64) *memDev {
	return &memDev{t: t, data: make([]byte, size)}
}

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.data)) {
		m.t.Errorf("read of %d bytes at %d outside device of %d", len(p), off, len(m.data))
		return 0, errors.New("out of range")
	}
	return copy(p, m.data[off:]), nil
}

func (m *memDev) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.data)) {
		m.t.Errorf("write of %d bytes at %d outside device of %d", len(p), off, len(m.data))
		return 0, errors.New("out of range")
	}
	return copy(m.data[off:], p), nil
}

// sparseDev is an in-memory device that stores only the 64 KiB chunks
// written to, for multi-gigabyte volumes.
type sparseDev struct {
	t      testing.TB
	size   int64
	chunks map[int64][]byte
}

const sparseChunk = 64 << 10

func newSparseDev(t testing.TB, size int64) *sparseDev {
	return &sparseDev{t: t, size: size, chunks: make(map[int64][]byte)}
}

func (s *sparseDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > s.size {
		s.t.Errorf("read of %d bytes at %d outside device of %d", len(p), off, s.size)
		return 0, errors.New("out of range")
	}
	for n := 0; n < len(p); {
		c, o := (off+int64(n))/sparseChunk, (off+int64(n))%sparseChunk
		k := int(sparseChunk - o)
		if k > len(p)-n {
			k = len(p) - n
		}
		if b, ok := s.chunks[c]; ok {
			copy(p[n:n+k], b[o:])
		} else {
			clear(p[n : n+k])
		}
		n += k
	}
	return len(p), nil
}

func (s *sparseDev) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > s.size {
		s.t.Errorf("write of %d bytes at %d outside device of %d", len(p), off, s.size)
		return 0, errors.New("out of range")
	}
	for n := 0; n < len(p); {
		c, o := (off+int64(n))/sparseChunk, (off+int64(n))%sparseChunk
		k := int(sparseChunk - o)
		if k > len(p)-n {
			k = len(p) - n
		}
		b, ok := s.chunks[c]
		if !ok {
			// A chunk never written reads as zeros: writing zeros to it
			// need not store anything (so multi-gigabyte zero fills stay
			// in little memory).
			if allZero(p[n : n+k]) {
				n += k
				continue
			}
			b = make([]byte, sparseChunk)
			s.chunks[c] = b
		}
		copy(b[o:], p[n:n+k])
		n += k
	}
	return len(p), nil
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// save writes the device to a sparse image file.
func (s *sparseDev) save(t testing.TB) string {
	t.Helper()
	p, f := image(t, s.size)
	for c, b := range s.chunks {
		if _, err := f.WriteAt(b[:min(int64(len(b)), s.size-c*sparseChunk)], c*sparseChunk); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// image is a sparse image file in a temporary directory.
func image(t testing.TB, size int64) (string, *os.File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "exfat.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return p, f
}

// saveImage writes a memDev to a file for the external tools.
func saveImage(t testing.TB, m *memDev) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "exfat.img")
	if err := os.WriteFile(p, m.data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// needTools skips the test when an external oracle is missing.
func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (exfatprogs and exfat-fuse are the test oracles; apt-get install exfatprogs exfat-fuse)", tool)
		}
	}
}

// run runs an external tool with a UTF-8 locale and returns its output.
func runTool(t testing.TB, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8"), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// fsckClean runs fsck.exfat -n and fails the test unless it exits 0.
func fsckClean(t testing.TB, img string) {
	t.Helper()
	out, err := runTool(t, nil, "fsck.exfat", "-n", img)
	if err != nil {
		t.Fatalf("fsck.exfat -n %s: %v\n%s", filepath.Base(img), err, out)
	}
}

// pattern returns n deterministic bytes that differ per seed.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func mustFormat(t testing.TB, dev interface {
	WriteAt([]byte, int64) (int, error)
}, size int64, opts FormatOptions) {
	t.Helper()
	if err := Format(dev, size, opts); err != nil {
		t.Fatalf("Format(%d): %v", size, err)
	}
}

func mustOpen(t testing.TB, dev interface {
	ReadAt([]byte, int64) (int, error)
}, size int64) *FS {
	t.Helper()
	fs, err := Open(dev, size)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return fs
}

func mustWrite(t testing.TB, fs *FS, name string, data []byte) {
	t.Helper()
	if err := fs.WriteFile(name, data, 0o644); err != nil {
		t.Fatalf("WriteFile(%s): %v", name, err)
	}
}

func mustRead(t testing.TB, fs *FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(name)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return b
}
