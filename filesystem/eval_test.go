//go:build fseval

// This file evaluates the two candidate modules for the ext4 and NTFS
// readers — github.com/diskfs/go-diskfs's filesystem/ext4 (v1.9.4) and
// www.velocidex.com/golang/go-ntfs (v0.2.1) — on the same images the
// readers here are tested on, with the same source trees as the oracle.
// It never fails on a module's defect; it logs FINDING lines and timings.
// Run it with
//
//	go test -tags fseval -run TestEval -v ./filesystem/
//
// EVALUATION.md in ../ext4 and ../ntfs records what it found.
package filesystem_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/diskfs/go-diskfs/backend/file"
	dext4 "github.com/diskfs/go-diskfs/filesystem/ext4"
	ntfsparser "www.velocidex.com/golang/go-ntfs/parser"

	"github.com/cryptvol/cryptvol/internal/fstree"
)

// srcFiles lists the regular files of a source tree with their sha256.
func srcFiles(t *testing.T, src string) map[string][32]byte {
	out := map[string][32]byte{}
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(src, p)
			out["/"+filepath.ToSlash(rel)] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

// ours reads every file through filesystem.Open, for the timing.
func ours(t *testing.T, img string, files map[string][32]byte) time.Duration {
	start := time.Now()
	fsys := openImage(t, img)
	for p, want := range files {
		b, err := readAll(fsys, p)
		if err != nil || sha256.Sum256(b) != want {
			t.Errorf("ours: %s: %v", p, err)
		}
	}
	return time.Since(start)
}

// TestEvalDiskfsExt4 runs each feature set twice: with the tree as the
// readers here are tested on, and without its 255-byte name (on which
// go-diskfs panics, so that nothing else would be seen).
func TestEvalDiskfsExt4(t *testing.T) {
	needTool(t, "mkfs.ext4")
	for _, c := range ext4Configs {
		for _, long := range []bool{true, false} {
			name := c.name
			if !long {
				name += "/no-255-byte-name"
			}
			t.Run(name, func(t *testing.T) {
				c := c
				c.name = name
				dir := t.TempDir()
				src := filepath.Join(dir, "src")
				os.Mkdir(src, 0o755)
				fstree.Build(t, src, c.spec)
				if !long {
					os.Remove(filepath.Join(src, fstree.LongName))
				}
				img := filepath.Join(dir, "fs.img")
				run(t, "mkfs.ext4", append(append([]string{"-q", "-F", "-d", src}, c.args...), img, "128M")...)
				files := srcFiles(t, src)
				f, _ := os.Open(img)
				defer f.Close()
				st, _ := f.Stat()
				start := time.Now()
				var e *dext4.FileSystem
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					e, err = dext4.Read(file.New(f, true), st.Size(), 0, 512)
				}()
				if err != nil {
					t.Logf("FINDING %s: go-diskfs ext4.Read: %v", c.name, err)
					return
				}
				bad, ok := 0, 0
				for p, want := range files {
					var got []byte
					func() {
						defer func() {
							if r := recover(); r != nil {
								err = fmt.Errorf("panic: %v", r)
								if bad == 0 {
									st := string(debug.Stack())
									if i := strings.Index(st, "go-diskfs@v1.9.4/filesystem/ext4/"); i >= 0 {
										st = st[i : i+strings.IndexByte(st[i:], ' ')]
									}
									t.Logf("FINDING %s: first panic at %s", c.name, st)
								}
							}
						}()
						var fl interface {
							io.Reader
							io.Closer
						}
						fl, err = e.OpenFile(p, os.O_RDONLY)
						if err == nil {
							got, err = io.ReadAll(fl)
							fl.Close()
						}
					}()
					if err != nil || sha256.Sum256(got) != want {
						if bad < 5 {
							t.Logf("FINDING %s: go-diskfs %s: %d bytes, %v", c.name, p, len(got), err)
						}
						bad++
						continue
					}
					ok++
				}
				theirs := time.Since(start)
				t.Logf("%s: go-diskfs read %d files right, %d wrong or failed, in %v; ours all in %v", c.name, ok, bad, theirs, ours(t, img, files))
			})
		}
	}
}

func TestEvalGoNTFS(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	fstree.Build(t, src, fstree.Spec{ManyFiles: 3000, LargeSize: 3 << 20, SparseTail: 5 << 20, Links: true})
	img := filepath.Join(dir, "ntfs.img")
	fstree.MakeNTFS(t, img, src, 96<<20, nil, true)
	files := srcFiles(t, src)
	f, _ := os.Open(img)
	defer f.Close()
	start := time.Now()
	ctx, err := ntfsparser.GetNTFSContext(f, 0)
	if err != nil {
		t.Logf("FINDING: go-ntfs GetNTFSContext: %v", err)
		return
	}
	bad, ok := 0, 0
	for p, want := range files {
		var got []byte
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			var r ntfsparser.RangeReaderAt
			r, err = ntfsparser.GetDataForPath(ctx, p)
			if err == nil {
				got = make([]byte, ntfsparser.RangeSize(r))
				_, err = r.ReadAt(got, 0)
				if err == io.EOF {
					err = nil
				}
			}
		}()
		if err != nil || sha256.Sum256(got) != want {
			if bad < 8 {
				t.Logf("FINDING: go-ntfs %s: %d bytes, %v", p, len(got), err)
			}
			bad++
			continue
		}
		ok++
	}
	theirs := time.Since(start)
	t.Logf("go-ntfs read %d files right, %d wrong or failed, in %v; ours all in %v", ok, bad, theirs, ours(t, img, files))
	// Listing: names, and what a symbolic link looks like.
	root, err := ctx.GetMFT(5)
	if err == nil {
		var names []string
		for _, fi := range ntfsparser.ListDir(ctx, root) {
			names = append(names, fi.Name)
		}
		t.Logf("go-ntfs lists the root as %d names: %s", len(names), strings.Join(names, ", "))
	}
	for _, p := range []string{"link-fast", "win-link", "junction"} {
		e, err := root.Open(ctx, p)
		if err != nil {
			t.Logf("FINDING: go-ntfs open %s: %v", p, err)
			continue
		}
		for _, fi := range ntfsparser.Stat(ctx, e) {
			t.Logf("go-ntfs Stat(%s): IsDir %v, size %d, mtime %v (no link target in its FileInfo)", p, fi.IsDir, fi.Size, fi.Mtime)
			break
		}
	}
	_ = bytes.Equal
	_ = path.Join
}
