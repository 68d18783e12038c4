package fattest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// SparseDev is an in-memory device that stores only the 64 KiB chunks
// written to, for multi-gigabyte volumes. Reads and writes outside it fail
// the test: the packages must never issue them.
type SparseDev struct {
	t      testing.TB
	size   int64
	chunks map[int64][]byte
}

const sparseChunk = 64 << 10

// NewSparseDev returns a device of size bytes of zeros.
func NewSparseDev(t testing.TB, size int64) *SparseDev {
	return &SparseDev{t: t, size: size, chunks: make(map[int64][]byte)}
}

func (s *SparseDev) ReadAt(p []byte, off int64) (int, error) {
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

func (s *SparseDev) WriteAt(p []byte, off int64) (int, error) {
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

// Save writes the device to a sparse image file named name in a
// temporary directory.
func (s *SparseDev) Save(t testing.TB, name string) string {
	t.Helper()
	p, f := Kit{Img: name}.Image(t, s.size)
	for c, b := range s.chunks {
		if _, err := f.WriteAt(b[:min(int64(len(b)), s.size-c*sparseChunk)], c*sparseChunk); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// Kit is what a package's tests name about themselves: their image
// files, their fsck, and the packages that provide their external oracles.
type Kit struct {
	Img     string // "fat.img"
	Fsck    string // "fsck.fat"
	Oracles string // the hint a skipped test gives
}

// Image is a sparse image file in a temporary directory, closed when the
// test ends.
func (k Kit) Image(t testing.TB, size int64) (string, *os.File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), k.Img)
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

// SaveImage writes a MemDev to an image file, for the external tools.
func (k Kit) SaveImage(t testing.TB, m *MemDev) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), k.Img)
	if err := os.WriteFile(p, m.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// NeedTools skips the test when an external oracle is missing.
func (k Kit) NeedTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (%s)", tool, k.Oracles)
		}
	}
}

// HasFsck reports whether the package's fsck is installed, and says in
// the test's log when it is not (the test then checks with our own
// checker only).
func (k Kit) HasFsck(t testing.TB) bool {
	t.Helper()
	if _, err := exec.LookPath(k.Fsck); err != nil {
		t.Logf("%s is not installed: checked by our checker only (%s)", k.Fsck, k.Oracles)
		return false
	}
	return true
}

// RunTool runs an external tool with a UTF-8 locale and returns its
// output.
func RunTool(t testing.TB, env []string, name string, args ...string) (string, error) {
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

// FsckClean runs the package's fsck with -n and fails the test unless it
// exits 0.
func (k Kit) FsckClean(t testing.TB, img string) {
	t.Helper()
	out, err := RunTool(t, nil, k.Fsck, "-n", img)
	if err != nil {
		t.Fatalf("%s -n %s: %v\n%s", k.Fsck, filepath.Base(img), err, out)
	}
}

// MustWrite writes a whole file or fails the test.
func MustWrite(t testing.TB, fsys interface {
	WriteFile(name string, data []byte, perm iofs.FileMode) error
}, name string, data []byte) {
	t.Helper()
	if err := fsys.WriteFile(name, data, 0o644); err != nil {
		t.Fatalf("WriteFile(%s): %v", name, err)
	}
}

// MustRead reads a whole file or fails the test.
func MustRead(t testing.TB, fsys interface {
	ReadFile(name string) ([]byte, error)
}, name string) []byte {
	t.Helper()
	b, err := fsys.ReadFile(name)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return b
}

// MemDev is an in-memory device. Reads and writes outside it fail the
// test: the packages must never issue them.
type MemDev struct {
	T    testing.TB
	Data []byte
}

// NewMemDev returns a device of size bytes of zeros.
func NewMemDev(t testing.TB, size int64) *MemDev {
	return &MemDev{T: t, Data: make([]byte, size)}
}

func (m *MemDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.Data)) {
		m.T.Errorf("read of %d bytes at %d outside device of %d", len(p), off, len(m.Data))
		return 0, errors.New("out of range")
	}
	return copy(p, m.Data[off:]), nil
}

func (m *MemDev) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.Data)) {
		m.T.Errorf("write of %d bytes at %d outside device of %d", len(p), off, len(m.Data))
		return 0, errors.New("out of range")
	}
	return copy(m.Data[off:], p), nil
}

// MustFormat turns a package's Format into a helper that fails the test
// when formatting fails.
func MustFormat[O any](format func(dev io.WriterAt, size int64, opts O) error) func(t testing.TB, dev io.WriterAt, size int64, opts O) {
	return func(t testing.TB, dev io.WriterAt, size int64, opts O) {
		t.Helper()
		if err := format(dev, size, opts); err != nil {
			t.Fatalf("Format(%d): %v", size, err)
		}
	}
}

// MustOpen turns a package's Open into a helper that fails the test when
// opening fails.
func MustOpen[F any](open func(dev io.ReaderAt, size int64) (F, error)) func(t testing.TB, dev io.ReaderAt, size int64) F {
	return func(t testing.TB, dev io.ReaderAt, size int64) F {
		t.Helper()
		fs, err := open(dev, size)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return fs
	}
}
