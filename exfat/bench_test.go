package exfat

import (
	"bytes"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchFuse mounts img with exfat-fuse for a benchmark, or returns "" when
// that cannot be done here.
func benchFuse(b *testing.B, img string) (dir string, unmount func()) {
	if os.Getuid() != 0 {
		return "", nil
	}
	if _, err := exec.LookPath("mount.exfat-fuse"); err != nil {
		return "", nil
	}
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		return "", nil
	}
	loop := string(bytes.TrimSpace(out))
	dir = filepath.Join(b.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	if err := exec.Command("mount.exfat-fuse", loop, dir).Run(); err != nil {
		exec.Command("losetup", "-d", loop).Run()
		return "", nil
	}
	return dir, func() {
		exec.Command("umount", dir).Run()
		exec.Command("losetup", "-d", loop).Run()
	}
}

// BenchmarkSmallFiles writes 1,000 files of 3–10 KB into an exFAT volume
// in an image file and reads them back (through a fresh Open), and does
// the same with a plain directory on the same disk and, where it can be
// mounted, through exfat-fuse on an image made by mkfs.exfat (mount,
// write, unmount, mount, read, unmount). It reports the ratios of the
// times as x-plain-dir and x-exfat-fuse (below 1: faster).
func BenchmarkSmallFiles(b *testing.B) {
	files := fattest.SmallFiles()
	var total int64
	for _, f := range files {
		total += int64(len(f))
	}
	const size = 256 << 20
	var ourTime, plainTime, fuseTime time.Duration
	fuseRuns := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		img, err := os.Create(filepath.Join(dir, "vol.img"))
		if err != nil {
			b.Fatal(err)
		}
		img.Truncate(size)
		if err := Format(img, size, FormatOptions{}); err != nil {
			b.Fatal(err)
		}
		plain := filepath.Join(dir, "plain")
		os.Mkdir(plain, 0o755)
		fuseImg := filepath.Join(dir, "fuse.img")
		os.WriteFile(fuseImg, nil, 0o644)
		os.Truncate(fuseImg, size)
		haveFuse := exec.Command("mkfs.exfat", fuseImg).Run() == nil
		b.StartTimer()

		start := time.Now()
		fs, err := Open(fattest.PlainFile{F: img}, size)
		if err != nil {
			b.Fatal(err)
		}
		fs.Mkdir("/data")
		for j, data := range files {
			if err := fs.WriteFile(fmt.Sprintf("/data/file%04d.bin", j), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := fs.Close(); err != nil {
			b.Fatal(err)
		}
		if fs, err = Open(fattest.PlainFile{F: img}, size); err != nil {
			b.Fatal(err)
		}
		for j, data := range files {
			got, err := fs.ReadFile(fmt.Sprintf("/data/file%04d.bin", j))
			if err != nil || len(got) != len(data) {
				b.Fatal(err)
			}
		}
		fs.Close()
		ourTime += time.Since(start)

		start = time.Now()
		copyFiles(b, plain, files)
		plainTime += time.Since(start)
		img.Close()

		if haveFuse {
			start = time.Now()
			mnt, unmount := benchFuse(b, fuseImg)
			if mnt != "" {
				os.Mkdir(filepath.Join(mnt, "data"), 0o755)
				for j, data := range files {
					if err := os.WriteFile(filepath.Join(mnt, "data", fmt.Sprintf("file%04d.bin", j)), data, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				unmount()
				mnt, unmount = benchFuse(b, fuseImg)
				for j, data := range files {
					got, err := os.ReadFile(filepath.Join(mnt, "data", fmt.Sprintf("file%04d.bin", j)))
					if err != nil || len(got) != len(data) {
						b.Fatal(err)
					}
				}
				unmount()
				fuseTime += time.Since(start)
				fuseRuns++
			}
		}
	}
	b.SetBytes(2 * total)
	b.ReportMetric(float64(ourTime)/float64(plainTime), "x-plain-dir")
	b.ReportMetric(float64(ourTime.Milliseconds())/float64(b.N), "exfat-ms/op")
	b.ReportMetric(float64(plainTime.Milliseconds())/float64(b.N), "plain-ms/op")
	if fuseRuns == b.N {
		b.ReportMetric(float64(ourTime)/float64(fuseTime), "x-exfat-fuse")
		b.ReportMetric(float64(fuseTime.Milliseconds())/float64(b.N), "exfat-fuse-ms/op")
	}
}

func copyFiles(b *testing.B, dir string, files [][]byte) {
	for j, data := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%04d.bin", j)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for j, data := range files {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("file%04d.bin", j)))
		if err != nil || len(got) != len(data) {
			b.Fatal(err)
		}
	}
}

// BenchmarkSequential writes and reads one 64 MiB file in 1 MiB calls on
// an in-memory device (the filesystem's own cost) and on an image file,
// with a plain file on the same disk and, where it can be mounted, the
// same file through exfat-fuse as references.
func BenchmarkSequential(b *testing.B) {
	fattest.BenchSequential(b, "exfat.img", func(b *testing.B, dev fattest.Device) fattest.SeqFS[*File] {
		mustFormat(b, dev, fattest.SeqVolumeSize, FormatOptions{})
		return mustOpen(b, dev, fattest.SeqVolumeSize)
	})
	fuseImg := fattest.Preallocated(b, "exfat.img", fattest.SeqVolumeSize).Name()
	if exec.Command("mkfs.exfat", fuseImg).Run() != nil {
		return
	}
	mnt, unmount := benchFuse(b, fuseImg)
	if mnt == "" {
		return
	}
	defer unmount()
	fattest.BenchFile(b, "reference-exfat-fuse", fattest.SeqFS[*os.File](fattest.Dir(mnt)))
}

// TestHotPathAllocs checks that reading, and overwriting inside a file,
// allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	m := newMemDev(t, 8<<20)
	mustFormat(t, m, 8<<20, FormatOptions{})
	fs := mustOpen(t, m, 8<<20)
	fattest.HotPathAllocs[*File](t, fs)
}
