//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/oracle"
)

// TestResizeVeraCryptFAT grows and shrinks a VeraCrypt and a TrueCrypt
// container with FAT inside, and a VeraCrypt one with exFAT, by ±10 % and
// ±50 % and to near the minimum, then asks for less than the files need.
// After each step every file reads back with its sha256, the filesystem
// declares the new data area (df's total is the data area less the same
// metadata as before: the built-in grow took all the new space), fsck.fat
// -n / fsck.exfat -n finds the exported data area clean, and VeraCrypt
// (1.26.24 for VeraCrypt, 1.25.9 --truecrypt for TrueCrypt) opens the
// container: its decrypted device is the new data size, with the primary
// and with the backup header, and holds the bytes cryptvol exports. The
// refused shrink exits 5 and leaves the file as it was.
func TestResizeVeraCryptFAT(t *testing.T) {
	needFSTools(t, "fsck.fat", "fsck.exfat")
	for _, c := range []struct{ typ, fs string }{{"veracrypt", "fat"}, {"truecrypt", "fat"}, {"veracrypt", "exfat"}} {
		t.Run(c.typ+"-"+c.fs, func(t *testing.T) { testResize(t, c.typ, c.fs) })
	}
}

// dfTotal is the filesystem size `cryptvol df --json` reports.
func dfTotal(t *testing.T, env []string, vol string, creds []string) int64 {
	t.Helper()
	r := cvRun(env, time.Minute, append([]string{"df", vol, "--json"}, creds...)...)
	var df struct {
		Total int64 `json:"total_bytes"`
	}
	out := r.out[max(strings.Index(r.out, "{"), 0):]
	if r.code != 0 || json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &df) != nil {
		t.Fatalf("df --json: %v", r)
	}
	return df.Total
}

