package fat

import (
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os"
	"testing"
	"time"
)

// BenchmarkSmallFiles writes 1,000 files of 3–10 KB into a FAT volume in an
// image file on this disk and reads them back (through a fresh Open), and
// does the same copy to and from a plain directory on the same disk; it
// reports the ratio of the two times as "x-plain-dir" (the requirement is
// at most 3).
func BenchmarkSmallFiles(b *testing.B) {
	fattest.BenchSmallFiles(b, "fat", 512<<20, func(img *os.File, size int64) error {
		return Format(img, size, FormatOptions{})
	}, Open, nil)
}

// BenchmarkSequential writes and reads one 64 MiB file in 1 MiB calls, on
// an in-memory device (the filesystem's own cost) and on an image file,
// with a plain file on the same disk as the reference.
func BenchmarkSequential(b *testing.B) {
	fattest.BenchSequential(b, "fat.img", func(b *testing.B, dev fattest.Device) fattest.SeqFS[*File] {
		mustFormat(b, dev, fattest.SeqVolumeSize, FormatOptions{})
		return mustOpen(b, dev, fattest.SeqVolumeSize)
	})
}

// TestHotPathAllocs checks that reading, and overwriting inside a file,
// allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	m := newMemDev(t, 10<<20)
	mustFormat(t, m, 10<<20, FormatOptions{})
	fs := mustOpen(t, m, 10<<20)
	fattest.HotPathAllocs[*File](t, fs)
}

// BenchmarkFirstRemove measures what the cross-link guard costs: the first
// Remove of a session walks the whole tree (every directory read) to make
// sure the clusters it frees belong to nobody else. One iteration is an
// Open, a Remove and a Close of a 1 GiB volume (in memory) holding 10,000
// files in 100 directories, once with the walk and once without
// (alternating, in the same run); "x-without-walk" is the ratio of the
// best times of the two and "walk-ms" the walk's own time (the difference
// of the best times: best of N, because the machine is shared).
func BenchmarkFirstRemove(b *testing.B) {
	const size = 1 << 30
	dev := newSparseDev(b, size)
	mustFormat(b, dev, size, FormatOptions{})
	fs := mustOpen(b, dev, size)
	body := pattern(5, 1000)
	for d := 0; d < 100; d++ {
		if err := fs.Mkdir(fmt.Sprintf("/dir %02d", d)); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 100; f++ {
			mustWrite(b, fs, fmt.Sprintf("/dir %02d/file number %03d.txt", d, f), body)
		}
	}
	if err := fs.Close(); err != nil {
		b.Fatal(err)
	}
	with, without := time.Duration(1<<62), time.Duration(1<<62)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, skip := range []bool{false, true} {
			start := time.Now()
			fs := mustOpen(b, dev, size)
			fs.verified = skip
			if err := fs.Remove("/dir 50/file number 050.txt"); err != nil {
				b.Fatal(err)
			}
			if err := fs.Close(); err != nil {
				b.Fatal(err)
			}
			if el := time.Since(start); skip {
				without = min(without, el)
			} else {
				with = min(with, el)
			}
			b.StopTimer()
			fs = mustOpen(b, dev, size)
			mustWrite(b, fs, "/dir 50/file number 050.txt", body)
			fs.Close()
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(with)/float64(without), "x-without-walk")
	b.ReportMetric(float64(with-without)/1e6, "walk-ms")
}
