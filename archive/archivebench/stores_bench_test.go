package archivebench

import (
	"context"
	"path/filepath"
	"testing"
)

// Go benchmarks of one read-all per store, for profiling (`cryptvol
// benchmark archive` is the comparison to quote).
func benchStore(b *testing.B, s store) {
	c := newCorpus(1, 3<<10, 10<<10, "jpeg")
	if err := s.build(context.Background(), c, 500); err != nil {
		b.Fatal(err)
	}
	var total int64
	for i := 0; i < 500; i++ {
		total += int64(len(c.data(i, nil)))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := s.readAll(); err != nil || n != total {
			b.Fatal(n, err)
		}
	}
}

func BenchmarkReadAllArchive(b *testing.B) {
	benchStore(b, newArchiveStore(filepath.Join(b.TempDir(), "a.cva")))
}

func BenchmarkReadAllZip(b *testing.B) {
	benchStore(b, &zipStore{path: filepath.Join(b.TempDir(), "a.zip"), label: "zip", method: zipDeflate})
}

func BenchmarkReadAllZipStored(b *testing.B) {
	benchStore(b, &zipStore{path: filepath.Join(b.TempDir(), "a.zip"), label: "zip-store", method: zipStored})
}

func BenchmarkReadAllFiles(b *testing.B) {
	benchStore(b, &plainStore{dir: filepath.Join(b.TempDir(), "f")})
}

func BenchmarkReadAllArchiveOneByOne(b *testing.B) {
	s := newArchiveStore(filepath.Join(b.TempDir(), "a.cva"))
	s.oneByOne = true
	benchStore(b, s)
}
