//go:build unix

package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// patchVolume writes p at off of the volume's decrypted data area.
func patchVolume(t *testing.T, vol, pw string, pim int, off int64, p []byte) {
	t.Helper()
	v, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte(pw), PIM: pim}, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteAt(p, off); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
}

// readPlain reads n bytes at off of an exported image.
func readPlain(t *testing.T, img string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

// damages break one known structure of each filesystem with a byte
// patch, given the exported plain image: where, and what to write.
var damages = map[string]func(t *testing.T, img string) (int64, []byte){
	// exFAT: eight free clusters marked in use in the allocation bitmap
	// (the first cluster of the heap): lost clusters.
	"exfat": func(t *testing.T, img string) (int64, []byte) {
		boot := readPlain(t, img, 0, 512)
		heap := int64(binary.LittleEndian.Uint32(boot[88:])) << boot[108]
		return heap + 64, []byte{0xFF}
	},
	// ext4: the root directory's link count (i_links_count of inode 2 in
	// group 0's inode table), which also breaks the inode's checksum.
	"ext4": func(t *testing.T, img string) (int64, []byte) {
		out, err := exec.Command("dumpe2fs", img).CombinedOutput()
		if err != nil {
			t.Fatalf("dumpe2fs: %v\n%s", err, out)
		}
		field := func(re string) int64 {
			m := regexp.MustCompile(re).FindSubmatch(out)
			if m == nil {
				t.Fatalf("dumpe2fs output has no %s", re)
			}
			n, _ := strconv.ParseInt(string(m[1]), 10, 64)
			return n
		}
		bs, isz, table := field(`Block size:\s+(\d+)`), field(`Inode size:\s+(\d+)`), field(`Inode table at (\d+)`)
		return table*bs + isz + 26, []byte{9, 0}
	},
	// NTFS: record 0 of $MFTMirr no longer matches $MFT.
	"ntfs": func(t *testing.T, img string) (int64, []byte) {
		boot := readPlain(t, img, 0, 512)
		cluster := int64(binary.LittleEndian.Uint16(boot[11:])) * int64(boot[13])
		return int64(binary.LittleEndian.Uint64(boot[0x38:]))*cluster + 0x100, []byte("broken by the test")
	},
}

// TestFsckEachFilesystem damages exFAT, ext4 and NTFS inside VeraCrypt
// and LUKS2 volumes: fsck finds it (exit 3, also with --json), --repair
// mends it (exit 1), the next fsck is clean (0), the file put before is
// intact, and the filesystem's own checker agrees on the exported area.
func TestFsckEachFilesystem(t *testing.T) {
	needFSTools(t, "fsck.exfat", "e2fsck", "dumpe2fs", "mkfs.ext4", "mkntfs", "ntfsfix")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	const password = "correct horse battery staple"
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(password+"\n"), 0o600)
	src := filepath.Join(dir, "keep.txt")
	os.WriteFile(src, []byte("still here\n"), 0o644)
	for _, typ := range []string{"veracrypt", "luks2"} {
		for _, fsName := range []string{"exfat", "ext4", "ntfs"} {
			t.Run(typ+"-"+fsName, func(t *testing.T) {
				vol := filepath.Join(dir, typ+"-"+fsName+".vol")
				creds, pim := []string{"--password-file", pw}, 0
				args := []string{"create", vol, "--size", "24M", "--filesystem", fsName, "--quick", "--non-interactive", "--type", typ}
				if typ == "luks2" {
					args = append(args, "--pbkdf", "pbkdf2", "--iter-time", "50")
				} else {
					creds, pim = append(creds, "--pim", "1"), 1
				}
				needDriverWrites(t, fsName)
				cvOK(t, env, append(args, creds...)...)
				cvOK(t, env, append([]string{"put", vol, src, "/"}, creds...)...)
				cvOK(t, env, append([]string{"fsck", vol}, creds...)...)

				plain := vol + ".plain"
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				off, patch := damages[fsName](t, plain)
				os.Remove(plain)
				patchVolume(t, vol, password, pim, off, patch)

				if r := cvRun(env, time.Minute, append([]string{"fsck", vol}, creds...)...); r.code != exitDamaged {
					t.Fatalf("fsck of the damaged %s: %v; want exit %d", fsName, r, exitDamaged)
				}
				r := cvRun(env, time.Minute, append([]string{"fsck", vol, "--json"}, creds...)...)
				var rep struct{ Clean, Errors bool }
				if err := json.Unmarshal([]byte(r.out[:strings.LastIndex(r.out, "}")+1]), &rep); err != nil || r.code != exitDamaged || rep.Clean {
					t.Fatalf("fsck --json of the damaged %s: %v (%v); want exit %d and clean false", fsName, r, err, exitDamaged)
				}
				if r := cvRun(env, time.Minute, append([]string{"fsck", vol, "--repair"}, creds...)...); r.code != exitRepaired {
					t.Fatalf("fsck --repair of the damaged %s: %v; want exit %d", fsName, r, exitRepaired)
				} else {
					t.Logf("repair: %s", lastLine(r.out))
				}
				cvOK(t, env, append([]string{"fsck", vol}, creds...)...)
				back := vol + ".back"
				cvOK(t, env, append([]string{"get", vol, "/keep.txt", back}, creds...)...)
				if b, _ := os.ReadFile(back); string(b) != "still here\n" {
					t.Fatalf("after the repair keep.txt reads %q", b)
				}
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				runChecker(t, fsName, plain)
				os.Remove(plain)
			})
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// TestFsckNoChecker: with e2fsck and ntfsfix not on PATH, fsck of ext4
// and NTFS exits 6 (documented: no checker installed), not 3, which
// scripts read as "damaged", and names the package.
func TestFsckNoChecker(t *testing.T) {
	needFSTools(t, "mkfs.ext4", "mkntfs")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	noTools := append([]string(nil), env...)
	for i, kv := range noTools {
		if strings.HasPrefix(kv, "PATH=") {
			noTools[i] = "PATH=" + bin
		}
	}
	for fsName, pkg := range map[string]string{"ext4": "e2fsprogs", "ntfs": "ntfs-3g"} {
		vol := filepath.Join(dir, fsName+".hc")
		cvOK(t, env, "create", vol, "--size", "8M", "--filesystem", fsName, "--quick", "--non-interactive", "--password-file", pw, "--pim", "1")
		for _, extra := range [][]string{nil, {"--repair"}, {"--json"}} {
			r := cvRun(noTools, time.Minute, append([]string{"fsck", vol, "--password-file", pw, "--pim", "1"}, extra...)...)
			if r.code != exitNoTool || !strings.Contains(r.out, "apt-get install "+pkg) {
				t.Errorf("fsck %v of %s without its checker: %v; want exit %d naming %s", extra, fsName, r, exitNoTool, pkg)
			}
		}
	}
	_ = fmt.Sprint
}

// TestFsckExternalAndFormat: format writes each filesystem over an
// existing volume (refused without --force when one is there), the real
// checker finds it clean; fsck --external runs fsck.exfat on a damaged
// exFAT (3), repairs it with fsck.exfat -y (1), and the built-in check
// agrees afterwards (0); format --filesystem none leaves nothing that is
// recognised.
func TestFsckExternalAndFormat(t *testing.T) {
	needFSTools(t, "fsck.fat", "fsck.exfat", "e2fsck", "mkfs.ext4", "mkntfs", "ntfsfix")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	const password = "correct horse battery staple"
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(password+"\n"), 0o600)
	creds := []string{"--password-file", pw, "--pim", "1"}
	vol := filepath.Join(dir, "v.hc")
	cvOK(t, env, append([]string{"create", vol, "--size", "24M", "--quick", "--non-interactive"}, creds...)...)
	if r := cvRun(env, time.Minute, append([]string{"format", vol, "--filesystem", "ext4"}, creds...)...); r.code != exitDestroy {
		t.Fatalf("format over FAT without --force: %v; want exit %d", r, exitDestroy)
	}
	plain := filepath.Join(dir, "plain.img")
	for _, fsName := range []string{"ext4", "ntfs", "exfat"} {
		cvOK(t, env, append([]string{"format", vol, "--filesystem", fsName, "--force", "--label", "L" + fsName}, creds...)...)
		if out := cvOK(t, env, append([]string{"info", vol}, creds...)...); !regexpMatch(`Filesystem: +`+fsName, out) {
			t.Fatalf("after format --filesystem %s, info says:\n%s", fsName, out)
		}
		cvOK(t, env, append([]string{"export", vol, plain, "--force"}, creds...)...)
		runChecker(t, fsName, plain)
	}
	// A byte of the main boot sector's boot code: the boot region's
	// checksum no longer matches (fsck.exfat restores it from the backup).
	patchVolume(t, vol, password, 1, 200, []byte{0x42})
	if r := cvRun(env, time.Minute, append([]string{"fsck", vol}, creds...)...); r.code != exitDamaged {
		t.Fatalf("built-in fsck of the damaged boot region: %v; want exit %d", r, exitDamaged)
	}
	if r := cvRun(env, time.Minute, append([]string{"fsck", vol, "--external"}, creds...)...); r.code != exitDamaged || !strings.Contains(r.out, "fsck.exfat -n") {
		t.Fatalf("fsck --external of a damaged exFAT: %v; want exit %d from fsck.exfat", r, exitDamaged)
	}
	if r := cvRun(env, time.Minute, append([]string{"fsck", vol, "--external", "--repair"}, creds...)...); r.code != exitRepaired {
		t.Fatalf("fsck --external --repair: %v; want exit %d", r, exitRepaired)
	}
	cvOK(t, env, append([]string{"fsck", vol}, creds...)...)

	cvOK(t, env, append([]string{"format", vol, "--filesystem", "none", "--force"}, creds...)...)
	if r := cvRun(env, time.Minute, append([]string{"ls", vol}, creds...)...); r.code != exitDamaged || !strings.Contains(r.out, "no filesystem cryptvol recognises") {
		t.Fatalf("ls after format --filesystem none: %v", r)
	}
}
