package webdav

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
)

// newFATImage formats a FAT image of size bytes in a file and opens it
// writable through package filesystem.
func newFATImage(t *testing.T, size int64) (filesystem.FS, string) {
	return newImage(t, "vfat", size)
}

// newImage formats a FAT ("vfat") or exFAT image of size bytes in a file
// and opens it writable through package filesystem.
func newImage(t *testing.T, typ string, size int64) (filesystem.FS, string) {
	t.Helper()
	img := filepath.Join(t.TempDir(), typ+".img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	switch typ {
	case "vfat":
		err = fat.Format(f, size, fat.FormatOptions{Type: fat.FAT32})
	case "exfat":
		err = exfat.Format(f, size, exfat.FormatOptions{})
	case "ext4":
		err = filesystem.FormatExt4(f, size, "", 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.Open(f, size, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	return fsys, img
}

// serveTest starts the handler on fsys at a loopback test server.
func serveTest(t *testing.T, fsys filesystem.FS, readOnly bool) (url, user, pass string) {
	t.Helper()
	user, pass = "cryptvol", "test-password-0123456789"
	h, err := NewHandler(fsys, Options{User: user, Password: pass, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/", user, pass
}

// litmusSummary matches a suite's closing lines: the count of skipped
// tests (printed only when some were, e.g. those that depend on a failed
// one) and the summary.
var litmusSummary = regexp.MustCompile(`(?:-> (\d+) tests? (?:was|were) skipped\.\s+)?<- summary for .(\w+).: of (\d+) tests run: (\d+) passed, (\d+) failed`)

// TestLitmus runs litmus, the WebDAV server test suite of the neon
// project, against the server on a FAT and on an exFAT filesystem: every
// test of basic, copymove, props, locks and http must pass (issue 27's
// acceptance).
func TestLitmus(t *testing.T) {
	if _, err := exec.LookPath("litmus"); err != nil {
		t.Skip("skipping: litmus is not installed (Debian package litmus)")
	}
	for _, typ := range []string{"vfat", "exfat", "ext4"} {
		t.Run(typ, func(t *testing.T) { runLitmus(t, typ) })
	}
}

func runLitmus(t *testing.T, typ string) {
	fsys, img := newImage(t, typ, 64<<20)
	url, user, pass := serveTest(t, fsys, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "litmus", "-k", url, user, pass)
	cmd.Dir = t.TempDir() // litmus writes debug.log and child.log here
	cmd.Env = append(os.Environ(), "TESTS=basic copymove props locks http")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("litmus output:\n%s", out.String())
	if ctx.Err() != nil {
		t.Fatal("litmus did not finish in time")
	}
	got := map[string][4]int{}
	for _, m := range litmusSummary.FindAllStringSubmatch(out.String(), -1) {
		skipped, _ := strconv.Atoi(m[1])
		run, _ := strconv.Atoi(m[3])
		passed, _ := strconv.Atoi(m[4])
		failed, _ := strconv.Atoi(m[5])
		got[m[2]] = [4]int{run, passed, failed, skipped}
	}
	for _, suite := range []string{"basic", "copymove", "props", "locks", "http"} {
		c, ok := got[suite]
		switch {
		case !ok:
			t.Errorf("suite %s: no summary line (did it run?)", suite)
		case c[2] != 0 || c[3] != 0 || c[1] != c[0] || c[0] == 0:
			t.Errorf("suite %s: %d of %d run passed, %d failed, %d skipped", suite, c[1], c[0], c[2], c[3])
		default:
			t.Logf("suite %s: %d of %d passed", suite, c[1], c[0])
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("litmus: %v", err)
	}
	// What litmus left must be a consistent filesystem, as the
	// filesystem's own checker sees it.
	if err := fsys.Close(); err != nil {
		t.Fatalf("close after litmus: %v", err)
	}
	fsck := map[string][2]string{"vfat": {"fsck.fat", "dosfstools"}, "exfat": {"fsck.exfat", "exfatprogs"}, "ext4": {"e2fsck", "e2fsprogs"}}[typ]
	if _, err := exec.LookPath(fsck[0]); err != nil {
		t.Logf("not checked: %s is not installed (Debian package %s)", fsck[0], fsck[1])
		return
	}
	args := []string{"-n", img}
	if typ == "ext4" {
		args = []string{"-fn", img}
	}
	if out, err := exec.Command(fsck[0], args...).CombinedOutput(); err != nil {
		t.Errorf("%s -n after litmus: %v\n%s", fsck[0], err, out)
	}
}
