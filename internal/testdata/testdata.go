// Package testdata finds and unpacks the shared corpus of volumes made by
// TrueCrypt, VeraCrypt and cryptsetup (../shared/testdata, or
// $CRYPTVOL_TESTDATA), for tests only.
//
// Archives are unpacked with a pure-Go xz reader so the same tests run under
// qemu and on machines without xz installed.
package testdata

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ulikunitz/xz"
)

// Dir returns the corpus directory, or "" when it cannot be found.
func Dir() string {
	if d := os.Getenv("CRYPTVOL_TESTDATA"); d != "" {
		return d
	}
	// Walk up from this source file to the module root, then ../shared.
	_, file, _, ok := runtime.Caller(0)
	if ok {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		d := filepath.Join(root, "..", "shared", "testdata")
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	// Fall back to walking up from the working directory (test binaries
	// copied elsewhere, e.g. for qemu runs, keep CRYPTVOL_TESTDATA instead).
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, "..", "shared", "testdata")
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Require returns the corpus directory or skips the test with a clear
// message when it is absent.
func Require(t testing.TB) string {
	t.Helper()
	d := Dir()
	if d == "" {
		t.Skip("shared test corpus not found: put it at ../shared/testdata or set CRYPTVOL_TESTDATA")
	}
	return d
}

var (
	cacheMu sync.Mutex
	cache   = map[string]string{}
)

// Unpack decompresses cryptsetup/NAME (a .xz file or a .tar.xz archive) and
// returns the path of the result: the file for .xz, the directory it was
// extracted into for .tar.xz. Results are cached in the system's temporary
// directory under a name derived from the archive's size and time, so test
// processes share one copy and nothing piles up; they are unpacked to a
// private name and renamed into place, so concurrent test processes never
// see a half-written copy. Treat the result as read-only: copy before
// writing (see CopyFile).
func Unpack(t testing.TB, name string) string {
	t.Helper()
	dir := Require(t)
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if p, ok := cache[name]; ok {
		return p
	}
	src := filepath.Join(dir, "cryptsetup", name)
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatalf("test corpus file: %v", err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".xz"), ".tar")
	// v2: GNU sparse tar entries are unpacked (a v1 copy of an archive
	// holding them lacks those files).
	out := filepath.Join(os.TempDir(), fmt.Sprintf("cryptvol-testdata-v2-%s-%d-%d", base, fi.Size(), fi.ModTime().Unix()))
	if _, err := os.Stat(out); err == nil {
		cache[name] = out
		return out
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "cryptvol-unpack-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	f, err := os.Open(src)
	if err != nil {
		t.Fatalf("test corpus file: %v", err)
	}
	defer f.Close()
	zr, err := xz.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	staged := filepath.Join(tmp, "out")
	if strings.HasSuffix(name, ".tar.xz") {
		err = untar(zr, staged)
	} else {
		err = writeFile(staged, zr)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// Shared by every test process: make a stray write fail loudly.
	filepath.Walk(staged, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			os.Chmod(p, 0o444)
		}
		return nil
	})
	if err := os.Rename(staged, out); err != nil {
		if _, serr := os.Stat(out); serr != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Another test process won the race; use its copy.
	}
	cache[name] = out
	return out
}

func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return fmt.Errorf("unsafe path %q in archive", h.Name)
		}
		p := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg, tar.TypeGNUSparse:
			// GNU sparse entries (the BitLocker and FileVault images)
			// read back with their holes as zeros.
			if err := writeFile(p, tr); err != nil {
				return err
			}
		}
	}
}

func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := copySparse(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copySparse copies r to f, seeking over all-zero 64 KiB blocks instead of
// writing them: the corpus images are mostly wiped (zero) blocks, and this
// keeps the unpacked 100-500 MB images small on disk.
func copySparse(f *os.File, r io.Reader) error {
	buf := make([]byte, 64<<10)
	var size int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if allZero(buf[:n]) {
				if _, err := f.Seek(int64(n), io.SeekCurrent); err != nil {
					return err
				}
			} else if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			size += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return f.Truncate(size)
		}
		if err != nil {
			return err
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// CopyFile copies src into t.TempDir() and returns the copy's path, for tests
// that modify an image.
func CopyFile(t testing.TB, src string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := writeFile(dst, in); err != nil {
		t.Fatal(err)
	}
	return dst
}
