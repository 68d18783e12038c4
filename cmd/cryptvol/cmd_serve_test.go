//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

// served is a running 'cryptvol serve --webdav --json'.
type served struct {
	URL, User, Password string
	PID                 int
	cmd                 *exec.Cmd
}

// startServe starts the server on vol and waits for its JSON line.
func startServe(t *testing.T, env []string, vol string, extra ...string) *served {
	t.Helper()
	s := &served{}
	s.cmd = startServeJSON(t, env, append([]string{"serve", vol, "--webdav", "--json"}, extra...), s)
	if s.PID != s.cmd.Process.Pid {
		t.Fatalf("serve says pid %d, is %d", s.PID, s.cmd.Process.Pid)
	}
	return s
}

// startServeJSON starts 'cryptvol args...' (a serve with --json), decodes
// the line it prints when ready into ready, and kills it at the test's
// end if it still runs.
func startServeJSON(t *testing.T, env, args []string, ready any) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(cvBin(), args...)
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
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), ready); err != nil {
			t.Fatalf("serve printed %q (%v); stderr: %s", l, err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("serve did not get ready; stderr: %s", stderr.String())
	}
	return cmd
}

// curlStatus runs curl with args and returns the HTTP status it got.
func curlStatus(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("curl", append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}"}, args...)...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("curl %v: %v", args, err)
	}
	return string(out)
}

func newServeVolume(t *testing.T) (env []string, vol string, creds []string) {
	dir := t.TempDir()
	env = append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+filepath.Join(dir, "run"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("serve test password\n"), 0o600)
	vol = filepath.Join(dir, "v.hc")
	creds = []string{"--password-file", pw, "--pim", "1"}
	cryptvolCmd(t, env, append([]string{"create", vol, "--size", "64M", "--quick"}, creds...)...)
	return env, vol, creds
}

