//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteOrStream: a FIFO is written in place (its reader gets the
// bytes, nothing appears beside it), /dev/null takes the output, and a
// regular file is still replaced only when the fill succeeds.
func TestWriteOrStream(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := WriteOrStream(fifo, Options{}, func(w io.Writer) error { _, err := w.Write([]byte("through the pipe")); return err }); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe" {
		t.Fatalf("the FIFO's reader got %q", b)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left beside the FIFO: %v", names)
	}
	if err := WriteOrStream(os.DevNull, Options{}, func(w io.Writer) error { _, err := w.Write([]byte("gone")); return err }); err != nil {
		t.Fatal(err)
	}

	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o600)
	boom := errors.New("boom")
	if err := WriteOrStream(p, Options{}, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("destination changed: %q", b)
	}
	if err := WriteOrStream(p, Options{}, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("destination %q, want new", b)
	}
}
