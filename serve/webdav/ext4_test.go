package webdav

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// TestServeExt4 serves an ext4 image made by mkfs.ext4 -d, read-write
// through the in-process ext4 writer: its files read back as written, a
// PUT lands (and e2fsck -fn finds the image clean afterwards), and
// symbolic links that point outside (absolute, or up through "..")
// never reach the host's files.
func TestServeExt4(t *testing.T) {
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Skip("skipping: mkfs.ext4 is not installed (Debian package e2fsprogs)")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	os.WriteFile(filepath.Join(tree, "sub", "hello.txt"), []byte("hello from ext4\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(tree, "abs-link"))
	os.Symlink("../../../../../../etc/passwd", filepath.Join(tree, "sub", "up-link"))
	img := filepath.Join(dir, "ext4.img")
	if out, err := exec.Command(mkfs, "-q", "-F", "-d", tree, img, "8M").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(fsys, Config{})
	if err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() { s.Shutdown(t.Context()) }) // its second call would wait forever
	defer stop()
	if s.ReadOnly {
		t.Error("ext4 served read-only")
	}
	do := func(method, p, body string) (int, string) {
		req, _ := http.NewRequest(method, strings.TrimSuffix(s.URL, "/")+p, strings.NewReader(body))
		req.SetBasicAuth(s.User, s.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/sub/hello.txt", ""); code != 200 || body != "hello from ext4\n" {
		t.Errorf("GET /sub/hello.txt: %d %q", code, body)
	}
	if code, _ := do("PUT", "/sub/new.txt", "written over WebDAV\n"); code != http.StatusCreated {
		t.Errorf("PUT on ext4: %d, want 201", code)
	}
	if code, body := do("GET", "/sub/new.txt", ""); code != 200 || body != "written over WebDAV\n" {
		t.Errorf("GET /sub/new.txt: %d %q", code, body)
	}
	host, _ := os.ReadFile("/etc/passwd")
	for _, p := range []string{"/abs-link", "/sub/up-link"} {
		code, body := do("GET", p, "")
		if len(host) > 0 && strings.Contains(body, string(host)) {
			t.Errorf("GET %s served the host's /etc/passwd", p)
		}
		// The link resolves inside the volume, which has no /etc.
		if code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	stop()
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	if e2fsck, err := exec.LookPath("e2fsck"); err == nil {
		if out, err := exec.Command(e2fsck, "-fn", img).CombinedOutput(); err != nil {
			t.Errorf("e2fsck -fn after the PUT: %v\n%s", err, out)
		}
	}
}
