//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// A re-encryption kill campaign: each format's volume is filled with random
// data, then `cryptvol reencrypt` (the real command) is killed with SIGKILL
// at random moments, again and again, and started again each time, which
// resumes it. At the end the data area must read back exactly as it was
// (sha256), the master key must be new, and the old key must decrypt none
// of the data area's sectors to what they held.
//
// The default run is short (8 MiB, 3 kills mid-way per format);
// CRYPTVOL_REENCRYPT_KILLS=N runs N kills per format on 256 MiB volumes
// (CRYPTVOL_REENCRYPT_MIB=M for another size).

type reencFormat struct {
	name   string
	create []string // after `create VOL --size S`
	open   []string // credentials for every command
	new    []string // the new encryption asked of reencrypt
	extra  int64    // the file's size beyond the data area, roughly
}

var reencFormats = []reencFormat{
	{"veracrypt", []string{"--hash", "SHA-256", "--pim", "1", "--encryption", "AES"},
		[]string{"--pim", "1", "--hash", "sha256"}, []string{"--encryption", "Serpent-AES"}, 256 << 10},
	{"truecrypt", []string{"--type", "truecrypt", "--hash", "SHA-512", "--encryption", "Twofish"},
		[]string{"--type", "truecrypt", "--hash", "sha512"}, []string{"--encryption", "AES"}, 256 << 10},
	{"luks1", []string{"--type", "luks1", "--pbkdf-force-iterations", "1000"},
		nil, []string{"--cipher", "serpent-xts-plain64"}, 2 << 20},
	{"luks2", []string{"--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"},
		nil, []string{"--cipher", "twofish-xts-plain64", "--key-size", "256"}, 16 << 20},
	{"luks2-journal", []string{"--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"},
		nil, []string{"--resilience", "journal"}, 16 << 20},
}

func TestReencryptKilled(t *testing.T) {
	needCLI(t)
	kills, size := 3, int64(8<<20)
	if s := os.Getenv("CRYPTVOL_REENCRYPT_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRYPTVOL_REENCRYPT_KILLS=%q: want a number of kills", s)
		}
		kills, size = n, 256<<20
	}
	if s := os.Getenv("CRYPTVOL_REENCRYPT_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRYPTVOL_REENCRYPT_MIB=%q", s)
		}
		size = int64(n) << 20
	}
	for _, f := range reencFormats {
		t.Run(f.name, func(t *testing.T) { reencKillCampaign(t, f, size, kills) })
	}
}

// reencVolume creates f's volume with a data area of about size bytes of
// random data; it returns the path, the credentials, the data's sha256 and
// a snapshot of the volume's keys (to try the old key at the end).
func reencVolume(t testing.TB, f reencFormat, size int64) (string, []string, [32]byte, *volume.Snapshot) {
	t.Helper()
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("re-encryption kill test\n"), 0o600)
	vol := filepath.Join(dir, "v")
	creds := append([]string{"--password-file", pw}, f.open...)
	args := append([]string{"create", vol, "--size", strconv.FormatInt(size+f.extra, 10), "--quick", "--filesystem", "none", "--non-interactive", "--password-file", pw}, f.create...)
	cryptvolCmd(t, nil, args...)
	v, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("re-encryption kill test"), PIM: pimOf(f)}, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h := sha256.New()
	buf := make([]byte, 4<<20)
	for off := int64(0); off < v.Size(); off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), v.Size()-off)]
		rand.Read(b)
		h.Write(b)
		if _, err := v.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := v.Snapshot()
	if err != nil {
		t.Fatalf("snapshot of the old keys: %v", err)
	}
	t.Cleanup(snap.Wipe)
	return vol, creds, [32]byte(h.Sum(nil)), snap
}

func pimOf(f reencFormat) int {
	for i, a := range f.open {
		if a == "--pim" {
			n, _ := strconv.Atoi(f.open[i+1])
			return n
		}
	}
	return 0
}

