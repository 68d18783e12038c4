//go:build unix

package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// veraCryptDataOffset is where a VeraCrypt volume's data area begins in
// its container (the header group before it).
const veraCryptDataOffset = 128 << 10

// hiddenCase is an outer volume of one filesystem with a hidden volume
// of the same filesystem behind its files, made by cryptvol.
type hiddenCase struct {
	fsType, dir, vol string
	env              []string
	outer, hidden    []string // credentials of each
	protect          []string // the outer's, with --protect-hidden
	outerSize        int64
	hiddenSize       int64
	outerSums        map[string][32]byte
	hiddenSums       map[string][32]byte
	hiddenSum        [32]byte // sha256 of the hidden volume's export
}

// newHiddenCase makes the outer volume (files of 300 KiB and 1 MiB in
// it), checks that a hidden volume too large for the free space behind
// them is refused with nothing changed, makes the hidden volume (a file
// of 500 KiB in it) and exports it.
func newHiddenCase(t *testing.T, fsType string, outerSize int64) *hiddenCase {
	t.Helper()
	dir := t.TempDir()
	c := &hiddenCase{fsType: fsType, dir: dir, vol: filepath.Join(dir, "outer.hc"), outerSize: outerSize, hiddenSize: 8 << 20,
		env: cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))}
	opw, hpw := filepath.Join(dir, "opw"), filepath.Join(dir, "hpw")
	os.WriteFile(opw, []byte("outer volume password 1\n"), 0o600)
	os.WriteFile(hpw, []byte("hidden volume password 2\n"), 0o600)
	c.outer = []string{"--password-file", opw, "--pim", "1"}
	c.hidden = []string{"--password-file", hpw, "--pim", "1", "--hidden"}
	c.protect = append(append([]string{}, c.outer...), "--protect-hidden", "--hidden-password-file", hpw, "--hidden-pim", "1")
	cvOK(t, c.env, append([]string{"create", c.vol, "--size", fmt.Sprint(outerSize), "--filesystem", fsType, "--quick", "--non-interactive"}, c.outer...)...)
	c.outerSums = putRandomFiles(t, c.env, dir, c.vol, c.outer, 1, 300<<10, 1<<20)

	hiddenArgs := func(size int64) []string {
		return []string{"create", c.vol, "--hidden", "--size", fmt.Sprint(size), "--filesystem", fsType, "--non-interactive",
			"--password-file", hpw, "--pim", "1", "--outer-password-file", opw, "--outer-pim", "1"}
	}
	before := fileSum(t, c.vol)
	// The outer's files take more than 1 MiB at its start.
	r := cvRun(c.env, time.Minute, hiddenArgs(outerSize-(1<<20))...)
	if r.code != exitDestroy || !strings.Contains(r.out, "does not fit") || !strings.Contains(r.out, "at most") {
		t.Fatalf("a hidden volume larger than the free tail: %v; want exit %d saying how much fits", r, exitDestroy)
	}
	if fileSum(t, c.vol) != before {
		t.Fatal("the refused create changed the outer volume")
	}
	t.Logf("too large: %s", lastLine(r.out))
	cvOK(t, c.env, hiddenArgs(c.hiddenSize)...)
	os.Mkdir(filepath.Join(dir, "h"), 0o700) // its file's name differs from the outer's f0.bin only by place
	c.hiddenSums = putRandomFiles(t, c.env, filepath.Join(dir, "h"), c.vol, c.hidden, 2, 500<<10)
	c.hiddenSum = c.exportHidden(t)
	checkFiles(t, c.env, dir, c.vol, c.outer, c.outerSums)
	return c
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// exportHidden returns the sha256 of the hidden volume's data area.
func (c *hiddenCase) exportHidden(t *testing.T) [32]byte {
	t.Helper()
	out := filepath.Join(c.dir, "hidden.img")
	os.Remove(out)
	cvOK(t, c.env, append([]string{"export", c.vol, out}, c.hidden...)...)
	defer os.Remove(out)
	return fileSum(t, out)
}

