package mount

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// needUnmount skips where Unmount cannot run: not root and no
// fusermount3.
func needUnmount(t *testing.T) {
	t.Helper()
	if _, err := fusermount(); err != nil && os.Geteuid() != 0 {
		t.Skipf("skipping: %v", err)
	}
}

// TestUnmountRecordedGoneDaemon: the record of a daemon that died and
// whose mount is gone is only removed.
func TestUnmountRecordedGoneDaemon(t *testing.T) {
	needUnmount(t)
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	dir := t.TempDir()
	e := Entry{PID: exitedPID(t), Volume: filepath.Join(dir, "v.hc"), MountPoint: filepath.Join(dir, "mnt"), Mode: ModeFiles}
	if err := os.Mkdir(e.MountPoint, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := tab.Put(e); err != nil {
		t.Fatal(err)
	}
	if err := UnmountRecorded(context.Background(), tab, e, false, time.Second); err != nil {
		t.Fatalf("UnmountRecorded of a gone daemon: %v", err)
	}
	if _, err := os.Stat(tab.file(e.PID)); !os.IsNotExist(err) {
		t.Errorf("the record is still there: %v", err)
	}
}

// TestUnmountUnrecordedNotMounted: a directory that is no mount point is
// the caller's mistake (KindUsage), wrapping ErrNotMounted.
func TestUnmountUnrecordedNotMounted(t *testing.T) {
	needUnmount(t)
	err := UnmountUnrecorded(t.TempDir(), false)
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindUsage || !errors.Is(err, ErrNotMounted) {
		t.Errorf("UnmountUnrecorded of a plain directory: %v; want a KindUsage failure wrapping ErrNotMounted", err)
	}
}
