package filesystem_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExt4Timestamps sets inode times with debugfs (mke2fs -d copies whole
// seconds only, and wraps after 2038) and checks that nanoseconds and the
// epoch bits of i_mtime_extra are read as the kernel reads them, and as
// debugfs prints them.
func TestExt4Timestamps(t *testing.T) {
	needTool(t, "mkfs.ext4", "debugfs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	cases := []struct {
		name         string
		secs, extra  uint32
		want         time.Time
		debugfsShows string
	}{
		{"ns", 0x5F5E1000, 123456789 << 2, time.Date(2020, 9, 13, 12, 26, 40, 123456789, time.UTC), "2020"},
		{"after-2038", 0x83abfb25, 123456789<<2 | 1, time.Date(2040, 1, 2, 3, 4, 5, 123456789, time.UTC), "2040"},
		{"before-1970", 0xFFFFFFFF, 999999999 << 2, time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), "1969"},
		{"after-2106", 0x00000000, 2, time.Unix(2<<32, 0).UTC(), "2242"},
	}
	for _, c := range cases {
		os.WriteFile(filepath.Join(src, c.name), []byte(c.name), 0o644)
	}
	img := filepath.Join(dir, "fs.img")
	run(t, "mkfs.ext4", "-q", "-F", "-d", src, img, "8M")
	for _, c := range cases {
		run(t, "debugfs", "-w", "-R", fmt.Sprintf("sif /%s mtime %#x", c.name, c.secs), img)
		run(t, "debugfs", "-w", "-R", fmt.Sprintf("sif /%s mtime_extra %#x", c.name, c.extra), img)
		if out := run(t, "debugfs", "-R", "stat /"+c.name, img); !strings.Contains(out, c.debugfsShows) {
			t.Errorf("%s: debugfs does not show year %s:\n%s", c.name, c.debugfsShows, out)
		}
	}
	fsys := openImage(t, img)
	for _, c := range cases {
		fi, err := fsys.Stat(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(c.want) {
			t.Errorf("%s: mtime %v, want %v", c.name, fi.ModTime().UTC(), c.want)
		}
	}
}
