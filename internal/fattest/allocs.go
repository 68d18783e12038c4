package fattest

import (
	"bytes"
	"os"
	"testing"
)

// HotPathAllocs checks that reading, and overwriting inside a file,
// allocate nothing: the chain lookup and the device I/O of an open file
// work in place, whatever the format.
func HotPathAllocs[F File](t *testing.T, fsys interface {
	WriteFile(name string, data []byte, perm os.FileMode) error
	OpenFile(name string, flag int, perm os.FileMode) (F, error)
}) {
	t.Helper()
	MustWrite(t, fsys, "/f", Pattern(1, 1<<20))
	f, err := fsys.OpenFile("/f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	if n := testing.AllocsPerRun(100, func() { f.ReadAt(buf, 12345) }); n != 0 {
		t.Errorf("ReadAt allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { f.WriteAt(buf, 54321) }); n != 0 {
		t.Errorf("WriteAt inside the file allocates %v times", n)
	}
	got := make([]byte, len(buf))
	f.ReadAt(got, 54321)
	if !bytes.Equal(got, buf) {
		t.Error("content")
	}
}
