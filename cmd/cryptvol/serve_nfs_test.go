//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// servedNFS is a running 'cryptvol serve --nfs --json'.
type servedNFS struct {
	URL, Export string
	Port, PID   int
	ReadOnly    bool `json:"read_only"`
	cmd         *exec.Cmd
}

// fileURL is the libnfs URL of path p inside the export. libnfs takes
// the path as it is, without percent-decoding it (so p must not hold '?').
func (s *servedNFS) fileURL(p string) string {
	base, query, _ := strings.Cut(s.URL, "?")
	return base + strings.TrimSuffix(p, "/") + "?" + query
}

func startServeNFS(t *testing.T, env []string, vol string, extra ...string) *servedNFS {
	t.Helper()
	s := &servedNFS{}
	s.cmd = startServeJSON(t, env, append([]string{"serve", vol, "--nfs", "--json"}, extra...), s)
	if s.PID != s.cmd.Process.Pid || !strings.HasPrefix(s.URL, "nfs://127.0.0.1/") || len(s.Export) != 33 {
		t.Fatalf("serve's JSON: %+v (pid %d)", s, s.cmd.Process.Pid)
	}
	return s
}

// libnfs runs one of the libnfs-utils tools and returns its output.
func libnfs(t *testing.T, tool string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, args...).CombinedOutput()
	return string(out), err
}

func needLibnfs(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"nfs-cp", "nfs-ls", "nfs-cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed (Debian package libnfs-utils)", tool)
		}
	}
	if _, err := exec.LookPath(cvBin()); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
}

// TestServeNFSWithLibnfs serves a FAT and an ext4 volume over NFSv3 and
// copies files in and out with libnfs's nfs-cp (0 B to a few MiB, Unicode
// names, in the root and a directory), lists them with nfs-ls, replaces
// one, and checks that MOUNT of a wrong export path is refused. Then the
// server is killed with SIGKILL: 'cryptvol get' reads back every byte
// nfs-cp was told was written, and 'cryptvol fsck' is clean.
func TestServeNFSWithLibnfs(t *testing.T) {
	needLibnfs(t)
	for _, fsType := range []string{"fat", "ext4"} {
		t.Run(fsType, func(t *testing.T) {
			dir := t.TempDir()
			env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+filepath.Join(dir, "run"))
			pw := filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte("nfs test password\n"), 0o600)
			vol := filepath.Join(dir, "v.hc")
			creds := []string{"--password-file", pw, "--pim", "1"}
			cryptvolCmd(t, env, append([]string{"create", vol, "--size", "64M", "--quick", "--filesystem", fsType}, creds...)...)
			cryptvolCmd(t, env, append([]string{"mkdir", vol, "/sub dïr"}, creds...)...)
			s := startServeNFS(t, env, vol, creds...)
			if s.ReadOnly {
				t.Fatal("served read-only")
			}

			// The export path is the secret: any other is refused.
			wrong := strings.Replace(s.URL, s.Export, "/"+strings.Repeat("0", 32), 1)
			for _, u := range []string{wrong, strings.Replace(s.URL, s.Export, s.Export+"x", 1), strings.Replace(s.URL, s.Export, s.Export[:32], 1)} {
				if out, err := libnfs(t, "nfs-ls", u); err == nil || !strings.Contains(out, "MNT3ERR_ACCES") {
					t.Errorf("nfs-ls of a wrong export %s: %v, want MNT3ERR_ACCES:\n%s", u, err, out)
				}
			}

			rng := rand.New(rand.NewSource(27))
			files := []struct {
				name string
				size int
			}{
				{"/empty.bin", 0}, {"/one.bin", 1}, {"/mib-odd.bin", 1<<20 + 13}, {"/three-mib.bin", 3<<20 + 5},
				{"/ünïcödé 日本語.txt", 4097}, {"/sub dïr/Ελληνικά 😀.bin", 65537}, {"/sub dïr/empty too", 0},
			}
			src := t.TempDir()
			want := map[string][]byte{}
			for i, f := range files {
				data := make([]byte, f.size)
				rng.Read(data)
				local := filepath.Join(src, fmt.Sprint(i))
				os.WriteFile(local, data, 0o644)
				want[f.name] = data
				if out, err := libnfs(t, "nfs-cp", local, s.fileURL(f.name)); err != nil {
					t.Fatalf("nfs-cp in %s: %v\n%s", f.name, err, out)
				}
			}
			// nfs-cp creates GUARDED: it does not write over a file, and
			// the file is left as it was.
			os.WriteFile(filepath.Join(src, "short"), []byte("shorter\n"), 0o644)
			if out, err := libnfs(t, "nfs-cp", filepath.Join(src, "short"), s.fileURL("/mib-odd.bin")); err == nil {
				t.Errorf("nfs-cp over an existing file succeeded:\n%s", out)
			}

			// nfs-ls lists every name with its size.
			for _, d := range []string{"/", "/sub dïr"} {
				out, err := libnfs(t, "nfs-ls", s.fileURL(d))
				if err != nil {
					t.Fatalf("nfs-ls %s: %v\n%s", d, err, out)
				}
				for name, data := range want {
					if filepath.Dir(name) != d {
						continue
					}
					if !listed(out, filepath.Base(name), len(data)) {
						t.Errorf("nfs-ls %s does not list %q of %d bytes:\n%s", d, filepath.Base(name), len(data), out)
					}
				}
			}
			// Out again through nfs-cp, and one through nfs-cat.
			for name, data := range want {
				local := filepath.Join(t.TempDir(), "back")
				if out, err := libnfs(t, "nfs-cp", s.fileURL(name), local); err != nil {
					t.Fatalf("nfs-cp out %s: %v\n%s", name, err, out)
				}
				if got, _ := os.ReadFile(local); !bytes.Equal(got, data) {
					t.Errorf("%s: nfs-cp read back %d bytes, not the %d written", name, len(got), len(data))
				}
			}
			if out, err := exec.Command("nfs-cat", s.fileURL("/ünïcödé 日本語.txt")).Output(); err != nil || !bytes.Equal(out, want["/ünïcödé 日本語.txt"]) {
				t.Errorf("nfs-cat: %d bytes, %v", len(out), err)
			}

			// 'list' shows the server; a second writer is refused.
			if out := cryptvolCmd(t, env, "list"); !strings.Contains(out, s.URL) || !strings.Contains(out, "nfs") {
				t.Errorf("'cryptvol list' does not show the NFS server %s:\n%s", s.URL, out)
			}
			if r := cvRun(env, time.Minute, append([]string{"mkdir", vol, "/other"}, creds...)...); r.code != exitDestroy {
				t.Errorf("mkdir while served: %v, want exit %d\n%s", r, exitDestroy, r.out)
			}

			// SIGKILL: nothing nfs-cp was told was written is lost.
			if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			s.cmd.Wait()
			for name, data := range want {
				local := filepath.Join(t.TempDir(), "got")
				cryptvolCmd(t, env, append([]string{"get", vol, name, local}, creds...)...)
				if got, _ := os.ReadFile(local); !bytes.Equal(got, data) {
					t.Errorf("%s: cryptvol get after the kill read %d bytes, not the %d nfs-cp wrote", name, len(got), len(data))
				}
			}
			cryptvolCmd(t, env, append([]string{"fsck", vol}, creds...)...)
		})
	}
}

