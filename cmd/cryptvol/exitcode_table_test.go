//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/mount"
)

// helpExitCodes parses the exit-code table of `cryptvol help` into code ->
// what it says ("1 usage error (also ...)" -> 1: "usage error (also ...)").
func helpExitCodes(t *testing.T) map[int]string {
	t.Helper()
	code, out, _ := runCaptured("help")
	if code != 0 {
		t.Fatalf("cryptvol help: exit %d", code)
	}
	i := strings.Index(out, "Exit codes:")
	if i < 0 {
		t.Fatalf("cryptvol help has no exit-code table:\n%s", out)
	}
	text := strings.Join(strings.Fields(out[i+len("Exit codes:"):]), " ")
	table := map[int]string{}
	// Entries are "N what", separated by "; " outside parentheses.
	depth, start := 0, 0
	for j := 0; j <= len(text); j++ {
		if j < len(text) {
			switch text[j] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if !(text[j] == ';' && depth == 0) {
				continue
			}
		}
		entry := strings.TrimSpace(text[start:j])
		start = j + 1
		m := regexp.MustCompile(`^(\d+) (.*)$`).FindStringSubmatch(entry)
		if m == nil {
			t.Fatalf("exit-code table entry %q is not \"N meaning\"", entry)
		}
		n, _ := strconv.Atoi(m[1])
		table[n] = m[2]
	}
	return table
}

// codeFor is the code whose meaning in the table says phrase.
func codeFor(t *testing.T, table map[int]string, phrase string) int {
	t.Helper()
	found := -1
	for code, meaning := range table {
		if strings.Contains(meaning, phrase) {
			if found >= 0 {
				t.Fatalf("exit-code table: %q is said of both %d and %d", phrase, found, code)
			}
			found = code
		}
	}
	if found < 0 {
		t.Fatalf("exit-code table says %q of no code: %v", phrase, table)
	}
	return found
}

// exitTestFS builds a VeraCrypt volume holding the filesystem fsName
// (FAT by create; exFAT, ext4, NTFS by their mkfs into the data area)
// and returns it with its credential options; it skips when a tool the
// filesystem needs is missing, naming it.
func exitTestFS(t *testing.T, dir, fsName string) (string, []string) {
	t.Helper()
	need := func(tool, pkg string) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s: %s (%s) not installed", fsName, tool, pkg)
		}
	}
	if fsName == "ext4" || fsName == "NTFS" {
		// ext4 and NTFS are written through fuse2fs and ntfs-3g.
		if err := mount.Available(); err != nil {
			t.Skipf("%s: writing it needs FUSE: %v", fsName, err)
		}
		if d := map[string]string{"ext4": "ext4", "NTFS": "ntfs"}[fsName]; true {
			if _, err := mount.FindDriver(d); err != nil {
				t.Skipf("%s: %v", fsName, err)
			}
		}
	}
	img := filepath.Join(dir, "fs.img")
	const imgSize = 6 << 20
	var mk *exec.Cmd
	switch fsName {
	case "FAT":
		return newTestVolume(t, dir, "v.hc", "--size", "8M")
	case "exFAT":
		need("mkfs.exfat", "exfatprogs")
		mk = exec.Command("mkfs.exfat", img)
	case "ext4":
		need("mkfs.ext4", "e2fsprogs")
		mk = exec.Command("mkfs.ext4", "-q", "-F", img)
	case "NTFS":
		need("mkntfs", "ntfs-3g")
		mk = exec.Command("mkntfs", "-q", "-F", "-Q", img)
	}
	vol, creds := newTestVolume(t, dir, "v.hc", "--size", "8M", "--filesystem", "none")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, imgSize); err != nil {
		t.Fatal(err)
	}
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", mk, err, out)
	}
	writeImage(t, vol, img)
	return vol, creds
}

// exitCase is one command line and what the table says it exits with.
type exitCase struct {
	what   string
	args   []string // after VOLUME; creds are appended
	phrase string   // what the help's table says of the expected code
	fs     []string // only on these filesystems (nil: every one)
}