func testResize(t *testing.T, typ, fsName string) {
	version, hash := oracle.VeraCrypt12624, ""
	if typ == "truecrypt" {
		version, hash = oracle.VeraCrypt1259, "sha512"
	}
	vc, vcErr := oracle.Find(version)
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	const password = "correct horse battery staple"
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(password+"\n"), 0o600)
	creds := []string{"--password-file", pw}
	if typ == "veracrypt" {
		creds = append(creds, "--pim", "1")
	}
	vol := filepath.Join(dir, "v.vol")
	cvOK(t, env, append([]string{"create", vol, "--size", "40M", "--filesystem", fsName, "--quick", "--non-interactive", "--type", typ}, creds...)...)
	sums := putRandomFiles(t, env, dir, vol, creds, 30, 1<<20, 3<<20, 700<<10, 12345)
	overhead := 40<<20 - 2*131072 - dfTotal(t, env, vol, creds)
	check := func(wantSize int64) (oracleRan bool) {
		t.Helper()
		if fi, _ := os.Stat(vol); fi.Size() != wantSize {
			t.Fatalf("container is %d bytes, want %d", fi.Size(), wantSize)
		}
		for name, sum := range sums {
			back := filepath.Join(dir, "back")
			os.Remove(back)
			cvOK(t, env, append([]string{"get", vol, "/" + name, back}, creds...)...)
			if b, _ := os.ReadFile(back); sha256.Sum256(b) != sum {
				t.Fatalf("%s: sha256 changed", name)
			}
		}
		plain := filepath.Join(dir, "plain")
		os.Remove(plain)
		cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
		defer os.Remove(plain)
		runChecker(t, fsName, plain)
		want, _ := os.ReadFile(plain)
		if int64(len(want)) != wantSize-2*131072 {
			t.Fatalf("exported data area is %d bytes, want %d", len(want), wantSize-2*131072)
		}
		// The filesystem takes the whole new data area: what it does not
		// cover is its metadata, as before, give or take a cluster and
		// the 4 KiB rounding.
		if got := wantSize - 2*131072 - dfTotal(t, env, vol, creds); got < overhead-64<<10 || got > overhead+64<<10 {
			t.Fatalf("the %s filesystem leaves %d bytes of the data area uncovered, want about %d (its metadata)", fsName, got, overhead)
		}
		if vc == nil {
			t.Logf("VeraCrypt %s cannot run here: %v", version, vcErr)
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, backup := range []bool{false, true} {
			m, err := vc.Mount(ctx, vol, oracle.MountOptions{Password: password, PIM: map[string]int{"veracrypt": 1}[typ], TrueCrypt: typ == "truecrypt", Hash: hash, ReadOnly: true, BackupHeader: backup})
			if err != nil {
				t.Fatalf("VeraCrypt %s does not open the resized volume (backup header: %v): %v", vc.Version, backup, err)
			}
			got, err := os.ReadFile(m.Dev)
			if err == nil && !backup {
				err = checkerErr(fsName, m.Dev)
			}
			m.Dismount()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || sha256.Sum256(got) != sha256.Sum256(want) {
				t.Fatalf("VeraCrypt's decrypted device (backup header: %v): %d bytes, want the %d cryptvol exports, same sha256", backup, len(got), len(want))
			}
		}
		return true
	}
	size := int64(40 << 20)
	// A shrink that does not say there is no hidden volume would cut one
	// off unseen: refused, nothing written.
	orig, _ := os.ReadFile(vol)
	if r := cvRun(env, time.Minute, append([]string{"resize", vol, "--size", "-4M"}, creds...)...); r.code != exitDestroy || !strings.Contains(r.out, "--no-hidden") {
		t.Fatalf("a shrink without --no-hidden: want exit 5 naming --no-hidden, got %v", r)
	}
	if now, _ := os.ReadFile(vol); !bytes.Equal(now, orig) {
		t.Fatal("the refused shrink changed the container")
	}
	// The smallest: FAT16's 4085 clusters of 2 KiB; exFAT's 2 MiB of
	// metadata and the 4.7 MiB of files.
	least := int64(9 << 20)
	if fsName == "exfat" {
		least = 7<<20 + 512<<10
	}
	for _, step := range []struct {
		arg  string
		want int64
	}{
		{"+4M", size + 4<<20},            // +10 %
		{"-4M", size},                    // -10 %
		{"+20M", size + 20<<20},          // +50 %
		{"20M", 20 << 20},                // -50 % of 40M
		{fmt.Sprint(least), least},       // near the minimum
		{fmt.Sprint(least + 777), least}, // rounded down to 4 KiB: already there
		{"+20M", least + 20<<20},         // grown again from the minimum
	} {
		r := cvRun(env, 5*time.Minute, append([]string{"resize", vol, "--size", step.arg, "--no-hidden"}, creds...)...)
		if r.code != 0 {
			t.Fatalf("resize --size %s: %v", step.arg, r)
		}
		ran := check(step.want)
		t.Logf("--size %s: %d bytes, files intact, fsck clean; VeraCrypt %s opened it: %v", step.arg, step.want, version, ran)
	}
	before, _ := os.ReadFile(vol)
	r := cvRun(env, 5*time.Minute, append([]string{"resize", vol, "--size", "4M", "--no-hidden"}, creds...)...)
	if r.code != exitDestroy || !strings.Contains(r.out, "nothing changed") {
		t.Fatalf("resize below the files' size: want exit 5 saying nothing changed, got %v", r)
	}
	if after, _ := os.ReadFile(vol); sha256.Sum256(after) != sha256.Sum256(before) {
		t.Fatal("a refused shrink changed the container")
	}
}

// checkerErr runs the filesystem's checker on img (runChecker, as an error).
func checkerErr(fsName, img string) error {
	c := fsChecker[fsName]
	if out, err := exec.Command(c[0], append(c[1:], img)...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", strings.Join(c, " "), img, err, out)
	}
	return nil
}

