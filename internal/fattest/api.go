package fattest

import (
	"bytes"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// IOFSConformance writes a small tree (a nested directory, a non-ASCII
// name, a multi-cluster file, an empty file) and runs testing/fstest's
// checks on the filesystem's io/fs view.
func IOFSConformance(t *testing.T, fsys interface {
	MkdirAll(name string) error
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	IOFS() iofs.FS
}) {
	t.Helper()
	if err := fsys.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	MustWrite(t, fsys, "/a/b/c.txt", []byte("c"))
	MustWrite(t, fsys, "/a/Привет.txt", Pattern(1, 5000))
	MustWrite(t, fsys, "/top.bin", Pattern(2, 70000))
	MustWrite(t, fsys, "/empty", nil)
	if err := fstest.TestFS(fsys.IOFS(), "a/b/c.txt", "a/Привет.txt", "top.bin", "empty", "a", "a/b"); err != nil {
		t.Fatal(err)
	}
}

// streamFile is the part of an open file FileSemantics uses beyond File.
type streamFile interface {
	File
	io.ReadWriteSeeker
}

// FileSemantics checks what an open file does as os.File does on an
// empty filesystem: Seek and Read, io.EOF at and across the end, a gap
// written past the end that reads as zeros, O_EXCL on an existing file,
// O_APPEND through another spelling of the name (both formats fold case),
// and ErrNotExist for a missing name. It leaves /f.txt (22 bytes) behind.
func FileSemantics[F streamFile, I iofs.FileInfo](t *testing.T, fsys FS[F, I]) {
	t.Helper()
	f, err := fsys.OpenFile("/f.txt", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hello world"))
	if _, err := f.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 20)
	n, err := f.Read(b)
	if n != 5 || err != nil || string(b[:n]) != "world" {
		t.Errorf("Read = %d %v %q", n, err, b[:n])
	}
	if n, err := f.Read(b); n != 0 || err != io.EOF {
		t.Errorf("Read at EOF = %d %v", n, err)
	}
	if n, err := f.ReadAt(b[:3], 9); n != 2 || err != io.EOF {
		t.Errorf("ReadAt across EOF = %d %v", n, err)
	}
	// A gap written past the end reads as zeros.
	if _, err := f.WriteAt([]byte("!"), 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := append([]byte("hello world"), make([]byte, 9)...)
	want = append(want, '!')
	if got := MustRead(t, fsys, "/f.txt"); !bytes.Equal(got, want) {
		t.Errorf("content %q", got)
	}
	if _, err := fsys.OpenFile("/f.txt", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); !errors.Is(err, iofs.ErrExist) {
		t.Errorf("O_EXCL on an existing file: %v", err)
	}
	a, err := fsys.OpenFile("/F.TXT", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("+"))
	a.Close()
	if got := MustRead(t, fsys, "/f.txt"); got[len(got)-1] != '+' || len(got) != 22 {
		t.Errorf("append: %q", got)
	}
	if _, err := fsys.OpenFile("/missing", os.O_RDONLY, 0); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