// TestExitCodesFollowTheHelpTable runs the commands that work inside a
// volume on FAT, exFAT, ext4 and NTFS and checks each exit code against
// the table `cryptvol help` prints (issue 29, item 8): a missing path, an
// existing one, a name the filesystem cannot hold, a full volume, a wrong
// password, a volume in use and Ctrl-C.
func TestExitCodesFollowTheHelpTable(t *testing.T) {
	needCLI(t)
	table := helpExitCodes(t)
	const (
		nothing   = "names nothing"
		exists    = "for mkdir exists"
		badName   = "cannot hold"
		full      = "full filesystem"
		wrongPw   = "wrong password"
		busy      = "in use by another process"
		destroy   = "would destroy data"
		interrupt = "interrupted"
		ok        = "success"
	)
	cases := []exitCase{
		{"ls of a missing path", []string{"ls", "/nosuch"}, nothing, nil},
		{"get of a missing path", []string{"get", "/nosuch", "-"}, nothing, nil},
		{"rm of a missing path", []string{"rm", "/nosuch"}, nothing, nil},
		{"rm -r of a missing path", []string{"rm", "/nosuch", "-r"}, nothing, nil},
		{"mv of a missing path", []string{"mv", "/nosuch", "/e"}, nothing, nil},
		{"mkdir under a missing path", []string{"mkdir", "/nosuch/sub"}, nothing, nil},
		{"put into a missing directory", []string{"put", "@local", "/nosuch/x.txt"}, nothing, nil},
		{"mkdir of an existing directory", []string{"mkdir", "/d"}, exists, nil},
		{"put over an existing file", []string{"put", "@local", "/f.txt"}, destroy, nil},
		{"mkdir -parents of an existing directory", []string{"mkdir", "/d", "--parents"}, ok, nil},
		// ntfs-3g stores ':' (NTFS's POSIX namespace allows it), so NTFS
		// has no name it refuses here.
		{"mkdir of a forbidden name", []string{"mkdir", "/a:b"}, badName, []string{"FAT", "exFAT"}},
		{"put to a forbidden name", []string{"put", "@local", "/a?b.txt"}, badName, []string{"FAT", "exFAT"}},
		{"mv to a forbidden name", []string{"mv", "/f.txt", "/a*b.txt"}, badName, []string{"FAT", "exFAT"}},
		{"put of more than fits", []string{"put", "@big", "/big.bin"}, full, nil},
		{"ls with a wrong password", []string{"ls", "/", "@wrongpw"}, wrongPw, nil},
	}
	for _, fsName := range []string{"FAT", "exFAT", "ext4", "NTFS"} {
		t.Run(fsName, func(t *testing.T) {
			dir := t.TempDir()
			vol, creds := exitTestFS(t, dir, fsName)
			local := filepath.Join(dir, "local.txt")
			os.WriteFile(local, []byte("local file\n"), 0o644)
			big := filepath.Join(dir, "big.bin")
			os.WriteFile(big, []byte("x"), 0o644)
			os.Truncate(big, 12<<20)
			wrong := filepath.Join(dir, "wrongpw")
			os.WriteFile(wrong, []byte("not the password\n"), 0o600)
			env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
			runCV := func(args ...string) cvResult {
				return cvRunIn(dir, env, 5*time.Minute, args...)
			}
			for _, setup := range [][]string{{"mkdir", vol, "/d"}, {"put", vol, local, "/f.txt"}} {
				if r := runCV(append(setup, creds...)...); r.code != 0 {
					t.Fatalf("%s: %v", strings.Join(setup, " "), r)
				}
			}
			for _, c := range cases {
				if c.fs != nil && !strings.Contains(" "+strings.Join(c.fs, " ")+" ", " "+fsName+" ") {
					continue
				}
				want := codeFor(t, table, c.phrase)
				args := []string{c.args[0], vol}
				cr := creds
				for _, a := range c.args[1:] {
					switch a {
					case "@local":
						a = local
					case "@big":
						a = big
					case "@wrongpw":
						cr = []string{"--password-file", wrong, "--pim", "1", "--hash", "SHA-256"}
						continue
					}
					args = append(args, a)
				}
				if r := runCV(append(args, cr...)...); r.code != want {
					t.Errorf("%s (%s): exit %d, the help's table says %d (%q)\n%v", c.what, strings.Join(args, " "), r.code, want, c.phrase, r)
				}
			}

			// A volume in use: another process holds its lock.
			want := codeFor(t, table, busy)
			hold := exec.Command("holdlock", "exclusive", vol, "cryptvol put")
			if err := hold.Start(); err != nil {
				t.Fatal(err)
			}
			held := false
			for i := 0; i < 2000 && !held; i++ {
				_, err := os.Stat(vol + ".held")
				held = err == nil
				time.Sleep(5 * time.Millisecond)
			}
			r := runCV(append([]string{"mkdir", vol, "/busy"}, creds...)...)
			hold.Process.Kill()
			hold.Wait()
			os.Remove(vol + ".held")
			if !held {
				t.Fatalf("holdlock did not take the lock")
			}
			if r.code != want {
				t.Errorf("mkdir on a volume in use: exit %d, the help's table says %d (%q)\n%v", r.code, want, busy, r)
			}

			// Ctrl-C while put copies a file (a pipe: the test decides
			// when put is inside it).
			want = codeFor(t, table, interrupt)
			fifo := filepath.Join(dir, "pipe.bin")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no named pipes:", err)
			}
			p := exec.Command("cryptvol", append([]string{"put", vol, fifo, "/pipe.bin"}, creds...)...)
			p.Env, p.Dir = env, dir
			var stderr strings.Builder
			p.Stderr = &stderr
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once put reads it
			if err != nil {
				t.Fatal(err)
			}
			w.Write(make([]byte, 64<<10))
			p.Process.Signal(os.Interrupt)
			time.Sleep(50 * time.Millisecond)
			w.Write(make([]byte, 64<<10)) // put reads again, and stops
			w.Close()
			p.Wait()
			if code := p.ProcessState.ExitCode(); code != want {
				t.Errorf("Ctrl-C during put: exit %d, the help's table says %d (%q)\n%s", code, want, interrupt, stderr.String())
			}
		})
	}
}