// hiddenStart is where the hidden volume begins in the outer volume's
// data area.
func (c *hiddenCase) hiddenStart() int64 {
	start, _ := tcrypt.HiddenSpan(c.outerSize, c.hiddenSize)
	return start - veraCryptDataOffset
}

// TestHiddenInOuterFilesystems makes, for FAT, exFAT, NTFS and ext4, an
// outer volume with files and a hidden volume of the same filesystem in
// the free space behind them (found in the outer's own allocation map),
// then:
//   - VeraCrypt 1.26.24 opens the hidden volume with its password (type
//     Hidden, the same bytes as cryptvol's export) and the outer with its
//     own (type Normal, the same bytes), and mounts the outer with
//     --protect-hidden=yes: it then lets a write just before the hidden
//     volume through and refuses one at its first byte ("damage
//     prevented"), so VeraCrypt protects exactly where cryptvol put it;
//   - put with --protect-hidden fills the outer, 2 MiB at a time (NTFS
//     through ntfs-3g on the raw file), until a write would land in the
//     hidden volume: that put fails with exit 5 saying the hidden volume
//     is protected;
//   - for FAT, exFAT and ext4 (NTFS is served read-only), a WebDAV and
//     an NFSv3 server with --protect-hidden refuse a PUT / nfs-cp that
//     reaches the hidden volume and, read-only from then on, a small one
//     too;
//   - a FUSE mount with --protect-hidden (FAT and exFAT in process, NTFS
//     through ntfs-3g and ext4 through fuse2fs on the raw file) fails the
//     write into the hidden volume (EPERM; ntfs-3g may say EIO, fuse2fs
//     says ERANGE) and a small write after it, and unmounts cleanly;
//   - after all of it the hidden volume's export has the same sha256 and
//     its file reads back.
func TestHiddenInOuterFilesystems(t *testing.T) {
	for _, tc := range hiddenOuterCases {
		t.Run(tc.fsType, func(t *testing.T) {
			if tc.fsType == "ntfs" {
				needFSTools(t, "mkntfs")
				needDriverWrites(t, "ntfs")
			}
			c := newHiddenCase(t, tc.fsType, tc.size)
			// Each writer in turn, on the outer volume the last one left;
			// the hidden volume must come out of each unchanged.
			writers := []struct {
				name string
				fill func(*testing.T)
			}{{"veracrypt", c.checkVeraCrypt}, {"put", c.fillWithPut}, {"webdav", c.fillWithWebDAV}, {"nfs", c.fillWithNFS}, {"mount", c.fillWithMount}}
			for _, w := range writers {
				t.Run(w.name, func(t *testing.T) {
					if tc.fsType == "ntfs" && (w.name == "webdav" || w.name == "nfs") {
						t.Skip("NTFS is served read-only: no WebDAV or NFS writes to refuse")
					}
					w.fill(t)
				})
				if got := c.exportHidden(t); got != c.hiddenSum {
					t.Fatalf("the hidden volume changed under %s with --protect-hidden", w.name)
				}
			}
			checkFiles(t, c.env, c.dir, c.vol, c.hidden, c.hiddenSums)
			// What the refused writes left of the outer filesystem (TrueCrypt
			// warns it may be damaged): said, not judged.
			r := cvRun(c.env, 2*time.Minute, append([]string{"fsck", c.vol}, c.outer...)...)
			t.Logf("outer filesystem after the refusals: fsck exit %d: %s", r.code, lastLine(r.out))
			t.Logf("hidden volume sha256 %x unchanged; its file reads back", c.hiddenSum[:8])
		})
	}
}

// hiddenOuterCases are the outer filesystems and their sizes (ext4's last
// block groups hold superblock copies: 56 MiB leaves 15 MiB free behind
// the last one).
var hiddenOuterCases = []struct {
	fsType string
	size   int64
}{{"fat", 32 << 20}, {"exfat", 32 << 20}, {"ntfs", 32 << 20}, {"ext4", 56 << 20}}