// TestServeWebDAVWithRealClients serves a FAT volume and drives it with
// clients nobody here wrote: curl for authentication and path escapes,
// rclone's webdav backend to copy a tree of Unicode names and sizes from
// 0 B to 20 MiB in and out ('rclone check --download' identical). Then the server is
// killed with SIGKILL, and what rclone was told was written must be there:
// 'cryptvol get -r' reads the same tree and 'cryptvol fsck' is clean.
func TestServeWebDAVWithRealClients(t *testing.T) {
	for _, tool := range [][2]string{{"curl", "curl"}, {"rclone", "rclone"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Skipf("skipping: %s is not installed (Debian package %s)", tool[0], tool[1])
		}
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	env, vol, creds := newServeVolume(t)
	s := startServe(t, env, vol, creds...)
	base := strings.TrimSuffix(s.URL, "/")
	auth := s.User + ":" + s.Password

	// Authentication: nothing without the credential.
	for _, c := range []struct {
		what string
		args []string
		want string
	}{
		{"no credential", []string{base + "/"}, "401"},
		{"wrong password (Basic)", []string{"-u", s.User + ":" + s.Password + "x", base + "/"}, "401"},
		{"wrong password (Digest)", []string{"--digest", "-u", s.User + ":x", base + "/"}, "401"},
		{"wrong user", []string{"-u", "root:" + s.Password, base + "/"}, "401"},
		{"no credential, PUT", []string{"-T", "/dev/null", base + "/x"}, "401"},
		{"Basic", []string{"-X", "PROPFIND", "-H", "Depth: 0", "-u", auth, base + "/"}, "207"},
		{"Digest", []string{"-X", "PROPFIND", "-H", "Depth: 0", "--digest", "-u", auth, base + "/"}, "207"},
	} {
		if got := curlStatus(t, c.args...); got != c.want {
			t.Errorf("%s: status %s, want %s", c.what, got, c.want)
		}
	}
	// Path escapes: every spelling of ".." stays inside the volume (the
	// host's /etc/passwd is not there, so 404), and an encoded slash is
	// just a separator inside it.
	for _, p := range []string{"/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2f..%2fetc%2fpasswd", "/a/..%5c..%5cetc/passwd"} {
		if got := curlStatus(t, "--path-as-is", "-u", auth, base+p); got != "404" {
			t.Errorf("GET %s: status %s, want 404", p, got)
		}
	}
	if got := curlStatus(t, "--path-as-is", "-u", auth, "-T", "/dev/null", base+"/../../escaped.txt"); got != "201" {
		t.Errorf("PUT /../../escaped.txt: status %s, want 201 (as /escaped.txt inside the volume)", got)
	}

	// rclone: a tree in and out.
	src := t.TempDir()
	rng := rand.New(rand.NewSource(27))
	names := []string{"empty.bin", "ünïcödé.txt", "日本語/ファイル.dat", "emoji 😀/ok.bin", "deep/a/b/c/Ελληνικά.bin", "spaces and (parens).txt"}
	sizes := []int{0, 1, 4095, 65537, 1 << 20, 3<<20 + 17}
	// 993 more small files in ten directories, and one of 20 MiB: the
	// 1,000 files of issue 27's acceptance, up to its largest size,
	// streamed through in both directions.
	for i := 0; i < 993; i++ {
		names = append(names, fmt.Sprintf("many/d%d/fïle %03d.bin", i%10, i))
		sizes = append(sizes, []int{0, 1, 511, 4096, 70000}[i%5])
	}
	names, sizes = append(names, "big/20MiB.bin"), append(sizes, 20<<20)
	for i, n := range names {
		data := make([]byte, sizes[i])
		rng.Read(data)
		p := filepath.Join(src, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rcEnv := append(os.Environ(), "RCLONE_CONFIG_CV_TYPE=webdav", "RCLONE_CONFIG_CV_URL="+s.URL,
		"RCLONE_CONFIG_CV_VENDOR=other", "RCLONE_CONFIG_CV_USER="+s.User,
		"RCLONE_CONFIG_CV_PASS="+obscure(t, s.Password), "RCLONE_CONFIG="+filepath.Join(t.TempDir(), "none.conf"))
	rclone := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "rclone", args...)
		cmd.Env = rcEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rclone %v: %v\n%s", args, err, out)
		}
	}
	rclone("copy", src, "cv:tree")
	// The webdav backend has no hash here: --download compares contents,
	// not only sizes.
	rclone("check", "--download", src, "cv:tree")
	back := t.TempDir()
	rclone("copy", "cv:tree", back)
	rclone("check", src, back)

	// A second writer is refused while the server holds the lock.
	r := cvRun(env, time.Minute, append([]string{"mkdir", vol, "/other"}, creds...)...)
	if r.code != exitDestroy {
		t.Errorf("mkdir while served: %v, want exit %d\n%s", r, exitDestroy, r.out)
	}

	// SIGKILL: nothing a client got a success for is lost.
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()
	got := filepath.Join(t.TempDir(), "got")
	cryptvolCmd(t, env, append([]string{"get", vol, "/tree", got, "-r"}, creds...)...)
	if out, err := exec.Command("diff", "-r", src, got).CombinedOutput(); err != nil {
		t.Errorf("cryptvol get -r after the kill differs from what rclone copied: %v\n%s", err, out)
	}
	cryptvolCmd(t, env, append([]string{"fsck", vol}, creds...)...)
}

