//go:build diskfseval

// This file is the evaluation harness behind EVALUATION.md: it exercises
// github.com/diskfs/go-diskfs v1.9.4 against fsck.fat and mtools. It never
// fails on a go-diskfs defect; it logs "FINDING" lines instead. Run it with
//
//	go test -tags diskfseval -run TestDiskfsEval -v ./fat/
package fat

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/ext4"
	"github.com/diskfs/go-diskfs/filesystem/fat12"
	"github.com/diskfs/go-diskfs/filesystem/fat16"
	"github.com/diskfs/go-diskfs/filesystem/fat32"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

func evalRun(t *testing.T, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1", "MTOOLS_NO_VFAT=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func evalImage(t *testing.T, size int64) (string, *os.File) {
	p := filepath.Join(t.TempDir(), "img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p, f
}

// evalCreate formats with go-diskfs' fat12/fat16/fat32 packages.
func evalCreate(t *testing.T, kind int, f *os.File, size int64) (filesystem.FileSystem, error) {
	b := file.New(f, false)
	switch kind {
	case 12:
		return fat12.Create(b, size, 0, 512, "EVAL", false)
	case 16:
		return fat16.Create(b, size, 0, 512, "EVAL", false)
	default:
		return fat32.Create(b, size, 0, 512, "EVAL", false)
	}
}

// evalRead opens an image with whichever go-diskfs FAT package accepts it.
func evalRead(f *os.File, size int64) (filesystem.FileSystem, string, error) {
	b := file.New(f, false)
	var errs []string
	if fs, err := fat32.Read(b, size, 0, 512); err == nil {
		return fs, "fat32", nil
	} else {
		errs = append(errs, "fat32: "+err.Error())
	}
	if fs, err := fat16.Read(b, size, 0, 512); err == nil {
		return fs, "fat16", nil
	} else {
		errs = append(errs, "fat16: "+err.Error())
	}
	if fs, err := fat12.Read(b, size, 0, 512); err == nil {
		return fs, "fat12", nil
	} else {
		errs = append(errs, "fat12: "+err.Error())
	}
	return nil, "", fmt.Errorf("%s", strings.Join(errs, "; "))
}

// guarded runs fn with a panic guard and a time limit and reports what happened.
func guarded(t *testing.T, what string, limit time.Duration, fn func() error) {
	done := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("PANIC: %v", r)
			}
		}()
		if err := fn(); err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- "no error"
	}()
	select {
	case r := <-done:
		t.Logf("FINDING %s: %s", what, r)
	case <-time.After(limit):
		t.Logf("FINDING %s: HANG (no result after %v)", what, limit)
	}
}

