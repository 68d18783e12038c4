//go:build linux || darwin

package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// TestServeViaWebDAV: the WebDAV front end of `mount --via webdav` says
// where it serves and how to connect, is in the table while it runs, and
// stops cleanly when cancelled.
func TestServeViaWebDAV(t *testing.T) {
	s := serveFront(t, func(ctx context.Context, v *volume.Volume, fsys filesystem.FS, p string, out io.Writer, tab Table) error {
		return ServeVia(ctx, v, fsys, ViaOptions{Front: FrontWebDAV, Why: "asked for", Volume: p, Dir: "Z:", Out: out, Table: tab})
	})
	p, tab := s.path, s.tab
	var lines []string
	for len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "Press Ctrl-C") {
		lines = append(lines, s.readLine(fmt.Sprintf("after %q", lines)))
	}
	s.drain()
	if !strings.HasPrefix(lines[0], "Serving "+p+" over WebDAV at http://127.0.0.1:") || !strings.HasSuffix(lines[0], " (asked for). Connect with:\n") {
		t.Errorf("first line %q", lines[0])
	}
	if want := "Press Ctrl-C (or run 'cryptvol unmount " + p + "') to stop.\n"; lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	es, _ := tab.Entries()
	if len(es) != 1 || es[0].Mode != ModeWebDAV || !strings.HasPrefix(es[0].MountPoint, "http://127.0.0.1:") || es[0].Volume != p {
		t.Errorf("table while serving: %+v", es)
	}
	s.stop("ServeVia")
}

// TestServeViaFUSE: the go-fuse mount is not ServeVia's (KindUsage).
func TestServeViaFUSE(t *testing.T) {
	v, p := newVolume(t, kinds[0], 8<<20)
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = ServeVia(context.Background(), v, fsys, ViaOptions{Front: FrontFUSE, Volume: p, Dir: t.TempDir(), Out: io.Discard,
		Table: Table{Dir: filepath.Join(t.TempDir(), "run")}})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindUsage {
		t.Errorf("ServeVia(fuse): %v; want a KindUsage failure", err)
	}
}