func reencKillCampaign(t *testing.T, f reencFormat, size int64, kills int) {
	vol, creds, sum, old := reencVolume(t, f, size)
	args := append(append([]string{"reencrypt", vol}, creds...), f.new...)

	// How long a whole run takes, without kills: the kills land at
	// random moments within it (a fresh volume, so the campaign's own
	// first run starts from the beginning).
	cal, ccreds, _, _ := reencVolume(t, f, size)
	start := time.Now()
	cryptvolCmd(t, nil, append(append([]string{"reencrypt", cal}, ccreds...), f.new...)...)
	whole := time.Since(start)
	os.Remove(cal)

	// Kills that land before the re-encryption is recorded (while the
	// key is derived) or after it completed count as runs, not as kills
	// mid-way: the campaign goes on until kills of them left the volume
	// half re-encrypted (or ten times as many runs).
	var runs, killed, midway, completed int
	for i := 0; midway < kills && i < 10*kills; i++ {
		runs++
		p := startCmd(t, args...)
		delay := time.Duration(mrand.Int64N(int64(whole)))
		if _, err := os.Stat("/proc/self/io"); err == nil {
			// On a loaded machine the key derivation can take most of
			// the calibrated run: wait for the first write (syscw in
			// /proc/PID/io), then kill at a random moment of what the
			// calibrated run leaves.
			t0 := time.Now()
		poll:
			for time.Since(t0) < 2*whole && syscw(p.cmd.Process.Pid) < 1 {
				select {
				case <-p.done:
					break poll
				case <-time.After(200 * time.Microsecond):
				}
			}
			delay = time.Duration(mrand.Int64N(int64(max(whole-time.Since(t0), time.Millisecond))))
		}
		select {
		case <-p.done:
		case <-time.After(delay):
			p.cmd.Process.Signal(syscall.SIGKILL)
		}
		code := p.wait()
		switch {
		case code == -1:
			killed++
		case code == 0:
			completed++
		default:
			t.Fatalf("run %d: exit %d\n%s", i, code, p.stderr.String())
		}
		// The next run (the next kill's or the last) must resume a
		// volume left mid-way.
		if code == -1 && reencrypting(t, vol, creds) {
			midway++
		}
	}
	out := cryptvolCmd(t, nil, args...)
	t.Logf("%s, %d MiB: %d runs, %d killed (%d of them left it mid-way, each resumed by the next run), %d completed before their kill; a whole run takes %v",
		f.name, size>>20, runs, killed, midway, completed, whole.Round(time.Millisecond))
	if midway == 0 {
		t.Fatalf("no kill of %d runs landed inside the re-encryption", runs)
	}
	if !strings.Contains(out, "Re-encrypted") {
		t.Fatalf("the last run: %s", out)
	}

	got, key := dataSum(t, vol, f)
	if got != sum {
		t.Fatal("after the kills the data area does not read back as it was")
	}
	if f.name == "luks1" {
		// It is LUKS2 while re-encrypted: a kill anywhere must not
		// leave it so.
		v, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("re-encryption kill test")}, volume.Options{Type: "luks1", ReadOnly: true})
		if err != nil {
			t.Fatalf("after the kills it does not open as LUKS1: %v", err)
		}
		v.Close()
	}
	if bytes.Equal(key, old.MasterKey) {
		t.Fatal("the master key did not change")
	}
	if n := sectorsUnderOldKey(t, vol, f, old, size); n > 0 {
		t.Fatalf("the old key still decrypts %d sectors to their contents", n)
	}
}

// reencrypting reports whether an ordinary open of vol says a
// re-encryption is in progress (exit 3, ErrReencrypting's message).
func reencrypting(t *testing.T, vol string, creds []string) bool {
	t.Helper()
	cmd := exec.Command("cryptvol", append([]string{"info", vol}, creds...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return false
	}
	if cmd.ProcessState.ExitCode() == exitDamaged && strings.Contains(string(out), "re-encryption of this volume was interrupted") {
		return true
	}
	t.Fatalf("after a kill, info says (exit %d): %s", cmd.ProcessState.ExitCode(), out)
	return false
}

// dataSum returns the sha256 of vol's data area and its master key.
func dataSum(t *testing.T, vol string, f reencFormat) ([32]byte, []byte) {
	t.Helper()
	v, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("re-encryption kill test"), PIM: pimOf(f)}, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h := sha256.New()
	buf := make([]byte, 4<<20)
	for off := int64(0); off < v.Size(); off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), v.Size()-off)]
		if _, err := v.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	return [32]byte(h.Sum(nil)), v.MasterKey()
}

