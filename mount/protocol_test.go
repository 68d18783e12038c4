//go:build linux || darwin

package mount

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

// TestServeProtocolWebDAV serves a FAT volume over WebDAV: the JSON ready
// line says where and with which credentials, the table lists the server
// while it runs, a PUT is read back, and cancelling stops it cleanly.
func TestServeProtocolWebDAV(t *testing.T) {
	s := serveFront(t, func(ctx context.Context, v *volume.Volume, fsys filesystem.FS, p string, out io.Writer, tab Table) error {
		return ServeProtocol(ctx, v, fsys, ProtocolOptions{Config: webdav.Config{Listen: "127.0.0.1:0"}, JSON: true,
			Out: out, Log: io.Discard, Volume: p, Table: tab})
	})
	p, tab := s.path, s.tab
	line := s.readLine("the ready line")
	s.drain()
	var ready struct {
		URL, User, Password string
		PID                 int
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.URL == "" || ready.PID != os.Getpid() {
		t.Fatalf("ready line %q: %+v, %v", line, ready, err)
	}
	if es, _ := tab.Entries(); len(es) != 1 || es[0].Mode != ModeWebDAV || es[0].MountPoint != ready.URL || es[0].Volume != p {
		t.Errorf("table while serving: %+v", es)
	}
	do := func(method, body string) *http.Response {
		req, err := http.NewRequest(method, strings.TrimSuffix(ready.URL, "/")+"/hello.txt", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(ready.User, ready.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := do(http.MethodPut, "hello"); resp.StatusCode/100 != 2 {
		t.Errorf("PUT: %s", resp.Status)
	}
	resp := do(http.MethodGet, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Errorf("GET: %s %q", resp.Status, b)
	}
	s.stop("ServeProtocol")
}

// TestServeProtocolBadAddress: a server that cannot listen is the
// caller's mistake (KindUsage), and the filesystem is closed.
func TestServeProtocolBadAddress(t *testing.T) {
	v, p := newVolume(t, kinds[0], 8<<20)
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	err = ServeProtocol(context.Background(), v, fsys, ProtocolOptions{NFS: true, Config: webdav.Config{Listen: "256.0.0.1:0"},
		Out: io.Discard, Log: io.Discard, Volume: p, Table: tab})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindUsage {
		t.Errorf("ServeProtocol on a bad address: %v; want a KindUsage failure", err)
	}
	if es, _ := tab.Entries(); len(es) != 0 {
		t.Errorf("table: %+v", es)
	}
}

func TestDavURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/":  "dav://127.0.0.1:8080/",
		"https://192.0.2.10:443/": "davs://192.0.2.10:443/",
	} {
		if got := davURL(in); got != want {
			t.Errorf("davURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestServeProtocolNFS: the NFS server's JSON ready line gives the URL,
// export and port; the table lists it as nfs until it is cancelled.
func TestServeProtocolNFS(t *testing.T) {
	s := serveFront(t, func(ctx context.Context, v *volume.Volume, fsys filesystem.FS, p string, out io.Writer, tab Table) error {
		return ServeProtocol(ctx, v, fsys, ProtocolOptions{NFS: true, Config: webdav.Config{Listen: "127.0.0.1:0"}, JSON: true,
			Out: out, Log: io.Discard, Volume: p, Table: tab})
	})
	tab := s.tab
	line := s.readLine("the ready line")
	s.drain()
	var ready struct {
		URL, Export string
		Port, PID   int
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil || !strings.HasPrefix(ready.URL, "nfs://") || ready.Export == "" || ready.Port == 0 {
		t.Fatalf("ready line %q: %+v, %v", line, ready, err)
	}
	if es, _ := tab.Entries(); len(es) != 1 || es[0].Mode != ModeNFS || es[0].MountPoint != ready.URL {
		t.Errorf("table while serving: %+v", es)
	}
	s.stop("ServeProtocol")
}
