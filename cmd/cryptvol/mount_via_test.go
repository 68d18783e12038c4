//go:build unix

package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startMountVia starts 'cryptvol mount VOL DIR --via via' and returns
// the lines it printed up to "Press Ctrl-C" (the connect instructions);
// the process is killed at the test's end if it still runs.
func startMountVia(t *testing.T, env []string, vol, dir, via string, creds []string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(cvBin(), append([]string{"mount", vol, dir, "--via", via}, creds...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	text := make(chan string, 1)
	go func() {
		var b strings.Builder
		r := bufio.NewReader(out)
		for {
			l, err := r.ReadString('\n')
			b.WriteString(l)
			if err != nil || strings.HasPrefix(l, "Press Ctrl-C") {
				break
			}
		}
		text <- b.String()
	}()
	select {
	case s := <-text:
		if !strings.Contains(s, "Press Ctrl-C") {
			t.Fatalf("mount --via %s printed %q; stderr: %s", via, s, stderr.String())
		}
		return cmd, s
	case <-time.After(2 * time.Minute):
		t.Fatalf("mount --via %s did not get ready; stderr: %s", via, stderr.String())
	}
	return nil, ""
}

// TestMountViaServers mounts a FAT volume with --via webdav and --via
// nfs, which serve it on loopback for the system's own client: the
// connect line printed names the serve's URL and credentials, a file put
// with curl (Digest) or libnfs's nfs-cp through them is in the volume
// after 'cryptvol unmount VOLUME' ends the mount (exit 0), read back
// with 'cryptvol get' byte for byte.
func TestMountViaServers(t *testing.T) {
	if _, err := exec.LookPath(cvBin()); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	for _, via := range []string{"webdav", "nfs"} {
		t.Run(via, func(t *testing.T) {
			tool := map[string]string{"webdav": "curl", "nfs": "nfs-cp"}[via]
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("skipping: %s is not installed", tool)
			}
			env, vol, creds := newServeVolume(t)
			data := make([]byte, 3<<20+17)
			rand.Read(data)
			src := filepath.Join(t.TempDir(), "src")
			os.WriteFile(src, data, 0o600)
			dir := filepath.Join(t.TempDir(), "mnt")
			cmd, text := startMountVia(t, env, vol, dir, via, creds)
			if via == "webdav" {
				m := regexp.MustCompile(`(?s)(http://127\.0\.0\.1:\d+/)\s.*user (\S+), password ([0-9a-f]{32})`).FindStringSubmatch(text)
				if m == nil {
					t.Fatalf("no URL and credentials in %q", text)
				}
				if st := curlStatus(t, "--digest", "-u", m[2]+":"+m[3], "-T", src, m[1]+"put.bin"); st != "201" {
					t.Fatalf("PUT through the mount's WebDAV serve: status %s", st)
				}
			} else {
				m := regexp.MustCompile(`mount -t nfs -o vers=3,tcp,port=(\d+),mountport=\d+,nolock 127\.0\.0\.1:(/[0-9a-f]{32}) ` + regexp.QuoteMeta(dir)).FindStringSubmatch(text)
				if m == nil {
					t.Fatalf("no mount line for %s in %q", dir, text)
				}
				url := "nfs://127.0.0.1" + m[2] + "/put.bin?version=3&nfsport=" + m[1] + "&mountport=" + m[1]
				if out, err := libnfs(t, "nfs-cp", src, url); err != nil {
					t.Fatalf("nfs-cp: %v\n%s", err, out)
				}
			}
			if out := cryptvolCmd(t, env, "list"); !strings.Contains(out, via) {
				t.Errorf("'cryptvol list' does not show the %s mount:\n%s", via, out)
			}
			cryptvolCmd(t, env, "unmount", vol)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the mount ended with %v", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the mount still runs a minute after 'cryptvol unmount'")
			}
			got := filepath.Join(t.TempDir(), "got")
			cryptvolCmd(t, env, append([]string{"get", vol, "/put.bin", got}, creds...)...)
			if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("put.bin read back: %d bytes (%v), want the %d put", len(b), err, len(data))
			}
		})
	}
}