// checkVeraCrypt opens both volumes in VeraCrypt 1.26.24 and checks its
// hidden-volume protection of the outer one (see the test's comment).
func (c *hiddenCase) checkVeraCrypt(t *testing.T) {
	t.Helper()
	vc := testdata.VeraCrypt(t, oracle.VeraCrypt12624)
	ctx := context.Background()
	hpw, opw := "hidden volume password 2", "outer volume password 1"
	outerExport := filepath.Join(c.dir, "outer.img")
	cvOK(t, c.env, append([]string{"export", c.vol, outerExport}, c.outer...)...)
	outerSum := fileSum(t, outerExport)
	os.Remove(outerExport)
	for _, m := range []struct {
		pw, typ string
		sum     [32]byte
	}{{hpw, "Hidden", c.hiddenSum}, {opw, "Normal", outerSum}} {
		mnt, err := vc.Mount(ctx, c.vol, oracle.MountOptions{Password: m.pw, PIM: 1, ReadOnly: true})
		if err != nil {
			t.Fatalf("VeraCrypt does not open the %s volume: %v", m.typ, err)
		}
		p, perr := mnt.Properties(ctx)
		b, rerr := os.ReadFile(mnt.Dev)
		if err := mnt.Dismount(); err != nil {
			t.Fatal(err)
		}
		if perr != nil || rerr != nil {
			t.Fatal(perr, rerr)
		}
		if p["Type"] != m.typ || sha256.Sum256(b) != m.sum {
			t.Fatalf("VeraCrypt opened a %q volume of %d bytes (sha256 equal: %v); want %s with cryptvol's bytes", p["Type"], len(b), sha256.Sum256(b) == m.sum, m.typ)
		}
	}

	mnt, err := vc.Mount(ctx, c.vol, oracle.MountOptions{Password: opw, PIM: 1, ProtectHidden: true, ProtectionPassword: hpw, ProtectionPIM: 1})
	if err != nil {
		t.Fatalf("VeraCrypt's --protect-hidden=yes mount of the outer volume: %v", err)
	}
	defer mnt.Dismount()
	p, err := mnt.Properties(ctx)
	if err != nil || p["Hidden Volume Protected"] != "Yes" {
		t.Fatalf("VeraCrypt's outer mount: protected %q (%v)", p["Hidden Volume Protected"], err)
	}
	// Each write puts back the bytes already there: the one before the
	// hidden volume changes nothing, the one at its start must be refused.
	f, err := os.OpenFile(mnt.Dev, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rewrite := func(off int64) error {
		b := make([]byte, 4096)
		if _, err := f.ReadAt(b, off); err != nil {
			return err
		}
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		return f.Sync()
	}
	hs := c.hiddenStart()
	if err := rewrite(hs - 4096); err != nil {
		t.Fatalf("VeraCrypt refused a write just before the hidden volume (at %d): %v", hs-4096, err)
	}
	if err := rewrite(hs); err == nil {
		t.Fatalf("VeraCrypt let a write at the hidden volume's first byte (%d) through", hs)
	}
	if p, _ := mnt.Properties(ctx); !strings.Contains(p["Hidden Volume Protected"], "damage prevented") {
		t.Fatalf("VeraCrypt says %q after the refused write", p["Hidden Volume Protected"])
	}
	f.Close()
	if err := mnt.Dismount(); err != nil {
		t.Fatal(err)
	}
	t.Logf("VeraCrypt opens hidden and outer (same bytes) and protects the hidden volume from byte %d of the outer", hs)
}

// fillWithPut puts 2 MiB files into the outer volume with --protect-hidden
// until one is refused: it must be refused for the hidden volume (exit 5),
// not for lack of space.
func (c *hiddenCase) fillWithPut(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	src := filepath.Join(c.dir, "chunk")
	b := make([]byte, 2<<20)
	for i := 0; i < int(c.outerSize/(2<<20))+2; i++ {
		rng.Read(b)
		os.WriteFile(src, b, 0o644)
		r := cvRun(c.env, 2*time.Minute, append([]string{"put", c.vol, src, fmt.Sprintf("/fill%02d.bin", i)}, c.protect...)...)
		if r.code == 0 {
			continue
		}
		if r.code != exitDestroy || !strings.Contains(r.out, "protected hidden volume") {
			t.Fatalf("put #%d with --protect-hidden: %v; want exit %d, the hidden volume protected", i, r, exitDestroy)
		}
		t.Logf("put: %d files of 2 MiB went in; the next was refused: %s", i, protectedLine(r.out))
		return
	}
	t.Fatal("the outer volume took more than its size without reaching the hidden volume")
}

// protectedLine is the line of out that says the write was refused.
func protectedLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "protected hidden volume") {
			return l
		}
	}
	return ""
}

