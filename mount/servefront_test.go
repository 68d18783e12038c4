//go:build linux || darwin

package mount

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// servedFront is a front end serving a fresh FAT volume in the
// background (the tests of ServeProtocol and ServeVia): what it prints,
// the table it registers in, and its result once stopped.
type servedFront struct {
	t      *testing.T
	path   string        // the volume
	tab    Table         // where it registers
	out    *bufio.Reader // what it prints
	done   chan error    // its result
	cancel context.CancelFunc
	drains sync.Once
}

// serveFront starts serve on a fresh writable FAT volume; serve prints to
// out and registers in tab.
func serveFront(t *testing.T, serve func(ctx context.Context, v *volume.Volume, fsys filesystem.FS, path string, out io.Writer, tab Table) error) *servedFront {
	t.Helper()
	v, p := newVolume(t, kinds[0], 8<<20)
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &servedFront{t: t, path: p, tab: Table{Dir: filepath.Join(t.TempDir(), "run")}, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(s.cancel)
	s.out = bufio.NewReader(pr)
	go func() {
		s.done <- serve(ctx, v, fsys, p, pw, s.tab)
		pw.Close()
	}()
	return s
}

// readLine is the next line it prints; it fails the test, with the
// serve's result, if there is none.
func (s *servedFront) readLine(what string) string {
	s.t.Helper()
	l, err := s.out.ReadString('\n')
	if err != nil {
		s.t.Fatalf("%s: %v (serve: %v)", what, err, <-s.done)
	}
	return l
}

// drain reads what else it prints, in the background, so that it never
// blocks on its output.
func (s *servedFront) drain() { s.drains.Do(func() { go io.Copy(io.Discard, s.out) }) }

// stop cancels it, which must end it cleanly and leave the table empty.
func (s *servedFront) stop(name string) {
	s.t.Helper()
	s.drain()
	s.cancel()
	if err := <-s.done; err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	if es, _ := s.tab.Entries(); len(es) != 0 {
		s.t.Errorf("table after the serve: %+v", es)
	}
}
