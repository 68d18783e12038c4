package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// plainFAT makes a plain image of size bytes holding a FAT filesystem
// over all of it with a few files; it returns the path and the files.
func plainFAT(t testing.TB, size int64) (string, map[string][]byte) {
	t.Helper()
	p := newFile(t, size)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fat.Format(f, size, fat.FormatOptions{Label: "PLAIN"}); err != nil {
		t.Fatal(err)
	}
	fs, err := fat.Open(f, size)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for i := 0; i < 5; i++ {
		b := bytes.Repeat([]byte(fmt.Sprintf("file %d ", i)), 2000*(i+1))
		name := fmt.Sprintf("/f%d.txt", i)
		if err := fs.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return p, files
}

// checkFiles opens the volume and reads the files back through FAT; with
// fsck.fat installed, the exported data area must check clean.
func checkFiles(t testing.TB, path string, c volume.Credentials, o volume.Options, files map[string][]byte) {
	t.Helper()
	o.ReadOnly = true
	v, err := volume.OpenWith(context.Background(), path, c, o)
	if err != nil {
		t.Fatalf("the encrypted image does not open: %v", err)
	}
	defer v.Close()
	fs, err := fat.Open(v, v.Size())
	if err != nil {
		t.Fatalf("no FAT filesystem in the encrypted volume: %v", err)
	}
	defer fs.Close()
	for name, want := range files {
		got, err := fs.ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v (differs: %v)", name, err, !bytes.Equal(got, want))
		}
	}
	if _, err := exec.LookPath("fsck.fat"); err != nil {
		return
	}
	img := newFile(t, 0)
	b := make([]byte, v.Size())
	v.ReadAt(b, 0)
	os.WriteFile(img, b, 0o600)
	if out, err := exec.Command("fsck.fat", "-n", img).CombinedOutput(); err != nil {
		t.Fatalf("fsck.fat on the decrypted data area: %v\n%s", err, out)
	}
}

func encryptFile(t testing.TB, p string, c volume.Credentials, o EncryptOptions) error {
	t.Helper()
	dev := openDev(t, p)
	defer dev.Close()
	r, err := StartEncrypt(context.Background(), dev, c, o)
	if err != nil {
		return err
	}
	defer r.Close()
	return Run(context.Background(), r, RunOptions{})
}

// TestEncryptToVeraCrypt encrypts a plain FAT image that fills its file:
// its free last clusters make room (the FAT is shrunk), the data moves up
// by 128 KiB, and the volume opens with its files; no plaintext of the
// image is left in the file.
func TestEncryptToVeraCrypt(t *testing.T) {
	p, files := plainFAT(t, 8<<20)
	var warned []string
	o := EncryptOptions{Encryption: "Serpent", Shrink: shrinkFAT, Warn: func(m string) { warned = append(warned, m) }}
	if err := encryptFile(t, p, vcCreds, o); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "shrunk") {
		t.Fatalf("warnings %q", warned)
	}
	checkFiles(t, p, vcCreds, volume.Options{}, files)
	raw, _ := os.ReadFile(p)
	if bytes.Contains(raw, []byte("file 1 file 1")) || bytes.Contains(raw, []byte("PLAIN      FAT")) {
		t.Fatal("plaintext of the image is left in the file")
	}
}

// TestEncryptRefusesNoRoom: a filesystem whose last clusters are in use,
// and an image with no recognised filesystem, are refused unchanged.
func TestEncryptRefusesNoRoom(t *testing.T) {
	p, _ := plainFAT(t, 1<<20)
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	fs, _ := fat.Open(f, 1<<20)
	fs.WriteFile("/full.bin", make([]byte, fs.Statfs().FreeBytes), 0o644)
	fs.Close()
	f.Close()
	before, _ := os.ReadFile(p)
	if err := encryptFile(t, p, vcCreds, EncryptOptions{Shrink: shrinkFAT}); !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), "uses the image's last") {
		t.Fatalf("full filesystem: %v", err)
	}
	junk := newFile(t, 1<<20)
	if err := encryptFile(t, junk, vcCreds, EncryptOptions{}); !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("no filesystem: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatal("a refused encryption changed the image")
	}
}

// shrinkFAT is EncryptOptions.Shrink for FAT, as cmd/cryptvol passes it.
func shrinkFAT(dev volume.Device, fsType string, keep int64) (int64, error) {
	if fsType != "vfat" {
		return 0, errors.ErrUnsupported
	}
	got, err := fat.Shrink(dev, dev.Size(), keep)
	if errors.Is(err, fat.ErrCannotShrink) {
		return 0, CannotShrink(err)
	}
	return got, err
}