// fillWithWebDAV serves the outer volume with --protect-hidden and PUTs a
// file as large as the outer volume's free space: refused (the hidden
// volume's area is in the free space), and so is a small PUT after it (the
// outer is read-only until the server stops).
func (c *hiddenCase) fillWithWebDAV(t *testing.T) {
	t.Helper()
	needFSTools(t, "curl")
	// Free space, as the filesystem counts it, minus what its metadata
	// will need: the file must reach the end of the outer volume.
	free := c.freeBytes(t) - (512 << 10)
	s := startServe(t, c.env, c.vol, c.protect...)
	base := strings.TrimSuffix(s.URL, "/")
	auth := s.User + ":" + s.Password
	big := filepath.Join(c.dir, "big")
	b := make([]byte, free)
	rand.New(rand.NewSource(4)).Read(b)
	os.WriteFile(big, b, 0o644)
	small := filepath.Join(c.dir, "small")
	os.WriteFile(small, []byte("small\n"), 0o644)
	// The volume's refusal is 403 Forbidden (x/net/webdav alone would
	// answer a failed write 405 and a failed create 404; refusal.go).
	bigStatus := curlStatus(t, "-u", auth, "-H", "Expect:", "-T", big, base+"/big.bin")
	if bigStatus != "403" {
		t.Errorf("PUT of %d bytes into the outer volume with --protect-hidden: status %s, want 403", free, bigStatus)
	}
	smallStatus := curlStatus(t, "-u", auth, "-H", "Expect:", "-T", small, base+"/small.txt")
	if smallStatus != "403" {
		t.Errorf("PUT of a small file after the protection triggered: status %s, want 403 (read-only)", smallStatus)
	}
	if st := curlStatus(t, "-u", auth, "-X", "MKCOL", base+"/newdir"); st != "403" {
		t.Errorf("MKCOL after the protection triggered: status %s, want 403", st)
	}
	cryptvolCmd(t, c.env, "unmount", c.vol)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve after the protection triggered: %v", err)
	}
	t.Logf("WebDAV: a PUT of %d bytes got %s, a small PUT after it %s", free, bigStatus, smallStatus)
}

// freeBytes is the outer filesystem's available space ('cryptvol df').
func (c *hiddenCase) freeBytes(t *testing.T) int64 {
	t.Helper()
	var df struct {
		Avail int64 `json:"available_bytes"`
	}
	out := cvOK(t, c.env, append([]string{"df", c.vol, "--json"}, c.outer...)...)
	if err := json.Unmarshal([]byte(out[max(strings.Index(out, "{"), 0):]), &df); err != nil {
		t.Fatalf("df --json: %v\n%s", err, out)
	}
	return df.Avail
}

