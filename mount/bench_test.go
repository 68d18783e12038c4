//go:build linux || darwin

package mount

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/internal/diskio"
)

// BenchmarkMountWrite writes a 64 MiB file through a files mount in 1 MiB
// writes with an fsync at the end (the I/O benchmark's pattern), and
// BenchmarkRawWrite the same to a plain file in the same temporary
// directory, for the ratio. `cryptvol benchmark io` and bench/iobench/iobench.sh
// are the full comparison.
func BenchmarkMountWrite(b *testing.B) {
	needFUSE(b)
	v, p := newVolume(b, kinds[0], 80<<20)
	dir := mountDir(b)
	m, err := MountFiles(dir, v, Options{Container: p})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Unmount()
	benchWrite(b, filepath.Join(dir, "bench.bin"), os.O_TRUNC)
}

// BenchmarkRawWrite overwrites an allocated file, as the raw pass of
// `cryptvol benchmark io` does.
func BenchmarkRawWrite(b *testing.B) {
	p := filepath.Join(b.TempDir(), "bench.bin")
	if err := diskio.CreateAllocated(p, 64<<20); err != nil {
		b.Fatal(err)
	}
	benchWrite(b, p, 0)
}

func benchWrite(b *testing.B, p string, trunc int) {
	blk := diskio.AlignedBuffer(1 << 20)
	copy(blk, randomBytes(len(blk)))
	b.SetBytes(64 << 20)
	for b.Loop() {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|trunc, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 64; i++ {
			if _, err := f.Write(blk); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkMountRead reads a 64 MiB file through a files mount in 1 MiB
// reads, after dropping it and the container from the page cache.
func BenchmarkMountRead(b *testing.B) {
	needFUSE(b)
	v, p := newVolume(b, kinds[0], 80<<20)
	dir := mountDir(b)
	m, err := MountFiles(dir, v, Options{Container: p})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Unmount()
	f := filepath.Join(dir, "bench.bin")
	if err := os.WriteFile(f, randomBytes(64<<20), 0o600); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(64 << 20)
	for b.Loop() {
		b.StopTimer()
		if c, err := os.Open(p); err == nil {
			diskio.DropCache(c)
			c.Close()
		}
		b.StartTimer()
		r, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		for {
			n, err := r.Read(buf)
			if n == 0 || err != nil {
				break
			}
		}
		r.Close()
	}
}
