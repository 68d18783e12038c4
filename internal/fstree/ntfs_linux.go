//go:build linux

package fstree

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/sys/unix"
)

// ntfs3g mounts img with ntfs-3g (in the foreground, so that unmounting
// waits for it to finish writing) and returns the mount point and the
// function that unmounts it. It skips when FUSE cannot be used here.
func ntfs3g(t T, img string, opts string) (string, func()) {
	t.Helper()
	needTool(t, "ntfs-3g", "mkntfs")
	if os.Geteuid() != 0 {
		t.Skipf("ntfs-3g needs root to mount an image file here (CI runs as root)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: ntfs-3g cannot mount")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	var log bytes.Buffer
	cmd := exec.Command("ntfs-3g", "-o", "no_detach,"+opts, img, mnt)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for i := 0; ; i++ {
		if isMountPoint(mnt) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("ntfs-3g exited: %v\n%s", err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if i > 200 {
			cmd.Process.Kill()
			t.Fatalf("ntfs-3g did not mount in 10 s\n%s", log.String())
		}
	}
	unmounted := false
	unmount := func() {
		if unmounted {
			return
		}
		unmounted = true
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			cmd.Process.Kill()
			<-done
			t.Fatalf("umount: %v\n%s", err, out)
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("ntfs-3g did not exit after umount")
		}
	}
	t.Cleanup(unmount)
	return mnt, unmount
}

func isMountPoint(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte(" "+dir+" "))
}

// ReparseLink builds an NTFS reparse buffer: a symbolic link (relative
// or not) or, with junction, a mount point.
func ReparseLink(subst, print string, relative, junction bool) []byte {
	enc := func(s string) []byte {
		u := utf16.Encode([]rune(s))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			binary.LittleEndian.PutUint16(b[2*i:], c)
		}
		return b
	}
	s, p := enc(subst), enc(print)
	var body bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&body, le, uint16(0))
	binary.Write(&body, le, uint16(len(s)))
	binary.Write(&body, le, uint16(len(s)+2))
	binary.Write(&body, le, uint16(len(p)))
	if !junction {
		flags := uint32(0)
		if relative {
			flags = 1
		}
		binary.Write(&body, le, flags)
	}
	body.Write(s)
	body.Write([]byte{0, 0})
	body.Write(p)
	body.Write([]byte{0, 0})
	tag := uint32(0xA000000C)
	if junction {
		tag = 0xA0000003
	}
	var out bytes.Buffer
	binary.Write(&out, le, tag)
	binary.Write(&out, le, uint16(body.Len()))
	binary.Write(&out, le, uint16(0))
	out.Write(body.Bytes())
	return out.Bytes()
}

// MakeNTFS formats img with mkntfs, copies the tree src into it through
// an ntfs-3g mount (compress/ marked for compression first, so its files
// are stored LZNT1-compressed), adds Windows-style reparse-point links
// when reparse is set, and unmounts. It returns the Windows attributes
// ntfs-3g reported for a few files, for the caller to check that the
// image has what the test needs.
func MakeNTFS(t T, img, src string, size int64, extra []string, reparse bool) map[string]uint32 {
	t.Helper()
	needTool(t, "mkntfs")
	f, err := os.Create(img)
	if err != nil {
		t.Fatalf("%v", err)
	}
	f.Truncate(size)
	f.Close()
	run(t, "mkntfs", append([]string{"-F", "-Q", "-q", "-L", "Données"}, append(extra, img)...)...)
	mnt, unmount := ntfs3g(t, img, "compression")
	if err := os.Mkdir(filepath.Join(mnt, "compress"), 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	setAttrib(t, filepath.Join(mnt, "compress"), 0x800)
	run(t, "cp", "-a", "--sparse=always", src+"/.", mnt+"/")
	if reparse {
		os.WriteFile(filepath.Join(mnt, "win-link"), nil, 0o644)
		setReparse(t, filepath.Join(mnt, "win-link"), ReparseLink(`a\b\c\deep.txt`, `a\b\c\deep.txt`, true, false))
		os.WriteFile(filepath.Join(mnt, "win-abs-link"), nil, 0o644)
		setReparse(t, filepath.Join(mnt, "win-abs-link"), ReparseLink(`\??\C:\Windows\notepad.exe`, `C:\Windows\notepad.exe`, false, false))
		os.Mkdir(filepath.Join(mnt, "junction"), 0o755)
		setReparse(t, filepath.Join(mnt, "junction"), ReparseLink(`\??\C:\Users\Public`, `C:\Users\Public`, false, true))
	}
	attrs := map[string]uint32{}
	for _, p := range []string{"compress/text.txt", "sparse.bin", "small.txt"} {
		if _, err := os.Stat(filepath.Join(mnt, p)); err == nil {
			attrs[p] = getAttrib(t, filepath.Join(mnt, p))
		}
	}
	unmount()
	return attrs
}

// setAttrib sets a file's Windows attributes through ntfs-3g's
// system.ntfs_attrib_be extended attribute.
func setAttrib(t T, p string, attr uint32) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, attr)
	if err := unix.Setxattr(p, "system.ntfs_attrib_be", b, 0); err != nil {
		t.Fatalf("setxattr %s: %v", p, err)
	}
}

func getAttrib(t T, p string) uint32 {
	t.Helper()
	b := make([]byte, 4)
	n, err := unix.Getxattr(p, "system.ntfs_attrib_be", b)
	if err != nil || n != 4 {
		t.Fatalf("getxattr %s: %v", p, err)
	}
	return binary.BigEndian.Uint32(b)
}

// setReparse makes p a reparse point through ntfs-3g's
// system.ntfs_reparse_data extended attribute.
func setReparse(t T, p string, data []byte) {
	t.Helper()
	if err := unix.Setxattr(p, "system.ntfs_reparse_data", data, 0); err != nil {
		t.Fatalf("setxattr reparse %s: %v", p, err)
	}
}

func needTool(t T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (e2fsprogs / ntfs-3g: .ci/run installs them)", n)
		}
	}
}

func run(t T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