// TestResizeOuterWithHidden grows a VeraCrypt outer volume that holds a
// hidden one, without and then with the hidden volume's credentials: the
// hidden volume's files read back each time, and VeraCrypt 1.26.24 opens
// the hidden volume with its primary and with its backup header (the
// backup carried to the new end). With the hidden credentials a shrink is
// refused with exit 5, and wrong ones leave the container as it was.
func TestResizeOuterWithHidden(t *testing.T) {
	vc, vcErr := oracle.Find(oracle.VeraCrypt12624)
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	outerPw, hiddenPw := filepath.Join(dir, "outer"), filepath.Join(dir, "hidden")
	os.WriteFile(outerPw, []byte("outer pass\n"), 0o600)
	os.WriteFile(hiddenPw, []byte("hidden pass\n"), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("not it\n"), 0o600)
	outer := []string{"--password-file", outerPw, "--pim", "1"}
	hidden := []string{"--password-file", hiddenPw, "--pim", "1", "--hidden"}
	vol := filepath.Join(dir, "v.hc")
	cvOK(t, env, append([]string{"create", vol, "--size", "20M", "--filesystem", "fat", "--quick", "--non-interactive"}, outer...)...)
	cvOK(t, env, "create", vol, "--hidden", "--size", "4M", "--filesystem", "fat", "--quick", "--non-interactive",
		"--password-file", hiddenPw, "--pim", "1", "--outer-password-file", outerPw, "--outer-pim", "1")
	src := filepath.Join(dir, "secret.bin")
	b := make([]byte, 1<<20)
	rand.New(rand.NewSource(7)).Read(b)
	os.WriteFile(src, b, 0o644)
	cvOK(t, env, append([]string{"put", vol, src, "/"}, hidden...)...)
	sums := map[string][32]byte{"secret.bin": sha256.Sum256(b)}
	checkHidden := func(step string) {
		t.Helper()
		checkFiles(t, env, dir, vol, hidden, sums)
		if vc == nil {
			t.Logf("%s: VeraCrypt cannot run here: %v", step, vcErr)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, backup := range []bool{false, true} {
			m, err := vc.Mount(ctx, vol, oracle.MountOptions{Password: "hidden pass", PIM: 1, ReadOnly: true, BackupHeader: backup})
			if err != nil {
				t.Fatalf("%s: VeraCrypt does not open the hidden volume (backup header: %v): %v", step, backup, err)
			}
			err = checkerErr("fat", m.Dev)
			props, _ := m.Properties(ctx)
			m.Dismount()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(props["Type"], "Hidden") {
				t.Fatalf("%s: VeraCrypt opened %q, not the hidden volume", step, props["Type"])
			}
		}
		t.Logf("%s: hidden files intact; VeraCrypt opens the hidden volume with both its headers", step)
	}
	cvOK(t, env, append([]string{"resize", vol, "--size", "+8M"}, outer...)...)
	checkHidden("grown without the hidden credentials")
	protect := append(append([]string{}, outer...), "--protect-hidden", "--hidden-password-file", hiddenPw, "--hidden-pim", "1")
	cvOK(t, env, append([]string{"resize", vol, "--size", "+8M"}, protect...)...)
	checkHidden("grown with the hidden credentials")
	before, _ := os.ReadFile(vol)
	if r := cvRun(env, time.Minute, append([]string{"resize", vol, "--size", "-8M"}, protect...)...); r.code != exitDestroy {
		t.Fatalf("shrink with the hidden credentials: want exit 5, got %v", r)
	}
	wrong := append(append([]string{}, outer...), "--protect-hidden", "--hidden-password-file", bad, "--hidden-pim", "1")
	if r := cvRun(env, time.Minute, append([]string{"resize", vol, "--size", "+8M"}, wrong...)...); r.code != exitAuth {
		t.Fatalf("grow with wrong hidden credentials: want exit 2, got %v", r)
	}
	if after, _ := os.ReadFile(vol); sha256.Sum256(after) != sha256.Sum256(before) {
		t.Fatal("a refused resize changed the container")
	}
}

// TestResizeLUKSFAT grows and shrinks LUKS1 and LUKS2 containers with FAT
// inside (+50 %, -50 %, then below what the files need: exit 5): every
// file keeps its sha256, fsck.fat -n finds the exported data area clean,
// the data area is the file minus the header, and cryptsetup luksDump
// still shows the LUKS2 segment running to the end of the device.
func TestResizeLUKSFAT(t *testing.T) {
	needFSTools(t, "fsck.fat")
	for _, typ := range []string{"luks1", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			dir := t.TempDir()
			env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
			pw := filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte("a long enough LUKS passphrase\n"), 0o600)
			creds := []string{"--password-file", pw}
			vol := filepath.Join(dir, "v.img")
			cvOK(t, env, append([]string{"create", vol, "--size", "40M", "--type", typ, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--filesystem", "fat", "--quick", "--non-interactive"}, creds...)...)
			b := make([]byte, 2<<20)
			rand.New(rand.NewSource(3)).Read(b)
			src := filepath.Join(dir, "data.bin")
			os.WriteFile(src, b, 0o644)
			cvOK(t, env, append([]string{"put", vol, src, "/"}, creds...)...)
			sums := map[string][32]byte{"data.bin": sha256.Sum256(b)}
			fi, _ := os.Stat(vol)
			plain := filepath.Join(dir, "plain")
			cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
			pi, _ := os.Stat(plain)
			header := fi.Size() - pi.Size()
			for _, step := range []struct {
				arg  string
				want int64
			}{{"+20M", 60 << 20}, {"30M", 30 << 20}} {
				cvOK(t, env, append([]string{"resize", vol, "--size", step.arg}, creds...)...)
				if fi, _ := os.Stat(vol); fi.Size() != step.want {
					t.Fatalf("--size %s: container %d bytes, want %d", step.arg, fi.Size(), step.want)
				}
				checkFiles(t, env, dir, vol, creds, sums)
				os.Remove(plain)
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				if pi, _ := os.Stat(plain); pi.Size() != step.want-header {
					t.Fatalf("--size %s: data area %d bytes, want %d", step.arg, pi.Size(), step.want-header)
				}
				runChecker(t, "fat", plain)
				if typ == "luks2" {
					if out, ok := cryptsetupDump(vol); ok && !strings.Contains(out, "(whole device)") {
						t.Fatalf("the dynamic segment is no longer dynamic:\n%s", out)
					}
				}
			}
			if r := cvRun(env, time.Minute, append([]string{"resize", vol, "--size", fmt.Sprint(header + 3<<20)}, creds...)...); r.code != exitDestroy {
				t.Fatalf("shrink below the files: want exit 5, got %v", r)
			}
			checkFiles(t, env, dir, vol, creds, sums)
		})
	}
}

// cryptsetupDump runs cryptsetup luksDump when cryptsetup is installed.
func cryptsetupDump(vol string) (string, bool) {
	out, err := exec.Command("cryptsetup", "luksDump", vol).CombinedOutput()
	return string(out), err == nil
}

// TestResizeVeraCryptExt4NTFS shrinks a VeraCrypt container with ext4 and
// one with NTFS inside by 10 %, grows it back, shrinks it by 50 %, grows it
// by 10 % and 50 %, then shrinks it to 12M, near the minimum (resize2fs
// and ntfsresize on the decrypted area): after each step the
// file keeps its sha256, e2fsck -fn / ntfsfix -n find the exported area
// clean and filling the data area (df), and VeraCrypt 1.26.24 opens the
// container with a decrypted device of the new size, holding the bytes
// cryptvol exports, which the same checker finds clean.
func TestResizeVeraCryptExt4NTFS(t *testing.T) {
	vc, vcErr := oracle.Find(oracle.VeraCrypt12624)
	for _, fsName := range []string{"ext4", "ntfs"} {
		t.Run(fsName, func(t *testing.T) {
			tool := map[string]string{"ext4": "resize2fs", "ntfs": "ntfsresize"}[fsName]
			needFSTools(t, tool, fsChecker[fsName][0], "mkntfs")
			needDriverWrites(t, fsName)
			dir := t.TempDir()
			env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
			const password = "correct horse battery staple"
			pw := filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte(password+"\n"), 0o600)
			creds := []string{"--password-file", pw, "--pim", "1"}
			vol := filepath.Join(dir, "v.hc")
			cvOK(t, env, append([]string{"create", vol, "--size", "64M", "--filesystem", fsName, "--quick", "--non-interactive"}, creds...)...)
			b := make([]byte, 3<<20)
			rand.New(rand.NewSource(11)).Read(b)
			src := filepath.Join(dir, "data.bin")
			os.WriteFile(src, b, 0o644)
			cvOK(t, env, append([]string{"put", vol, src, "/"}, creds...)...)
			sums := map[string][32]byte{"data.bin": sha256.Sum256(b)}
			plain := filepath.Join(dir, "plain")
			for _, step := range []struct {
				arg  string
				want int64
			}{
				{"-6552K", 64<<20 - 6552<<10}, // -10 %
				{"64M", 64 << 20},             // back
				{"32M", 32 << 20},             // -50 %
				{"+3276K", 32<<20 + 3276<<10}, // +10 %
				{"+16M", 48<<20 + 3276<<10},   // +50 %
				{"12M", 12 << 20},             // near the minimum (3 MiB of file, NTFS's $LogFile)
			} {
				cvOK(t, env, append([]string{"resize", vol, "--size", step.arg, "--no-hidden"}, creds...)...)
				if fi, _ := os.Stat(vol); fi.Size() != step.want {
					t.Fatalf("--size %s: container %d bytes, want %d", step.arg, fi.Size(), step.want)
				}
				checkFiles(t, env, dir, vol, creds, sums)
				os.Remove(plain)
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				runChecker(t, fsName, plain)
				df := cvOK(t, env, append([]string{"df", vol}, creds...)...)
				if !strings.Contains(df, fmt.Sprintf("Size        %d bytes", step.want-2*131072)) && fsName == "ext4" {
					t.Fatalf("--size %s: df does not show the whole data area (%d bytes):\n%s", step.arg, step.want-2*131072, df)
				}
				ran := false
				if vc != nil {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					m, err := vc.Mount(ctx, vol, oracle.MountOptions{Password: password, PIM: 1, ReadOnly: true})
					if err != nil {
						cancel()
						t.Fatalf("VeraCrypt does not open the resized volume: %v", err)
					}
					got, err := os.ReadFile(m.Dev)
					if err == nil {
						err = checkerErr(fsName, m.Dev)
					}
					m.Dismount()
					cancel()
					if err != nil {
						t.Fatal(err)
					}
					want, _ := os.ReadFile(plain)
					if len(got) != len(want) || sha256.Sum256(got) != sha256.Sum256(want) {
						t.Fatalf("VeraCrypt's decrypted device: %d bytes, want the %d cryptvol exports, same sha256", len(got), len(want))
					}
					ran = true
				} else {
					t.Logf("VeraCrypt cannot run here: %v", vcErr)
				}
				t.Logf("--size %s: %d bytes, file intact, %s clean; VeraCrypt opened it: %v", step.arg, step.want, fsChecker[fsName][0], ran)
			}
		})
	}
}