// sectorsUnderOldKey decrypts vol's data area with the keys of the old
// snapshot and counts the 512-byte sectors that come out as the new key
// reads them: any would mean the old key still opens part of the data.
func sectorsUnderOldKey(t *testing.T, vol string, f reencFormat, old *volume.Snapshot, size int64) int {
	t.Helper()
	var r volume.Reopener
	for _, d := range volume.Drivers() {
		if d.Name() == old.Driver {
			r, _ = d.(volume.Reopener)
		}
	}
	if r == nil {
		t.Fatalf("no driver %q", old.Driver)
	}
	st := old.Mode
	st.Key = bytes.Clone(st.Key)
	m, err := r.ReopenMode(st)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := volume.OpenDevice(vol, true)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ov, err := volume.New(dev, &volume.Unlocked{Mode: m, DataOffset: old.DataOffset, DataSize: old.DataSize, FirstSector: old.FirstSector, ReadOnly: true}, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ov.Close()
	nv, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("re-encryption kill test"), PIM: pimOf(f)}, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nv.Close()
	a, b := make([]byte, 4<<20), make([]byte, 4<<20)
	same := 0
	n := min(ov.Size(), nv.Size())
	for off := int64(0); off < n; off += int64(len(a)) {
		l := min(int64(len(a)), n-off)
		if _, err := ov.ReadAt(a[:l], off); err != nil {
			t.Fatal(err)
		}
		if _, err := nv.ReadAt(b[:l], off); err != nil {
			t.Fatal(err)
		}
		for s := int64(0); s < l; s += 512 {
			if bytes.Equal(a[s:s+512], b[s:s+512]) {
				same++
			}
		}
	}
	if n < size/2 {
		t.Fatalf("compared only %d bytes", n)
	}
	return same
}

// TestReencryptInterrupted stops `cryptvol reencrypt` with SIGINT (Ctrl-C)
// part-way: it ends with exit 130 saying how far it got, the volume is
// left mid-way (for LUKS2, cryptsetup luksDump shows the online-reencrypt
// requirement), and the next run resumes and completes it.
func TestReencryptInterrupted(t *testing.T) {
	needCLI(t)
	for _, f := range []reencFormat{reencFormats[0], reencFormats[3]} {
		t.Run(f.name, func(t *testing.T) {
			vol, creds, sum, old := reencVolume(t, f, 32<<20)
			args := append(append([]string{"reencrypt", vol}, creds...), f.new...)
			// The interrupt goes in once the process has started writing
			// (syscw in /proc/PID/io: the re-encryption's first records),
			// else (no /proc) at a random moment of a whole run's time,
			// measured on a fresh copy: a fixed delay missed the data pass
			// wherever key derivation or the pass took another time.
			cal, ccreds, _, _ := reencVolume(t, f, 32<<20)
			start := time.Now()
			cryptvolCmd(t, nil, append(append([]string{"reencrypt", cal}, ccreds...), f.new...)...)
			whole := time.Since(start)
			os.Remove(cal)
			var p *proc
			for try := 0; ; try++ {
				if try == 20 {
					t.Fatalf("no SIGINT of 20 landed inside the re-encryption (a whole run takes %v)", whole)
				}
				p = startCmd(t, args...)
				if _, err := os.Stat("/proc/self/io"); err == nil {
					for end := time.Now().Add(2 * whole); time.Now().Before(end) && syscw(p.cmd.Process.Pid) < int64(1+try%4); {
						time.Sleep(200 * time.Microsecond)
					}
				} else {
					time.Sleep(time.Duration(mrand.Int64N(int64(whole))))
				}
				p.cmd.Process.Signal(os.Interrupt)
				code := p.wait()
				if code == exitCancelled && strings.Contains(p.stderr.String(), "re-encrypted, the progress saved") {
					break
				}
				if testing.Verbose() {
					t.Logf("try %d: exit %d: %s", try, code, strings.TrimSpace(p.stderr.String()))
				}
				if code != exitCancelled && code != 0 {
					t.Fatalf("exit %d after SIGINT:\n%s", code, p.stderr.String())
				}
			}
			t.Logf("%s", strings.TrimSpace(p.stderr.String()))
			if !reencrypting(t, vol, creds) {
				t.Fatal("after the interrupt the volume is not mid-way")
			}
			if f.name == "luks2" {
				if _, err := exec.LookPath("cryptsetup"); err != nil {
					t.Log("cryptsetup is not installed: luksDump not checked")
				} else if out, err := exec.Command("cryptsetup", "luksDump", vol).CombinedOutput(); err != nil || !strings.Contains(string(out), "Requirements:\tonline-reencrypt-v2") {
					t.Fatalf("cryptsetup luksDump of the interrupted volume (%v):\n%s", err, out)
				}
			}
			out := cryptvolCmd(t, nil, append([]string{"reencrypt", vol}, creds...)...)
			if !strings.Contains(out, "Resuming the interrupted re-encryption") {
				t.Fatalf("the next run did not resume:\n%s", out)
			}
			if got, key := dataSum(t, vol, f); got != sum || bytes.Equal(key, old.MasterKey) {
				t.Fatal("after the resumed run: data changed or the key did not")
			}
		})
	}
}

