package mount

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestTable records mounts, finds them by mount point and by volume, and
// drops the record of a daemon that is gone with its mount.
func TestTable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: no mount daemons on Windows")
	}
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	dir := t.TempDir()
	live := Entry{PID: os.Getpid(), Volume: filepath.Join(dir, "v.hc"), MountPoint: filepath.Join(dir, "mnt"), Mode: ModeFiles, Started: time.Now()}
	if err := tab.Put(live); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := Entry{PID: cmd.Process.Pid, Volume: filepath.Join(dir, "w.hc"), MountPoint: filepath.Join(dir, "gone"), Mode: ModeRaw}
	if err := tab.Put(dead); err != nil {
		t.Fatal(err)
	}
	es, err := tab.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].PID != live.PID || !es[0].Alive || es[0].Mounted {
		t.Fatalf("entries: %+v; want only the live one, alive and not mounted", es)
	}
	if _, err := os.Stat(filepath.Join(tab.Dir, strconv.Itoa(dead.PID)+".json")); !os.IsNotExist(err) {
		t.Errorf("the dead daemon's record was not removed: %v", err)
	}
	for _, p := range []string{live.MountPoint, live.Volume} {
		if e, err := tab.Find(p); err != nil || e.PID != live.PID {
			t.Errorf("Find(%s): %+v, %v", p, e, err)
		}
	}
	if _, err := tab.Find(dead.MountPoint); err == nil {
		t.Error("found the dead mount")
	}
	tab.Remove(live.PID)
	if es, _ := tab.Entries(); len(es) != 0 {
		t.Errorf("after Remove: %+v", es)
	}
}