// TestResizeLUKS2Ext4 resizes a LUKS2 container with ext4 inside by
// -10 %, back, -50 %, +10 %, +50 % and to near the minimum, then asks for
// less than the file needs: each step the file keeps its sha256, e2fsck
// -fn finds the exported data area clean, df's size is the whole data
// area, and cryptsetup luksDump reads the header with the data segment
// running to the end of the new file. The refused shrink exits 5 and
// changes nothing.
func TestResizeLUKS2Ext4(t *testing.T) {
	needFSTools(t, "resize2fs", "e2fsck")
	needDriverWrites(t, "ext4")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("a long enough LUKS passphrase\n"), 0o600)
	creds := []string{"--password-file", pw}
	vol := filepath.Join(dir, "v.img")
	cvOK(t, env, append([]string{"create", vol, "--size", "80M", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--filesystem", "ext4", "--quick", "--non-interactive"}, creds...)...)
	sums := putRandomFiles(t, env, dir, vol, creds, 17, 3<<20, 100<<10)
	plain := filepath.Join(dir, "plain")
	cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
	pi, _ := os.Stat(plain)
	header := int64(80<<20) - pi.Size()
	size := int64(80 << 20)
	for _, step := range []struct {
		arg  string
		want int64
	}{
		{"-8M", size - 8<<20}, // -10 %
		{"80M", size},         // back
		{"40M", 40 << 20},     // -50 %
		{"+4M", 44 << 20},     // +10 %
		{"+22M", 66 << 20},    // +50 %
		{"28M", 28 << 20},     // near the minimum: 12 MiB of data area (3.1 MiB of files, the journal)
	} {
		cvOK(t, env, append([]string{"resize", vol, "--size", step.arg}, creds...)...)
		if fi, _ := os.Stat(vol); fi.Size() != step.want {
			t.Fatalf("--size %s: container %d bytes, want %d", step.arg, fi.Size(), step.want)
		}
		checkFiles(t, env, dir, vol, creds, sums)
		os.Remove(plain)
		cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
		if pi, _ := os.Stat(plain); pi.Size() != step.want-header {
			t.Fatalf("--size %s: data area %d bytes, want %d", step.arg, pi.Size(), step.want-header)
		}
		runChecker(t, "ext4", plain)
		if got := dfTotal(t, env, vol, creds); got != step.want-header {
			t.Fatalf("--size %s: df says %d bytes, want the data area's %d", step.arg, got, step.want-header)
		}
		dump, ok := cryptsetupDump(vol)
		if ok && !strings.Contains(dump, "(whole device)") {
			t.Fatalf("--size %s: luksDump does not show the segment running to the end:\n%s", step.arg, dump)
		}
		t.Logf("--size %s: %d bytes, files intact, e2fsck clean, df %d bytes; cryptsetup luksDump read it: %v", step.arg, step.want, step.want-header, ok)
	}
	before, _ := os.ReadFile(vol)
	if r := cvRun(env, time.Minute, append([]string{"resize", vol, "--size", fmt.Sprint(header + 2<<20)}, creds...)...); r.code != exitDestroy {
		t.Fatalf("a shrink below the files: want exit 5, got %v", r)
	}
	if after, _ := os.ReadFile(vol); !bytes.Equal(before, after) {
		t.Fatal("the refused shrink changed the container")
	}
}
