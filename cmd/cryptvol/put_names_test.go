//go:build unix

package main

import (
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func fileHash(t *testing.T, p string) [32]byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// TestPutNamesEveryFilesystem is the acceptance "a 256-byte name is
// refused with exit 1 and nothing written, on every filesystem": the
// container file is byte for byte what it was (so on ext4 and NTFS no
// driver was even started: a mount changes the superblock), and the
// names each filesystem can store are stored (the real checker finds the
// result clean). Names are measured in the filesystem's own unit: 128
// "é" are 256 bytes (too long for ext4) but 128 UTF-16 units (fine for
// FAT, exFAT, NTFS); 128 "😀" are 256 UTF-16 units, too long everywhere.
// mkdir --parents checks every component before making any.
func TestPutNamesEveryFilesystem(t *testing.T) {
	needFSTools(t, "fsck.fat", "fsck.exfat", "e2fsck", "mkfs.ext4", "mkntfs", "ntfsfix")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	src := filepath.Join(dir, "a.txt")
	os.WriteFile(src, []byte("a\n"), 0o644)
	creds := []string{"--password-file", pw, "--pim", "1"}
	b256, b255 := strings.Repeat("b", 256), strings.Repeat("b", 255)
	e128, smile128 := strings.Repeat("é", 128), strings.Repeat("😀", 128)
	for _, fsName := range []string{"fat", "exfat", "ext4", "ntfs"} {
		t.Run(fsName, func(t *testing.T) {
			needDriverWrites(t, fsName)
			vol := filepath.Join(dir, fsName+".hc")
			cvOK(t, env, append([]string{"create", vol, "--size", "16M", "--filesystem", fsName, "--quick", "--non-interactive"}, creds...)...)
			refused := []string{"/" + b256, "/" + smile128, "/new/" + b256}
			stored := []string{"/" + b255}
			if fsName == "ext4" {
				refused = append(refused, "/"+e128)
			} else {
				stored = append(stored, "/"+e128)
			}
			if fsName == "fat" || fsName == "exfat" {
				refused = append(refused, "/a:b", "/a?", "/trailing.")
			} else {
				stored = append(stored, "/a:b")
			}
			// The device names of Windows, which reads FAT, exFAT and
			// NTFS and cannot open, rename or delete them there.
			if fsName == "ext4" {
				stored = append(stored, "/aux.c")
			} else {
				refused = append(refused, "/aux.c", "/new/CON", "/LPT1")
			}
			before := fileHash(t, vol)
			for _, name := range refused {
				r := cvRun(env, time.Minute, append([]string{"put", vol, src, name}, creds...)...)
				if r.code != exitUsage || !strings.Contains(r.out, "a.txt cannot go into the volume") || !strings.Contains(r.out, "nothing was written") {
					t.Errorf("put to %.40q: %v; want exit 1 naming a.txt", name, r)
				}
				if strings.Contains(r.out, ".cryptvol-") {
					t.Errorf("the error names a temporary file: %s", r.out)
				}
			}
			r := cvRun(env, time.Minute, append([]string{"mkdir", vol, "--parents", "/p/q/" + b256 + "/r"}, creds...)...)
			if r.code != exitUsage {
				t.Errorf("mkdir --parents with a 256-byte component: %v; want exit 1", r)
			}
			if fileHash(t, vol) != before {
				t.Fatal("a refused put or mkdir changed the container")
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
				t.Errorf("left in TMPDIR: %v", ents)
			}
			for _, name := range stored {
				cvOK(t, env, append([]string{"put", vol, src, name}, creds...)...)
			}
			// mv checks its destination's name the same way.
			stored1 := fileHash(t, vol)
			if r := cvRun(env, time.Minute, append([]string{"mv", vol, "/" + b255, "/" + b256}, creds...)...); r.code != exitUsage {
				t.Errorf("mv to a 256-byte name: %v; want exit 1", r)
			}
			if fileHash(t, vol) != stored1 {
				t.Error("a refused mv changed the container")
			}
			out := cvOK(t, env, append([]string{"ls", vol, "/"}, creds...)...)
			for _, name := range stored {
				if !strings.Contains(out, name[1:]+"\n") {
					t.Errorf("ls does not list %.40q", name)
				}
			}
			if strings.Contains(out, "p/") {
				t.Error("mkdir --parents made /p before refusing a later component")
			}
			plain := vol + ".plain"
			cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
			runChecker(t, fsName, plain)
			os.Remove(plain)
		})
	}
}

// TestPutSymlinks: cp -r's rules for links. On FAT and exFAT, which have
// none, put -r copies everything else, lists each link it left out and
// exits 1; -L copies what they point to (a link to a directory becomes
// the directory). On ext4 and NTFS (through fuse2fs and ntfs-3g) links
// stay links, dangling ones and a link given as the source included, and
// the real checker finds the result clean.
func TestPutSymlinks(t *testing.T) {
	needFSTools(t, "fsck.fat", "fsck.exfat", "e2fsck", "mkfs.ext4", "mkntfs", "ntfsfix")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	creds := []string{"--password-file", pw, "--pim", "1"}
	tree := filepath.Join(dir, "s")
	os.MkdirAll(filepath.Join(tree, "d"), 0o755)
	os.WriteFile(filepath.Join(tree, "d", "f"), []byte("data\n"), 0o644)
	os.Symlink("f", filepath.Join(tree, "d", "lnk"))
	os.Symlink("d", filepath.Join(tree, "dirlink"))
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("/nonexistent/target", dangling)
	for _, fsName := range []string{"fat", "exfat", "ext4", "ntfs"} {
		t.Run(fsName, func(t *testing.T) {
			needDriverWrites(t, fsName)
			vol := filepath.Join(dir, fsName+".hc")
			cvOK(t, env, append([]string{"create", vol, "--size", "16M", "--filesystem", fsName, "--quick", "--non-interactive"}, creds...)...)
			ls := func(p string) string { return cvOK(t, env, append([]string{"ls", "-l", vol, p}, creds...)...) }
			if fsName == "fat" || fsName == "exfat" {
				r := cvRun(env, time.Minute, append([]string{"put", vol, tree, "/", "-r"}, creds...)...)
				if r.code != exitUsage || !strings.Contains(r.out, "2 symbolic links not copied") ||
					!strings.Contains(r.out, filepath.Join(tree, "d", "lnk")) || !strings.Contains(r.out, filepath.Join(tree, "dirlink")) {
					t.Fatalf("put -r of a tree with links into %s: %v; want exit 1 listing both links", fsName, r)
				}
				if out := ls("/s/d"); !strings.Contains(out, " f\n") || strings.Contains(out, "lnk") {
					t.Fatalf("after put -r, /s/d holds:\n%s", out)
				}
				cvOK(t, env, append([]string{"put", vol, tree, "/L/", "-r", "-L"}, creds...)...)
				back := filepath.Join(dir, fsName+"-lnk")
				cvOK(t, env, append([]string{"get", vol, "/L/s/d/lnk", back}, creds...)...)
				cvOK(t, env, append([]string{"get", vol, "/L/s/dirlink/f", back + "2"}, creds...)...)
				for _, p := range []string{back, back + "2"} {
					if b, _ := os.ReadFile(p); string(b) != "data\n" {
						t.Errorf("-L copied %q for a link to f", b)
					}
				}
			} else {
				cvOK(t, env, append([]string{"put", vol, tree, dangling, "/", "-r"}, creds...)...)
				if out := ls("/s/d"); !regexpMatch(`(?m)^l .* lnk -> f$`, out) {
					t.Errorf("/s/d/lnk is not a link to f:\n%s", out)
				}
				if out := ls("/s"); !regexpMatch(`(?m)^l .* dirlink -> d$`, out) {
					t.Errorf("/s/dirlink is not a link to d:\n%s", out)
				}
				if out := ls("/"); !regexpMatch(`(?m)^l .* dangling -> /nonexistent/target$`, out) {
					t.Errorf("the dangling source is not a link:\n%s", out)
				}
				back := filepath.Join(dir, fsName+"-f")
				cvOK(t, env, append([]string{"get", vol, "/s/d/f", back}, creds...)...)
				if b, _ := os.ReadFile(back); string(b) != "data\n" {
					t.Errorf("f reads %q", b)
				}
			}
			plain := vol + ".plain"
			cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
			runChecker(t, fsName, plain)
			if fsName == "ext4" {
				// e2fsprogs' own reading of the link.
				out, err := exec.Command("debugfs", "-R", "stat /s/d/lnk", plain).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "Type: symlink") || !strings.Contains(string(out), `Fast link dest: "f"`) {
					t.Errorf("debugfs stat /s/d/lnk: %v\n%s", err, out)
				}
			}
			os.Remove(plain)
		})
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