// TestEncryptKilled kills `cryptvol reencrypt --encrypt` of a plain FAT
// image with SIGKILL at random moments and runs it again each time, which
// resumes it (VeraCrypt, and LUKS2 with a detached header): at the end the
// volume holds the image's file as it was.
func TestEncryptKilled(t *testing.T) {
	needCLI(t)
	if _, err := exec.LookPath("mkfs.fat"); err != nil {
		t.Skip("mkfs.fat is not installed (apt-get install dosfstools)")
	}
	if _, err := exec.LookPath("mcopy"); err != nil {
		t.Skip("mcopy is not installed (apt-get install mtools)")
	}
	for _, typ := range []string{"veracrypt", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			dir := t.TempDir()
			img, file, pw := filepath.Join(dir, "p.img"), filepath.Join(dir, "f.bin"), filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte("re-encryption kill test\n"), 0o600)
			data := make([]byte, 5<<20)
			rand.Read(data)
			os.WriteFile(file, data, 0o600)
			if err := os.Truncate(img, 0); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for _, c := range [][]string{{"truncate", "-s", "48M", img}, {"mkfs.fat", img}, {"mcopy", "-i", img, file, "::/f.bin"}} {
				if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s", c, err, out)
				}
			}
			args := []string{"reencrypt", "--encrypt", img, "--password-file", pw, "--type", typ}
			open := []string{"--password-file", pw}
			if typ == "luks2" {
				args = append(args, "--header", img+".hdr", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000")
				open = append(open, "--header", img+".hdr")
			} else {
				args = append(args, "--pim", "1", "--hash", "SHA-256")
				open = append(open, "--pim", "1", "--hash", "sha256")
			}
			var runs, killed, done int
			for runs < 30 && killed < 3 && done == 0 {
				runs++
				p := startCmd(t, args...)
				select {
				case <-p.done:
				case <-time.After(time.Duration(mrand.IntN(500)) * time.Millisecond):
					p.cmd.Process.Signal(syscall.SIGKILL)
				}
				switch code := p.wait(); code {
				case -1:
					killed++
				case 0:
					done++
				default:
					t.Fatalf("run %d: exit %d\n%s", runs, code, p.stderr.String())
				}
			}
			if done == 0 {
				cryptvolCmd(t, nil, args...)
			}
			got := filepath.Join(dir, "got")
			cryptvolCmd(t, nil, append([]string{"get", img, "/f.bin", got}, open...)...)
			if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("after %d runs (%d killed) the file is not as it was (%v)", runs, killed, err)
			}
			t.Logf("%s: %d runs, %d killed, then completed", typ, runs, killed)
		})
	}
}
