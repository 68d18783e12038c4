package mount

import (
	"strings"
	"testing"
)

// TestWriteList: the header, one aligned line per entry, the mode's
// details (loop device, driver) and a failed or gone process said in the
// PID column.
func TestWriteList(t *testing.T) {
	es := []Entry{
		{PID: 10, Volume: "/v/a.hc", MountPoint: "/m/a", Mode: ModeFiles, Alive: true},
		{PID: 11, Volume: "/v/b.luks", MountPoint: "/m/b", Mode: ModeLoop, FSType: "ext4", LoopDevice: "/dev/loop3", ReadOnly: true, Alive: true},
		{PID: 12, Volume: "/v/c.hc", MountPoint: "/m/c", Mode: ModeDriver, FSType: "ntfs-3g", Error: "disk full"},
		{PID: 13, Volume: "/v/d.hc", MountPoint: "/m/d", Mode: ModeRaw},
	}
	var b strings.Builder
	if err := WriteList(&b, es); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"MOUNTPOINT  VOLUME     MODE                       ACCESS  PID\n" +
		"/m/a        /v/a.hc    files                      rw      10\n" +
		"/m/b        /v/b.luks  loop (ext4 on /dev/loop3)  ro      11\n" +
		"/m/c        /v/c.hc    driver (ntfs-3g)           rw      12 (failed: disk full)\n" +
		"/m/d        /v/d.hc    raw                        rw      13 (gone: run 'cryptvol unmount /m/d')\n"
	if b.String() != want {
		t.Errorf("WriteList:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWriteListEmpty: no mounts, the header alone.
func TestWriteListEmpty(t *testing.T) {
	var b strings.Builder
	if err := WriteList(&b, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "MOUNTPOINT  VOLUME  MODE  ACCESS  PID\n"; got != want {
		t.Errorf("WriteList(nil) = %q, want %q", got, want)
	}
}