// listed reports whether nfs-ls output has a line for name with size.
func listed(out, name string, size int) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && strings.HasSuffix(l, " "+name) && f[4] == fmt.Sprint(size) {
			return true
		}
	}
	return false
}

// TestServeNFSReadOnly: with --read-only, nfs-cp cannot create, replace
// or (through the server) change anything, while reads work; 'cryptvol
// unmount' stops the server and the volume is unchanged.
func TestServeNFSReadOnly(t *testing.T) {
	needLibnfs(t)
	env, vol, creds := newServeVolume(t)
	local := filepath.Join(t.TempDir(), "f")
	os.WriteFile(local, []byte("kept as it is\n"), 0o644)
	cryptvolCmd(t, env, append([]string{"put", vol, local, "/kept.txt"}, creds...)...)
	s := startServeNFS(t, env, vol, append([]string{"--read-only"}, creds...)...)
	if !s.ReadOnly {
		t.Fatal("--read-only not reported")
	}
	if out, err := libnfs(t, "nfs-cp", local, s.fileURL("/new.txt")); err == nil {
		t.Errorf("nfs-cp of a new file into a read-only serve succeeded:\n%s", out)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("x"), 0o644)
	if out, err := libnfs(t, "nfs-cp", other, s.fileURL("/kept.txt")); err == nil {
		t.Errorf("nfs-cp over a file of a read-only serve succeeded:\n%s", out)
	}
	if out, err := exec.Command("nfs-cat", s.fileURL("/kept.txt")).Output(); err != nil || string(out) != "kept as it is\n" {
		t.Errorf("nfs-cat on a read-only serve: %q, %v", out, err)
	}
	out, err := libnfs(t, "nfs-ls", s.URL)
	if err != nil || !listed(out, "kept.txt", 14) || strings.Contains(out, "new.txt") {
		t.Errorf("nfs-ls: %v\n%s", err, out)
	}
	// 'cryptvol unmount VOLUME' stops it (SIGTERM, a clean exit).
	cryptvolCmd(t, env, "unmount", vol)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve after 'cryptvol unmount': %v", err)
	}
	got := filepath.Join(t.TempDir(), "got")
	cryptvolCmd(t, env, append([]string{"get", vol, "/kept.txt", got}, creds...)...)
	if b, _ := os.ReadFile(got); string(b) != "kept as it is\n" {
		t.Errorf("file changed by a read-only serve: %q", b)
	}
}
