package fattest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// PlainFile hides *os.File's Sync method, so the filesystem side of a
// comparison with plain files does no fsync either (the plain copy does
// none).
type PlainFile struct{ F *os.File }

func (p PlainFile) ReadAt(b []byte, off int64) (int, error)  { return p.F.ReadAt(b, off) }
func (p PlainFile) WriteAt(b []byte, off int64) (int, error) { return p.F.WriteAt(b, off) }

// SmallFiles are 1,000 files of 3 to 10 KB.
func SmallFiles() [][]byte {
	files := make([][]byte, 1000)
	for i := range files {
		files[i] = Pattern(i, 3000+(i*7919)%7001)
	}
	return files
}

// Preallocated returns an image file whose blocks all exist on the host
// disk, so that the benchmarks measure the filesystem and not the host's
// block allocation for a sparse file.
func Preallocated(b *testing.B, name string, size int64) *os.File {
	_, f := Kit{Img: name}.Image(b, size)
	zero := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zero)) {
		if _, err := f.WriteAt(zero, off); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// Device is what a filesystem package formats and opens.
type Device interface {
	io.ReaderAt
	io.WriterAt
}

// SeqFile and SeqFS are what BenchSequential does with a filesystem.
type SeqFile interface {
	io.Writer
	io.ReaderAt
	io.Closer
}

type SeqFS[F SeqFile] interface {
	Create(name string) (F, error)
	Open(name string) (F, error)
}

// Sequential sizes: one file of SeqFileSize bytes on a volume of
// SeqVolumeSize, in calls of SeqChunk.
const (
	SeqFileSize   = 64 << 20
	SeqVolumeSize = 256 << 20
	SeqChunk      = 1 << 20
)

// BenchSequential writes and reads one 64 MiB file in 1 MiB calls, through
// a filesystem that mount formats and opens on an in-memory device (the
// filesystem's own cost) and on an image file named name, and through a
// plain file on the same disk as the reference.
func BenchSequential[F SeqFile](b *testing.B, name string, mount func(b *testing.B, dev Device) SeqFS[F]) {
	for _, kind := range []string{"memory", "image-file"} {
		var d Device
		if kind == "memory" {
			d = NewMemDev(b, SeqVolumeSize)
		} else {
			d = PlainFile{Preallocated(b, name, SeqVolumeSize)}
		}
		BenchFile(b, kind, mount(b, d))
	}
	chunk, buf := Pattern(1, SeqChunk), make([]byte, SeqChunk)
	ref := Preallocated(b, name, SeqVolumeSize)
	b.Run("write/reference-plain-file", func(b *testing.B) {
		b.SetBytes(SeqFileSize)
		for i := 0; i < b.N; i++ {
			for off := int64(0); off < SeqFileSize; off += int64(len(chunk)) {
				if _, err := ref.WriteAt(chunk, off); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("read/reference-plain-file", func(b *testing.B) {
		b.SetBytes(SeqFileSize)
		readAll(b, ref, buf)
	})
}

// readAll reads the sequential file b.N times.
func readAll(b *testing.B, f io.ReaderAt, buf []byte) {
	for i := 0; i < b.N; i++ {
		for off := int64(0); off < SeqFileSize; off += int64(len(buf)) {
			if _, err := f.ReadAt(buf, off); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchFile runs "write/"+label (create /big.bin and write it in calls of
// SeqChunk) and "read/"+label (read it back) on fs.
func BenchFile[F SeqFile](b *testing.B, label string, fs SeqFS[F]) {
	chunk, buf := Pattern(1, SeqChunk), make([]byte, SeqChunk)
	b.Run("write/"+label, func(b *testing.B) {
		b.SetBytes(SeqFileSize)
		for i := 0; i < b.N; i++ {
			f, err := fs.Create("/big.bin")
			if err != nil {
				b.Fatal(err)
			}
			for off := 0; off < SeqFileSize; off += len(chunk) {
				if _, err := f.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read/"+label, func(b *testing.B) {
		b.SetBytes(SeqFileSize)
		f, err := fs.Open("/big.bin")
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		readAll(b, f, buf)
	})
}

// Dir is a host directory as a SeqFS (a FUSE mount of a reference
// implementation, say).
type Dir string

func (d Dir) Create(name string) (*os.File, error) { return os.Create(filepath.Join(string(d), name)) }
func (d Dir) Open(name string) (*os.File, error)   { return os.Open(filepath.Join(string(d), name)) }
