package fattest

import (
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SmallFilesFS is what BenchSmallFiles does with a filesystem.
type SmallFilesFS interface {
	Mkdir(name string) error
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	ReadFile(name string) ([]byte, error)
	Close() error
}

// HostRef is a further reference for BenchSmallFiles: another
// implementation mounted on the host. Prepare makes its image in dir
// (untimed) and returns "" when it cannot; Mount mounts an image, or
// returns "" when that cannot be done here.
type HostRef struct {
	Name    string // "exfat-fuse": the metrics are x-<Name> and <Name>-ms/op
	Prepare func(b *testing.B, dir string, size int64) (img string)
	Mount   func(b *testing.B, img string) (dir string, unmount func())
}

// BenchSmallFiles writes the SmallFiles into a volume of size bytes in an
// image file (formatted by format) and reads them back through a fresh
// open, and does the same copy to and from a plain directory on the same
// disk (and through ref, if not nil: mount, write, unmount, mount, read,
// unmount). It reports the ratio of the times as "x-plain-dir" (and
// "x-"+ref.Name) and each one's milliseconds per op; label names the
// filesystem's own metric (label+"-ms/op").
func BenchSmallFiles[F SmallFilesFS](b *testing.B, label string, size int64, format func(img *os.File, size int64) error, open func(dev io.ReaderAt, size int64) (F, error), ref *HostRef) {
	files := SmallFiles()
	var total int64
	for _, f := range files {
		total += int64(len(f))
	}
	var ourTime, plainTime, refTime time.Duration
	refRuns := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		img, err := os.Create(filepath.Join(dir, "vol.img"))
		if err != nil {
			b.Fatal(err)
		}
		img.Truncate(size)
		if err := format(img, size); err != nil {
			b.Fatal(err)
		}
		plain := filepath.Join(dir, "plain")
		os.Mkdir(plain, 0o755)
		refImg := ""
		if ref != nil {
			refImg = ref.Prepare(b, dir, size)
		}
		b.StartTimer()

		start := time.Now()
		fs, err := open(PlainFile{F: img}, size)
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
		if fs, err = open(PlainFile{F: img}, size); err != nil {
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

		if refImg != "" {
			start = time.Now()
			mnt, unmount := ref.Mount(b, refImg)
			if mnt != "" {
				os.Mkdir(filepath.Join(mnt, "data"), 0o755)
				writeFiles(b, filepath.Join(mnt, "data"), files)
				unmount()
				mnt, unmount = ref.Mount(b, refImg)
				readFiles(b, filepath.Join(mnt, "data"), files)
				unmount()
				refTime += time.Since(start)
				refRuns++
			}
		}
	}
	b.SetBytes(2 * total)
	b.ReportMetric(float64(ourTime)/float64(plainTime), "x-plain-dir")
	b.ReportMetric(float64(ourTime.Milliseconds())/float64(b.N), label+"-ms/op")
	b.ReportMetric(float64(plainTime.Milliseconds())/float64(b.N), "plain-ms/op")
	if ref != nil && refRuns == b.N {
		b.ReportMetric(float64(ourTime)/float64(refTime), "x-"+ref.Name)
		b.ReportMetric(float64(refTime.Milliseconds())/float64(b.N), ref.Name+"-ms/op")
	}
}

// copyFiles writes files into the host directory dir and reads them back.
func copyFiles(b *testing.B, dir string, files [][]byte) {
	writeFiles(b, dir, files)
	readFiles(b, dir, files)
}

func writeFiles(b *testing.B, dir string, files [][]byte) {
	for j, data := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%04d.bin", j)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func readFiles(b *testing.B, dir string, files [][]byte) {
	for j, data := range files {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("file%04d.bin", j)))
		if err != nil || len(got) != len(data) {
			b.Fatal(err)
		}
	}
}
