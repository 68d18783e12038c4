//go:build linux || darwin

package mount

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// lockedBuffer collects what a serving goroutine writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeForeground mounts a FAT volume's files in the foreground,
// records it in the table while it lasts, says so, and on cancellation
// unmounts with every write in the container.
func TestServeForeground(t *testing.T) {
	needFUSE(t)
	first, p := newVolume(t, kinds[0], 8<<20)
	first.Close() // Serve opens it, and takes its lock
	dir := mountDir(t)
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	var msgs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeOptions{Volume: p, MountPoint: dir, Table: tab, Messages: &msgs,
			Open: func(context.Context) (*volume.Volume, error) { return volume.Open(p, creds()) }})
	}()
	var es []Entry
	for i := 0; i < 500 && len(es) == 0; i++ {
		select {
		case err := <-served:
			t.Fatalf("Serve ended before it was mounted: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		es, _ = tab.Entries()
	}
	if len(es) != 1 || es[0].MountPoint != dir || es[0].Mode != ModeFiles || !es[0].Mounted {
		t.Fatalf("table while mounted: %+v", es)
	}
	if err := os.WriteFile(filepath.Join(dir, "kept.txt"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	want := "Mounted " + p + " at " + dir + " (files, read-write). Press Ctrl-C or run 'cryptvol unmount " + dir + "' to unmount.\n"
	if got := msgs.String(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "Unmounted "+dir+".\n") {
		t.Errorf("messages:\n%s\nwant the Mounted line:\n%s and the Unmounted line", got, want)
	}
	if es, _ := tab.Entries(); len(es) != 0 {
		t.Errorf("table after the mount: %+v", es)
	}
	if _, ok := IsMountPoint(dir); ok {
		t.Error("still mounted")
	}
	v, err := volume.Open(p, creds())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	m, err := MountFiles(dir, v, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmount()
	if b, err := os.ReadFile(filepath.Join(dir, "kept.txt")); err != nil || string(b) != "kept" {
		t.Errorf("after remounting: %q, %v", b, err)
	}
}

// TestServeOpenFails: the open's error comes back as it is, nothing
// recorded.
func TestServeOpenFails(t *testing.T) {
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	err := Serve(context.Background(), ServeOptions{Volume: "/nonexistent.hc", MountPoint: t.TempDir(), Table: tab,
		Open: func(context.Context) (*volume.Volume, error) { return nil, volume.ErrWrongPassword }})
	var f *Failure
	if err != volume.ErrWrongPassword || errors.As(err, &f) {
		t.Errorf("Serve with a failing open: %v; want volume.ErrWrongPassword as it is", err)
	}
	if es, _ := tab.Entries(); len(es) != 0 {
		t.Errorf("table: %+v", es)
	}
}

// TestMountPaths: absolute paths back; each refusal with its kind.
func TestMountPaths(t *testing.T) {
	needFUSE(t)
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	_, p := newVolume(t, kinds[0], 1<<20)
	dir := mountDir(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	relVol, _ := filepath.Rel(wd, p)
	if v, d, err := MountPaths(tab, relVol, dir); err != nil || v != p || d != dir {
		t.Errorf("MountPaths(%s, %s) = %s, %s, %v; want %s, %s", relVol, dir, v, d, err, p, dir)
	}
	for _, c := range []struct {
		vol, mnt string
		kind     Kind
	}{
		{filepath.Join(t.TempDir(), "missing.hc"), dir, KindIO},
		{p, filepath.Join(t.TempDir(), "missing"), KindUsage},
		{p, notDir, KindUsage},
	} {
		_, _, err := MountPaths(tab, c.vol, c.mnt)
		var f *Failure
		if !errors.As(err, &f) || f.Kind != c.kind {
			t.Errorf("MountPaths(%s, %s): %v; want kind %d", c.vol, c.mnt, err, c.kind)
		}
	}
	// A volume a live mount serves is refused, here and for VolumePath.
	if err := tab.Put(Entry{PID: os.Getpid(), Volume: p, MountPoint: filepath.Join(t.TempDir(), "elsewhere"), Mode: ModeFiles}); err != nil {
		t.Fatal(err)
	}
	_, _, err := MountPaths(tab, p, dir)
	_, verr := VolumePath(tab, p)
	for _, err := range []error{err, verr} {
		var f *Failure
		if !errors.As(err, &f) || f.Kind != KindInUse || !strings.Contains(err.Error(), "mounting it twice would corrupt it") {
			t.Errorf("a mounted volume: %v; want a KindInUse failure", err)
		}
	}
}