func writeFileDFS(fs filesystem.FileSystem, p string, data []byte) error {
	f, err := fs.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

func readFileDFS(fs filesystem.FileSystem, p string) ([]byte, error) {
	f, err := fs.OpenFile(p, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestDiskfsEval(t *testing.T) {
	for _, tool := range []string{"fsck.fat", "mkfs.fat", "mdir", "mcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}

	t.Run("format", func(t *testing.T) {
		for _, c := range []struct {
			kind int
			size int64
		}{{12, 300 << 10}, {16, 10 << 20}, {16, 100 << 20}, {32, 100 << 20}, {32, 1 << 30}} {
			p, f := evalImage(t, c.size)
			_, err := evalCreate(t, c.kind, f, c.size)
			if err != nil {
				t.Logf("FINDING create FAT%d %d bytes: %v", c.kind, c.size, err)
				continue
			}
			out, err := evalRun(t, "fsck.fat", "-n", "-v", p)
			t.Logf("FINDING create FAT%d %d: fsck.fat err=%v\n%s", c.kind, c.size, err, out)
		}
	})

	t.Run("lfn-roundtrip", func(t *testing.T) {
		names := []string{"short.txt", "Long file name here.txt", "Привет мир.txt", "日本語のファイル名.dat", "emoji 😀 file.txt", "MixedCase.Txt"}
		for _, kind := range []int{12, 16, 32} {
			size := int64(10 << 20)
			if kind == 32 {
				size = 100 << 20
			}
			if kind == 12 {
				size = 1 << 20
			}
			p, f := evalImage(t, size)
			fs, err := evalCreate(t, kind, f, size)
			if err != nil {
				t.Logf("FINDING FAT%d create: %v", kind, err)
				continue
			}
			for i, n := range names {
				data := bytes.Repeat([]byte{byte('a' + i)}, 3000+i)
				guarded(t, fmt.Sprintf("FAT%d write %q", kind, n), 10*time.Second, func() error {
					return writeFileDFS(fs, "/"+n, data)
				})
			}
			out, err := evalRun(t, "fsck.fat", "-n", p)
			t.Logf("FINDING FAT%d after LFN writes: fsck err=%v\n%s", kind, err, out)
			out, err = evalRun(t, "mdir", "-i", p, "::/")
			t.Logf("FINDING FAT%d mdir err=%v\n%s", kind, err, out)
			for i, n := range names {
				out, err := evalRun(t, "mcopy", "-n", "-i", p, "::/"+n, "-")
				want := bytes.Repeat([]byte{byte('a' + i)}, 3000+i)
				t.Logf("FINDING FAT%d mcopy %q: err=%v identical=%v", kind, n, err, out == string(want))
			}
		}
	})

	t.Run("read-mtools", func(t *testing.T) {
		for _, spec := range []struct {
			fat  string
			size int64
		}{{"12", 1 << 20}, {"16", 20 << 20}, {"32", 100 << 20}} {
			p, f := evalImage(t, spec.size)
			f.Close()
			if out, err := evalRun(t, "mkfs.fat", "-F", spec.fat, p); err != nil {
				t.Fatalf("mkfs.fat: %v %s", err, out)
			}
			src := filepath.Join(t.TempDir(), "src")
			os.MkdirAll(src, 0o755)
			names := []string{"Привет мир.txt", "日本語のファイル名.dat", "emoji 😀 file.txt", "UPPER.TXT", "lower.txt"}
			for i, n := range names {
				os.WriteFile(filepath.Join(src, n), bytes.Repeat([]byte{byte('A' + i)}, 5000+i), 0o644)
			}
			evalRun(t, "mmd", "-i", p, "::/sub dir")
			for _, n := range names {
				out, err := evalRun(t, "mcopy", "-i", p, filepath.Join(src, n), "::/sub dir/"+n)
				if err != nil {
					t.Logf("mcopy %q: %v %s", n, err, out)
				}
			}
			f, _ = os.OpenFile(p, os.O_RDWR, 0)
			fs, kind, err := evalRead(f, spec.size)
			if err != nil {
				t.Logf("FINDING read mkfs.fat -F %s image: %v", spec.fat, err)
				continue
			}
			ents, err := fs.ReadDir("sub dir") // go-diskfs wants fs.FS-style paths here
			if err != nil {
				t.Logf("FINDING FAT%s (%s) ReadDir: %v", spec.fat, kind, err)
				continue
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			t.Logf("FINDING FAT%s (%s) names read: %q", spec.fat, kind, got)
			for i, n := range names {
				b, err := readFileDFS(fs, "/sub dir/"+n)
				t.Logf("FINDING FAT%s read %q: err=%v ok=%v", spec.fat, n, err, err == nil && bytes.Equal(b, bytes.Repeat([]byte{byte('A' + i)}, 5000+i)))
			}
			fi, err := fs.Stat("sub dir/lower.txt")
			if err == nil {
				st, _ := os.Stat(filepath.Join(src, "lower.txt"))
				t.Logf("FINDING FAT%s mtime: go-diskfs %v, source file %v (TZ=%s)", spec.fat, fi.ModTime(), st.ModTime(), time.Local)
			}
		}
	})

	t.Run("fat-copies-and-fsinfo", func(t *testing.T) {
		size := int64(100 << 20)
		p, f := evalImage(t, size)
		fs, err := evalCreate(t, 32, f, size)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			writeFileDFS(fs, fmt.Sprintf("/f%d.bin", i), make([]byte, 20000))
		}
		fs.Remove("/f3.bin")
		out, err := evalRun(t, "fsck.fat", "-n", "-v", p)
		t.Logf("FINDING FAT32 after 20 writes + 1 remove: fsck err=%v\n%s", err, out)
	})

	t.Run("rename-remove", func(t *testing.T) {
		size := int64(100 << 20)
		p, f := evalImage(t, size)
		fs, err := evalCreate(t, 32, f, size)
		if err != nil {
			t.Fatal(err)
		}
		fs.Mkdir("/a")
		fs.Mkdir("/b")
		writeFileDFS(fs, "/a/x.txt", []byte("hello"))
		guarded(t, "Rename across directories", 5*time.Second, func() error { return fs.Rename("/a/x.txt", "/b/x.txt") })
		writeFileDFS(fs, "/a/y.txt", []byte("y"))
		writeFileDFS(fs, "/a/z.txt", []byte("z"))
		guarded(t, "Rename replacing existing file", 5*time.Second, func() error { return fs.Rename("/a/y.txt", "/a/z.txt") })
		guarded(t, "Remove non-empty directory (absolute path)", 5*time.Second, func() error { return fs.Remove("/a") })
		guarded(t, "Remove non-empty directory (relative path)", 5*time.Second, func() error { return fs.Remove("a") })
		guarded(t, "Remove file", 5*time.Second, func() error { return fs.Remove("/a/z.txt") })
		out, err := evalRun(t, "fsck.fat", "-n", p)
		t.Logf("FINDING after renames/removes: fsck err=%v\n%s", err, out)
		guarded(t, "read past a short read (ReadAt-like via Seek)", 5*time.Second, func() error {
			writeFileDFS(fs, "/b/r.bin", bytes.Repeat([]byte("0123456789"), 100))
			ff, err := fs.OpenFile("/b/r.bin", os.O_RDONLY)
			if err != nil {
				return err
			}
			ff.Seek(995, io.SeekStart)
			buf := make([]byte, 100)
			n, err := ff.Read(buf)
			return fmt.Errorf("Read at 995 of a 1000-byte file returned n=%d err=%v", n, err)
		})
	})

	t.Run("speed-1000-files", func(t *testing.T) {
		size := int64(100 << 20)
		_, f := evalImage(t, size)
		fs, err := evalCreate(t, 32, f, size)
		if err != nil {
			t.Fatal(err)
		}
		fs.Mkdir("/d")
		data := make([]byte, 6000)
		rand.Read(data)
		start := time.Now()
		n := 0
		deadline := start.Add(60 * time.Second)
		for ; n < 1000 && time.Now().Before(deadline); n++ {
			if err := writeFileDFS(fs, fmt.Sprintf("/d/file%04d.bin", n), data); err != nil {
				t.Logf("write %d: %v", n, err)
				break
			}
		}
		el := time.Since(start)
		t.Logf("FINDING go-diskfs wrote %d files of 6000 bytes in %v (%.1f ms/file)", n, el, float64(el.Milliseconds())/float64(n))
		dir := t.TempDir()
		start = time.Now()
		for i := 0; i < 1000; i++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%04d.bin", i)), data, 0o644)
		}
		t.Logf("FINDING plain directory: 1000 files in %v", time.Since(start))
	})

	t.Run("garbage", func(t *testing.T) {
		size := int64(100 << 20)
		mk := func() (string, *os.File, filesystem.FileSystem) {
			p, f := evalImage(t, size)
			f.Close()
			evalRun(t, "mkfs.fat", "-F", "32", p)
			src := filepath.Join(t.TempDir(), "x.bin")
			os.WriteFile(src, bytes.Repeat([]byte("x"), 20000), 0o644)
			evalRun(t, "mmd", "-i", p, "::/dir")
			evalRun(t, "mcopy", "-i", p, src, "::/dir/x.bin")
			f, _ = os.OpenFile(p, os.O_RDWR, 0)
			return p, f, nil
		}
		// Locate a file's first cluster and the FAT in a mkfs.fat FAT32 image.
		geometry := func(f *os.File) (fatOff, dataOff, clus int64) {
			bs := make([]byte, 512)
			f.ReadAt(bs, 0)
			bps := int64(bs[11]) | int64(bs[12])<<8
			spc := int64(bs[13])
			res := int64(bs[14]) | int64(bs[15])<<8
			fatsz := int64(bs[36]) | int64(bs[37])<<8 | int64(bs[38])<<16 | int64(bs[39])<<24
			return res * bps, (res + 2*fatsz) * bps, spc * bps
		}
		// A looping chain: make the file's last cluster point to its first.
		{
			_, f, _ := mk()
			fatOff, _, _ := geometry(f)
			// clusters: 2 root, 3 dir, 4.. x.bin (20000 bytes = 40 sectors of 512 = 40 clusters)
			// Point cluster 4+10 back to 4.
			b := []byte{4, 0, 0, 0}
			f.WriteAt(b, fatOff+4*14)
			f.WriteAt(b, fatOff+4*14+int64(0)) // FAT1 only: FAT2 now differs
			fs, _, err := evalRead(f, size)
			t.Logf("FINDING open with FAT copies differing: err=%v", err)
			if fs != nil {
				guarded(t, "read file with looping chain", 10*time.Second, func() error { _, err := readFileDFS(fs, "/dir/x.bin"); return err })
			}
		}
		{
			_, f, _ := mk()
			fatOff, _, _ := geometry(f)
			fat2 := func(off int64, v []byte) {
				f.WriteAt(v, fatOff+off)
				bs := make([]byte, 512)
				f.ReadAt(bs, 0)
				fatsz := int64(bs[36]) | int64(bs[37])<<8 | int64(bs[38])<<16 | int64(bs[39])<<24
				f.WriteAt(v, fatOff+fatsz*512+off)
			}
			fat2(4*14, []byte{4, 0, 0, 0})
			fs, _, err := evalRead(f, size)
			if err != nil {
				t.Logf("FINDING open (looping chain in both FATs): %v", err)
			} else {
				guarded(t, "read file with looping chain (both FATs)", 10*time.Second, func() error { _, err := readFileDFS(fs, "/dir/x.bin"); return err })
				guarded(t, "write into file with looping chain", 10*time.Second, func() error {
					return writeFileDFS(fs, "/dir/x.bin", []byte("short"))
				})
			}
		}
		{
			_, f, _ := mk()
			fatOff, _, _ := geometry(f)
			bs := make([]byte, 512)
			f.ReadAt(bs, 0)
			fatsz := int64(bs[36]) | int64(bs[37])<<8 | int64(bs[38])<<16 | int64(bs[39])<<24
			v := []byte{0xf0, 0xff, 0xff, 0x00} // out-of-range cluster number
			f.WriteAt(v, fatOff+4*6)
			f.WriteAt(v, fatOff+fatsz*512+4*6)
			fs, _, err := evalRead(f, size)
			if err == nil {
				guarded(t, "read file whose chain points out of range", 10*time.Second, func() error { _, err := readFileDFS(fs, "/dir/x.bin"); return err })
			}
		}
		{
			_, f, _ := mk()
			_, dataOff, clus := geometry(f)
			// The directory /dir is cluster 3; overwrite it with random bytes.
			g := make([]byte, clus)
			rand.Read(g)
			f.WriteAt(g, dataOff+clus*(3-2))
			fs, _, err := evalRead(f, size)
			if err == nil {
				guarded(t, "ReadDir of a garbage directory cluster", 10*time.Second, func() error { ents, err := fs.ReadDir("dir"); return fmt.Errorf("%d entries, err=%v", len(ents), err) })
			}
		}
		{
			_, f, _ := mk()
			_, dataOff, clus := geometry(f)
			// Find the x.bin entry in /dir and set its size to 10 MB.
			d := make([]byte, clus)
			f.ReadAt(d, dataOff+clus*(3-2))
			for i := 0; i+32 <= len(d); i += 32 {
				if string(d[i:i+8]) == "X       " {
					d[i+28], d[i+29], d[i+30], d[i+31] = 0, 0, 0xa0, 0
				}
			}
			f.WriteAt(d, dataOff+clus*(3-2))
			fs, _, err := evalRead(f, size)
			if err == nil {
				guarded(t, "read a file whose size exceeds its chain", 10*time.Second, func() error {
					b, err := readFileDFS(fs, "/dir/x.bin")
					if err == nil {
						return fmt.Errorf("no error, returned %d bytes", len(b))
					}
					return err
				})
			}
		}
		{
			_, f := evalImage(t, size)
			g := make([]byte, 1<<20)
			rand.Read(g)
			f.WriteAt(g, 0)
			guarded(t, "open 1 MiB of random bytes", 10*time.Second, func() error { _, _, err := evalRead(f, size); return err })
			bs := make([]byte, 512)
			bs[510], bs[511] = 0x55, 0xaa
			bs[11], bs[12] = 0, 2
			bs[13] = 0 // zero sectors per cluster
			f.WriteAt(bs, 0)
			guarded(t, "open boot sector with 0 sectors/cluster", 10*time.Second, func() error { _, _, err := evalRead(f, size); return err })
		}
	})

	t.Run("corpus", func(t *testing.T) {
		p := testdata.Unpack(t, "img_fs_vfat.img.xz")
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		out, err := evalRun(t, "fsck.fat", "-n", "-v", p)
		t.Logf("corpus fsck: %v\n%s", err, out)
		out, _ = evalRun(t, "mdir", "-i", p, "-/", "::/")
		t.Logf("corpus mdir:\n%s", out)
		fs, kind, err := evalRead(f, st.Size())
		if err != nil {
			t.Logf("FINDING corpus vfat open: %v", err)
		} else {
			guarded(t, "corpus vfat ReadDir("+kind+")", 10*time.Second, func() error {
				ents, err := fs.ReadDir(".")
				for _, e := range ents {
					t.Logf("  %s dir=%v", e.Name(), e.IsDir())
				}
				if err != nil {
					return err
				}
				got, err := readFileDFS(fs, "/luks_header.img")
				if err != nil {
					return err
				}
				want, err := evalRun(t, "mcopy", "-n", "-i", p, "::/luks_header.img", "-")
				return fmt.Errorf("read luks_header.img: %d bytes, identical to mcopy: %v (mcopy err %v)", len(got), string(got) == want, err)
			})
		}

		p4 := testdata.Unpack(t, "img_fs_ext4.img.xz")
		f4, err := os.Open(p4)
		if err != nil {
			t.Fatal(err)
		}
		st4, _ := f4.Stat()
		guarded(t, "ext4 corpus image", 20*time.Second, func() error {
			e, err := ext4.Read(file.New(f4, true), st4.Size(), 0, 512)
			if err != nil {
				return err
			}
			var walk func(string, int) error
			walk = func(dir string, depth int) error {
				ents, err := e.ReadDir(dir)
				if err != nil {
					return err
				}
				for _, en := range ents {
					info, _ := en.Info()
					var sz int64
					if info != nil {
						sz = info.Size()
					}
					t.Logf("  ext4 %s/%s dir=%v size=%d", dir, en.Name(), en.IsDir(), sz)
					if en.IsDir() && depth < 3 && en.Name() != "lost+found" {
						if err := walk(strings.TrimSuffix(dir, "/")+"/"+en.Name(), depth+1); err != nil {
							return err
						}
					} else if !en.IsDir() {
						b, err := e.ReadFile(strings.TrimPrefix(strings.TrimSuffix(dir, "/")+"/"+en.Name(), "/"))
						t.Logf("    read %d bytes err=%v", len(b), err)
					}
				}
				return nil
			}
			return walk("/", 0)
		})
		out, err = evalRun(t, "debugfs", "-R", "ls -l /", p4)
		t.Logf("debugfs: %v\n%s", err, out)
	})
}