// TestEncryptWithoutShrinkRefuses: with no EncryptOptions.Shrink (this
// package knows no filesystem), a FAT filesystem that fills its image is
// refused unchanged, although its last clusters are free, and one that
// Shrink reports as not shrinkable gets the generic advice.
func TestEncryptWithoutShrinkRefuses(t *testing.T) {
	p, _ := plainFAT(t, 2<<20)
	before, _ := os.ReadFile(p)
	err := encryptFile(t, p, vcCreds, EncryptOptions{})
	if !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), "shrink it by that much first") {
		t.Fatalf("no Shrink: %v", err)
	}
	unsupported := func(volume.Device, string, int64) (int64, error) { return 0, errors.ErrUnsupported }
	err = encryptFile(t, p, vcCreds, EncryptOptions{Shrink: unsupported})
	if !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), "shrink it by that much first") {
		t.Fatalf("Shrink unsupported: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("a refused encryption changed the image")
	}
}

// TestEncryptCrashAnywhere stops a VeraCrypt encryption after every write
// (tearing it) and resumes: the volume ends with all its files.
func TestEncryptCrashAnywhere(t *testing.T) {
	base, files := plainFAT(t, 2<<20)
	// Shrink once, so every run starts from the same image.
	dev := openDev(t, base)
	if err := makeRoom(dev, dev.Size()-2<<17, EncryptOptions{Shrink: shrinkFAT}); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	countDev := openDev(t, testdata.CopyFile(t, base))
	count := &crashDevice{Device: countDev, allowed: 1 << 30}
	r, err := StartEncrypt(context.Background(), count, vcCreds, EncryptOptions{})
	if err == nil {
		err = Run(context.Background(), r, RunOptions{})
	}
	countDev.Close()
	if err != nil {
		t.Fatal(err)
	}
	total := count.done
	step := 1
	if testing.Short() {
		step = 5
	}
	for k := 0; k < total; k += step {
		t.Run(fmt.Sprintf("after-%d-of-%d", k, total), func(t *testing.T) {
			p := testdata.CopyFile(t, base)
			dev := openDev(t, p)
			r, err := StartEncrypt(context.Background(), &crashDevice{Device: dev, allowed: k}, vcCreds, EncryptOptions{})
			if err == nil {
				err = Run(context.Background(), r, RunOptions{})
			}
			dev.Close()
			if !errors.Is(err, errCrash) {
				t.Fatalf("got %v, want the simulated crash", err)
			}
			if _, _, err := sumOf(t, p, vcCreds, volume.Options{}); err == nil {
				checkFiles(t, p, vcCreds, volume.Options{}, files)
				return
			} else if !errors.Is(err, volume.ErrReencrypting) && !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("ordinary open: %v", err)
			}
			dev = openDev(t, p)
			r, err = Resume(context.Background(), dev, nil, vcCreds, volume.Options{})
			if errors.Is(err, ErrNotReencrypting) || errors.Is(err, volume.ErrWrongPassword) {
				// Stopped before the backup header area was written: the
				// image is as it was.
				dev.Close()
				f, _ := os.Open(p)
				fs, ferr := fat.Open(f, 2<<20)
				if ferr != nil {
					t.Fatalf("stopped before it began, and the plain image is damaged: %v", ferr)
				}
				fs.Close()
				f.Close()
				return
			}
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			err = Run(context.Background(), r, RunOptions{})
			dev.Close()
			if err != nil {
				t.Fatal(err)
			}
			checkFiles(t, p, vcCreds, volume.Options{}, files)
		})
	}
}

// TestEncryptToLUKS2DetachedHeader encrypts a plain FAT image in place
// with its header in a file of its own, as cryptsetup reencrypt
// --encrypt --header does: the volume opens with the header and has its
// files; cryptsetup reads the header and accepts the passphrase.
func TestEncryptToLUKS2DetachedHeader(t *testing.T) {
	p, files := plainFAT(t, 8<<20)
	hp := newFile(t, 0)
	hdr := openDev(t, hp)
	err := encryptFile(t, p, luksCreds, EncryptOptions{Type: "luks2", Header: hdr, KDF: fastLUKSKDF})
	hdr.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, p, luksCreds, volume.Options{Header: hp}, files)
	if out, ok := cryptsetup(t, string(luksCreds.Password), "open", "--test-passphrase", "--key-file", "-", "--header", hp, p); !ok {
		t.Fatalf("cryptsetup rejects the new volume:\n%s", out)
	}
	if out, _ := cryptsetup(t, "", "luksDump", hp); strings.Contains(out, "Requirements") {
		t.Fatalf("the header still records the encryption:\n%s", out)
	}
}