// bigFile writes a file of n random bytes (seed) and returns its path.
func (c *hiddenCase) bigFile(t *testing.T, name string, n int64, seed int64) string {
	t.Helper()
	p := filepath.Join(c.dir, name)
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fillWithNFS serves the outer volume over NFSv3 with --protect-hidden
// and copies in, with libnfs's nfs-cp, a file as large as the free space
// and then a small one: both must fail.
func (c *hiddenCase) fillWithNFS(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nfs-cp"); err != nil {
		t.Skip("skipping: nfs-cp is not installed (Debian package libnfs-utils)")
	}
	free := c.freeBytes(t) - (512 << 10)
	big := c.bigFile(t, "nfsbig", free, 5)
	small := c.bigFile(t, "nfssmall", 100, 6)
	s := startServeNFS(t, c.env, c.vol, c.protect...)
	bigOut, bigErr := libnfs(t, "nfs-cp", big, s.fileURL("/nfsbig.bin"))
	if bigErr == nil {
		t.Errorf("nfs-cp of %d bytes into the outer volume with --protect-hidden succeeded:\n%s", free, bigOut)
	}
	smallOut, smallErr := libnfs(t, "nfs-cp", small, s.fileURL("/nfssmall.bin"))
	if smallErr == nil {
		t.Errorf("nfs-cp of a small file after the protection triggered succeeded (want read-only):\n%s", smallOut)
	}
	cryptvolCmd(t, c.env, "unmount", c.vol)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve --nfs after the protection triggered: %v", err)
	}
	t.Logf("NFS: nfs-cp of %d bytes failed (%s), a small one after it too (%s)", free, lastLine(bigOut), lastLine(smallOut))
}

// fillWithMount mounts the outer volume with --protect-hidden (FUSE: FAT
// and exFAT in process, ext4 and NTFS through fuse2fs / ntfs-3g on the raw
// file) and writes, each file fsynced, one as large as the free space and
// then a small one: the first fails (EPERM in process; see below for the
// drivers), the second fails too (the outer is read-only until
// unmounted).
func (c *hiddenCase) fillWithMount(t *testing.T) {
	t.Helper()
	if err := mount.Available(); err != nil {
		t.Skipf("skipping the FUSE mount: %v", err)
	}
	free := c.freeBytes(t) - (512 << 10)
	mnt := filepath.Join(c.dir, "mnt")
	os.Mkdir(mnt, 0o755)
	cvOK(t, c.env, append([]string{"mount", c.vol, mnt}, c.protect...)...)
	t.Cleanup(func() { cleanupMounts(t, c.dir, filepath.Join(c.dir, "run")) })
	write := func(name string, n int64, seed int64) error {
		f, err := os.Create(filepath.Join(mnt, name))
		if err != nil {
			return err
		}
		b := make([]byte, 1<<20)
		rng := rand.New(rand.NewSource(seed))
		for done := int64(0); done < n && err == nil; done += int64(len(b)) {
			rng.Read(b)
			_, err = f.Write(b[:min(int64(len(b)), n-done)])
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	bigErr := write("mountbig.bin", free, 7)
	// The in-process FAT and exFAT pass EPERM on. The drivers choose:
	// ntfs-3g passes it on for a data write and says EIO when the refused
	// write was its own metadata (2 of about 15 runs here); fuse2fs turns
	// it into an error of libext2fs's own, which reaches the program as
	// ERANGE. Refused all the same, which is what counts here.
	switch {
	case bigErr == nil:
		t.Errorf("writing %d bytes into the mounted outer volume with --protect-hidden succeeded", free)
	case c.fsType == "fat" || c.fsType == "exfat":
		if !errors.Is(bigErr, syscall.EPERM) {
			t.Errorf("writing %d bytes into the mounted outer volume with --protect-hidden: %v; want EPERM", free, bigErr)
		}
	case c.fsType == "ntfs":
		if !errors.Is(bigErr, syscall.EPERM) && !errors.Is(bigErr, syscall.EIO) {
			t.Errorf("writing %d bytes into the mounted outer volume with --protect-hidden: %v; want EPERM (or ntfs-3g's EIO)", free, bigErr)
		}
	}
	smallErr := write("mountsmall.bin", 100, 8)
	if smallErr == nil {
		t.Error("writing a small file after the protection triggered succeeded (want read-only until unmounted)")
	}
	if r := cvRun(c.env, 2*time.Minute, "unmount", c.vol); r.code != 0 {
		t.Errorf("unmount after the protection triggered: %v", r)
	}
	t.Logf("mount: writing %d bytes: %v; a small file after it: %v", free, bigErr, smallErr)
}
