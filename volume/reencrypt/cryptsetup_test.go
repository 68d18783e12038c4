package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// stopInHotChunk runs a re-encryption of a copy of base and stops it (a
// crash) inside a chunk after at least k writes, so that the header marks
// a segment "in-reencryption"; it returns the copy.
func stopInHotChunk(t *testing.T, base string, k int, o Options, chunk int64) string {
	t.Helper()
	for ; k < 200; k++ {
		p := testdata.CopyFile(t, base)
		dev := openDev(t, p)
		cd := &crashDevice{Device: dev, allowed: k}
		r, err := Start(context.Background(), cd, nil, luksCreds, o)
		if err == nil {
			err = Run(context.Background(), r, RunOptions{Chunk: chunk})
		}
		dev.Close()
		if !errors.Is(err, errCrash) {
			t.Fatalf("got %v, want the simulated crash", err)
		}
		if dump, _ := cryptsetup(t, "", "luksDump", p); strings.Contains(dump, "in-reencryption") {
			return p
		}
	}
	t.Fatal("no stop left a chunk in re-encryption")
	return ""
}

// TestCryptsetupResumesOurs leaves LUKS2 re-encryptions half done (a crash
// inside a chunk, with checksums and with a journal) and has cryptsetup
// complete them (offline, in user space, as it can here): the data is
// intact under the new key, and cryptvol opens the result.
func TestCryptsetupResumesOurs(t *testing.T) {
	for _, o := range []Options{{}, {Resilience: volume.ResilienceJournal}, {Cipher: "aes-cbc-essiv:sha256", KeySize: 256}} {
		name := string(o.Resilience) + o.Cipher
		t.Run(name, func(t *testing.T) {
			base, sum := newLUKS(t, 20<<20, luksCreds, luks.CreateOptions{SectorSize: 512})
			_, key0, _ := sumOf(t, base, luksCreds, volume.Options{})
			p := stopInHotChunk(t, base, 8, o, 1<<20)
			if _, _, err := sumOf(t, p, luksCreds, volume.Options{}); !errors.Is(err, volume.ErrReencrypting) {
				t.Fatalf("an ordinary open of the half re-encrypted volume: %v", err)
			}
			dump, ok := cryptsetup(t, "", "luksDump", p)
			if !ok || !strings.Contains(dump, "Requirements:\tonline-reencrypt-v2") {
				t.Fatalf("cryptsetup's view of the half re-encrypted volume:\n%s", dump)
			}
			// cryptsetup completes an interrupted chunk only in its
			// repair, then resumes.
			if out, ok := cryptsetup(t, string(luksCreds.Password), "repair", "--batch-mode", "--key-file", "-", p); !ok {
				t.Fatalf("cryptsetup cannot repair (recover) our interrupted chunk:\n%s", out)
			}
			if out, ok := cryptsetup(t, string(luksCreds.Password), "reencrypt", "--resume-only", "--force-offline-reencrypt", "--batch-mode", "--key-file", "-", p); !ok {
				t.Fatalf("cryptsetup does not resume our re-encryption:\n%s", out)
			}
			got, key, err := sumOf(t, p, luksCreds, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != sum || bytes.Equal(key, key0) {
				t.Fatalf("after cryptsetup's resume: data differs (%v) or the key is the old one", got != sum)
			}
		})
	}
}

// cryptsetupVolume formats a LUKS2 volume with cryptsetup, writes random
// data through cryptvol and returns its sha256.
//
// cryptsetup 2.6 re-encrypts offline (in user space, as it must here)
// with IVs counted in 512-byte units whatever the sector size, unlike
// dm-crypt and the LUKS2 specification (fixed in later releases by its
// LARGE_IV flag): its offline re-encryption corrupts volumes of larger
// sectors, so these volumes have 512-byte sectors.
func cryptsetupVolume(t *testing.T, size int64, args ...string) (string, [32]byte) {
	t.Helper()
	p := newFile(t, size)
	a := append([]string{"luksFormat", "--type", "luks2", "--batch-mode", "--sector-size", "512", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "-"}, args...)
	if out, ok := cryptsetup(t, string(luksCreds.Password), append(a, p)...); !ok {
		t.Fatalf("luksFormat:\n%s", out)
	}
	dev := openDev(t, p)
	defer dev.Close()
	v, err := volume.OpenDeviceWith(context.Background(), dev, nil, luksCreds, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, v.Size())
	for i := range data {
		data[i] = byte(i * 7 / 512)
	}
	if _, err := v.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	v.Close()
	return p, sum256(data)
}

func resumeOurs(t *testing.T, p string) {
	t.Helper()
	dev := openDev(t, p)
	defer dev.Close()
	r, err := Resume(context.Background(), dev, nil, luksCreds, volume.Options{})
	if err != nil {
		t.Fatalf("resuming cryptsetup's re-encryption: %v", err)
	}
	defer r.Close()
	if err := Run(context.Background(), r, RunOptions{Chunk: 1 << 20}); err != nil {
		t.Fatal(err)
	}
}

// TestWeResumeCryptsetups resumes re-encryptions cryptsetup started
// (--init-only) and ones it was killed in the middle of (offline, with
// checksums and with a journal), and completes them: the data is intact
// under the new key, and cryptsetup accepts the passphrase after.
func TestWeResumeCryptsetups(t *testing.T) {
	pw := string(luksCreds.Password)
	t.Run("init-only", func(t *testing.T) {
		p, sum := cryptsetupVolume(t, 20<<20)
		_, key0, _ := sumOf(t, p, luksCreds, volume.Options{})
		if out, ok := cryptsetup(t, pw, "reencrypt", "--init-only", "--batch-mode", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "-", p); !ok {
			t.Fatalf("cryptsetup reencrypt --init-only:\n%s", out)
		}
		if _, _, err := sumOf(t, p, luksCreds, volume.Options{}); !errors.Is(err, volume.ErrReencrypting) {
			t.Fatalf("an ordinary open of cryptsetup's half re-encrypted volume: %v", err)
		}
		resumeOurs(t, p)
		got, key, err := sumOf(t, p, luksCreds, volume.Options{})
		if err != nil || got != sum || bytes.Equal(key, key0) {
			t.Fatalf("after our resume: %v, data differs %v", err, got != sum)
		}
		if out, ok := cryptsetup(t, pw, "open", "--test-passphrase", "--key-file", "-", p); !ok {
			t.Fatalf("cryptsetup rejects the passphrase after our resume:\n%s", out)
		}
	})
	for _, res := range []string{"checksum", "journal"} {
		t.Run("killed-"+res, func(t *testing.T) {
			p, sum := cryptsetupVolume(t, 48<<20)
			_, key0, _ := sumOf(t, p, luksCreds, volume.Options{})
			killed := false
			for try := 0; try < 10 && !killed; try++ {
				killed = killCryptsetupMidway(t, p, time.Duration(50+60*try)*time.Millisecond, "--resilience", res, "--hotzone-size", "1M")
			}
			if !killed {
				t.Skip("cryptsetup always finished before it could be killed mid-way (10 tries)")
			}
			dump, _ := cryptsetup(t, "", "luksDump", p)
			t.Logf("cryptsetup killed with:\n%s", segmentsOf(dump))
			resumeOurs(t, p)
			got, key, err := sumOf(t, p, luksCreds, volume.Options{})
			if err != nil || got != sum || bytes.Equal(key, key0) {
				showDiff(t, p)
				t.Fatalf("after our resume: %v, data differs %v", err, got != sum)
			}
		})
	}
}

// showDiff logs which MiB of the data area differ from the pattern
// cryptsetupVolume wrote.
func showDiff(t *testing.T, p string) {
	v, err := volume.OpenWith(context.Background(), p, luksCreds, volume.Options{ReadOnly: true})
	if err != nil {
		return
	}
	defer v.Close()
	data := make([]byte, v.Size())
	v.ReadAt(data, 0)
	for m := 0; m < len(data); m += 1 << 20 {
		bad := 0
		for i := m; i < min(m+1<<20, len(data)); i++ {
			if data[i] != byte(i*7/512) {
				bad++
			}
		}
		if bad > 0 {
			t.Logf("MiB %d: %d bytes differ", m>>20, bad)
		}
	}
}

// killCryptsetupMidway starts an offline cryptsetup re-encryption of p
// and kills it (SIGKILL) after d; it reports whether the volume was left
// mid-way (if not, it is back to its start or done: made again).
func killCryptsetupMidway(t *testing.T, p string, d time.Duration, extra ...string) bool {
	t.Helper()
	path, err := exec.LookPath("cryptsetup")
	if err != nil {
		t.Skip("cryptsetup is not installed")
	}
	backup := p + ".orig"
	if _, err := os.Stat(backup); err != nil {
		copyFile(t, p, backup)
	} else {
		copyFile(t, backup, p)
	}
	args := append([]string{"reencrypt", "--force-offline-reencrypt", "--batch-mode", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "-"}, extra...)
	cmd := exec.Command(path, append(args, p)...)
	cmd.Stdin = strings.NewReader(string(luksCreds.Password))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	dump, _ := cryptsetup(t, "", "luksDump", p)
	return strings.Contains(dump, "online-reencrypt") && strings.Count(dump, ": crypt") > 3
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func segmentsOf(dump string) string {
	i := strings.Index(dump, "Data segments:")
	j := strings.Index(dump, "Keyslots:")
	if i < 0 || j < i {
		return dump
	}
	return dump[i:j]
}
