//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
)

// TestPutBatchIntoFullRoot puts 300 files into the root directory of a
// FAT16 volume, which holds 512 entries: one file by one they fit (a
// slot each, and the temporary name's six while it is written), but a
// batch's temporary names do not, so put renames what it has into place
// when the root is full, and goes on. Every file is there, whole, with
// the volume clean, for far fewer flushes than the 600 of renaming each.
func TestPutBatchIntoFullRoot(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("crash-pass\n"), 0o600)
	c := crashContainers[0]
	vol := filepath.Join(dir, "v.hc")
	cvIn(t, append([]string{"create", vol, "--size", "32M", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", "fat16"}, c.create...)...)
	args := []string{"put", vol}
	want := map[string]string{}
	for i := 0; i < 300; i++ {
		p := filepath.Join(dir, fmt.Sprintf("f%03d.txt", i))
		body := strings.Repeat(fmt.Sprintf("%d ", i), 100+i)
		os.WriteFile(p, []byte(body), 0o644)
		args = append(args, p)
		want[fmt.Sprintf("/f%03d.txt", i)] = body
	}
	var rec *crashsim.Recorder
	testWrapDevice = func(d volume.Device) volume.Device { rec = crashsim.NewRecorder(d); return rec }
	defer func() { testWrapDevice = nil }()
	cvIn(t, append(append(args, "/", "--password-file", pw), c.flags...)...)
	testWrapDevice = nil
	t.Logf("put of 300 files into a FAT16 root: %d flushes", rec.Flushes())
	if rec.Flushes() >= 100 {
		t.Errorf("put of 300 files into the root flushed %d times: not batched", rec.Flushes())
	}
	if err := judgeFiles(t, vol, c, func(fsys filesystem.FS) error {
		ents, err := fsys.ReadDir("/")
		if err != nil {
			return err
		}
		if len(ents) != len(want) {
			return fmt.Errorf("the root holds %d entries, not %d", len(ents), len(want))
		}
		return allThere(fsys, want)
	}); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(append([]string{"fsck", vol, "--password-file", pw}, c.flags...)...); code != 0 {
		t.Fatalf("fsck after the put: exit %d\n%s%s", code, out, errOut)
	}
}