// obscure is rclone's own encoding of a password for its config.
func obscure(t *testing.T, pw string) string {
	out, err := exec.Command("rclone", "obscure", pw).Output()
	if err != nil {
		t.Fatalf("rclone obscure: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestServeReadOnly checks that --read-only is enforced by the server:
// every method that writes is answered 405, reads work, and the volume is
// unchanged; and that 'cryptvol list' shows the server and 'cryptvol
// unmount VOLUME' stops it.
func TestServeReadOnly(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("skipping: curl is not installed (Debian package curl)")
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	env, vol, creds := newServeVolume(t)
	f := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(f, []byte("kept\n"), 0o644)
	cryptvolCmd(t, env, append([]string{"put", vol, f, "/f.txt"}, creds...)...)
	s := startServe(t, env, vol, append([]string{"--read-only"}, creds...)...)
	base := strings.TrimSuffix(s.URL, "/")
	auth := s.User + ":" + s.Password
	for _, m := range []string{"PUT", "DELETE", "MKCOL", "PROPPATCH", "LOCK", "UNLOCK", "POST", "PATCH"} {
		if got := curlStatus(t, "-X", m, "-u", auth, "--data-binary", "x", base+"/f.txt"); got != "405" {
			t.Errorf("%s: status %s, want 405", m, got)
		}
	}
	for _, m := range []string{"COPY", "MOVE"} {
		if got := curlStatus(t, "-X", m, "-u", auth, "-H", "Destination: "+base+"/g.txt", base+"/f.txt"); got != "405" {
			t.Errorf("%s: status %s, want 405", m, got)
		}
	}
	if got := curlStatus(t, "-u", auth, base+"/f.txt"); got != "200" {
		t.Errorf("GET: status %s, want 200", got)
	}
	// 'cryptvol list' shows the server; 'cryptvol unmount VOLUME' ends it
	// cleanly (exit 0) and its record goes.
	if out := cryptvolCmd(t, env, "list"); !strings.Contains(out, s.URL) || !strings.Contains(out, "webdav") {
		t.Errorf("cryptvol list does not show the server at %s:\n%s", s.URL, out)
	}
	cryptvolCmd(t, env, "unmount", vol)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve after 'cryptvol unmount': %v", err)
	}
	if out := cryptvolCmd(t, env, "list"); strings.Contains(out, s.URL) {
		t.Errorf("cryptvol list still shows the stopped server:\n%s", out)
	}
	out := cryptvolCmd(t, env, append([]string{"ls", vol, "/"}, creds...)...)
	if strings.Contains(out, "g.txt") || !strings.Contains(out, "f.txt") {
		t.Errorf("volume changed by a read-only serve:\n%s", out)
	}
}

// TestServeKillLosesNoAcknowledgedPUT uploads files one after another
// with curl and kills the server with SIGKILL while they flow: every file
// whose PUT was answered 201 must be in the volume, whole, and the next
// command must open the volume (fsck clean).
func TestServeKillLosesNoAcknowledgedPUT(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("skipping: curl is not installed (Debian package curl)")
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	env, vol, creds := newServeVolume(t)
	s := startServe(t, env, vol, creds...)
	auth := s.User + ":" + s.Password
	src := t.TempDir()
	rng := rand.New(rand.NewSource(9))
	var acked []string
	killed := false
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("f%03d.bin", i)
		data := make([]byte, 1000+rng.Intn(300<<10))
		rng.Read(data)
		p := filepath.Join(src, name)
		os.WriteFile(p, data, 0o644)
		if i == 12 {
			// The kill comes while this upload is under way.
			go func() {
				time.Sleep(20 * time.Millisecond)
				s.cmd.Process.Signal(syscall.SIGKILL)
			}()
		}
		out, _ := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--digest", "-u", auth, "-T", p, s.URL+name).Output()
		if string(out) != "201" {
			killed = true
			break
		}
		acked = append(acked, name)
	}
	s.cmd.Wait()
	if !killed {
		t.Fatal("every upload succeeded: the server was not killed during the uploads")
	}
	if len(acked) < 12 {
		t.Fatalf("only %d uploads acknowledged before the kill", len(acked))
	}
	checkAcked := func(when string) {
		got := t.TempDir()
		for _, name := range acked {
			dst := filepath.Join(got, name)
			cryptvolCmd(t, env, append([]string{"get", vol, "/" + name, dst}, creds...)...)
			a, _ := os.ReadFile(filepath.Join(src, name))
			b, err := os.ReadFile(dst)
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s: acknowledged but not in the volume as sent (%d bytes read, %v)", when, name, len(b), err)
			}
		}
	}
	checkAcked("after the kill")
	// The kill may land inside the upload's write, which leaves the
	// volume marked as interrupted (fsck exits 3 and says so); the
	// repair completes or undoes that write, and must keep every
	// acknowledged file and leave a clean filesystem.
	repair := cvRun(env, time.Minute, append([]string{"fsck", vol, "--repair"}, creds...)...)
	if repair.code != 0 && repair.code != exitRepaired {
		t.Fatalf("fsck --repair after the kill: %v\n%s", repair, repair.out)
	}
	cryptvolCmd(t, env, append([]string{"fsck", vol}, creds...)...)
	checkAcked("after fsck --repair")
	t.Logf("%d uploads acknowledged before the kill, all in the volume (fsck --repair exit %d)", len(acked), repair.code)
}
