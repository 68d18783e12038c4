package luks

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// newVolume creates a quick LUKS volume of typ at a new path.
func newVolume(t *testing.T, typ, pass string) string {
	t.Helper()
	p, dev := newImage(t, 20<<20)
	if _, err := Create(context.Background(), dev, CreateOptions{Type: typ, KDF: fastKDF("pbkdf2"), Quick: true}, pw(pass)); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	return p
}

func wipe4K(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, binHeaderSize), 0); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedPrimaryAutoDetected is issue 15's defect: with its primary
// header wiped, a LUKS2 volume was not found without --type (auto
// detection looked at the first 4096 bytes only, then tried TrueCrypt for
// a minute) and keyslot changes said there was no LUKS header. cryptsetup
// finds it by the secondary header (isLuks, luksDump, open).
func TestDamagedPrimaryAutoDetected(t *testing.T) {
	p := newVolume(t, "luks2", "pass")
	wipe4K(t, p)
	// (On a copy: cryptsetup repairs the primary as it reads.)
	cp := p + ".copy"
	if err := os.WriteFile(cp, fileBytes(t, p), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, ok := cryptsetup(t, "", "isLuks", cp); !ok {
		t.Fatalf("cryptsetup does not see the damaged volume as LUKS either:\n%s", out)
	}
	if !Present(openRaw(t, p, true)) {
		t.Error("Present misses the secondary header")
	}
	start := time.Now()
	var warned []string
	v, err := volume.OpenWith(context.Background(), p, pw("pass"), volume.Options{ReadOnly: true, Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatalf("auto-detection: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	if v.Info().Format != "luks2" || len(warned) == 0 || !strings.Contains(warned[0], "primary LUKS2 header is damaged") {
		t.Errorf("format %q, warnings %q", v.Info().Format, warned)
	}
	v.Close()
	if _, err := volume.OpenWith(context.Background(), p, pw("wrong"), volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrWrongPassword) {
		t.Errorf("wrong passphrase: %v", err)
	}

	// A keyslot change works through the secondary and rewrites both
	// copies: the volume is whole again, for cryptsetup too.
	d := openRaw(t, p, false)
	if _, err := AddKey(context.Background(), d, pw("pass"), []byte("second"), fastSlot()); err != nil {
		t.Fatalf("AddKey on a volume with a damaged primary header: %v", err)
	}
	h, err := Inspect(d)
	if err != nil || h.Warning != "" {
		t.Fatalf("after AddKey: %v, warning %q", err, h.Warning)
	}
	head := make([]byte, 6)
	d.ReadAt(head, 0)
	if !bytes.Equal(head, magic1st) {
		t.Error("the primary header was not rewritten")
	}
	mustCryptsetup(t, "second", "open", "--test-passphrase", "--key-file", "-", p)

	// LUKS1 has no secondary: a wiped LUKS1 header stays "no LUKS header".
	p1 := newVolume(t, "luks1", "pass")
	wipe4K(t, p1)
	if Present(openRaw(t, p1, true)) {
		t.Error("Present finds a LUKS header in a wiped LUKS1 volume")
	}
}

// backupOf returns a header backup of the volume at p.
func backupOf(t *testing.T, p string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := HeaderBackup(openRaw(t, p, true), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func restoreTo(t *testing.T, p string, b []byte, o RestoreOptions) error {
	t.Helper()
	return HeaderRestore(openRaw(t, p, false), bytes.NewReader(b), int64(len(b)), o)
}

func fileBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHeaderRestoreChecksUUID is issue 15's defect: the header backup of
// another LUKS volume of the same layout was restored without a question
// (cryptsetup asks, warning that the UUIDs differ). Now it is refused
// unless forced, and so is a restore onto a device with no LUKS header
// left to compare with.
func TestHeaderRestoreChecksUUID(t *testing.T) {
	for _, typ := range []string{"luks1", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			mine, theirs := newVolume(t, typ, "mine"), newVolume(t, typ, "theirs")
			myBak, theirBak := backupOf(t, mine), backupOf(t, theirs)
			before := fileBytes(t, mine)
			err := restoreTo(t, mine, theirBak, RestoreOptions{})
			if !errors.Is(err, volume.ErrForeignBackup) || !strings.Contains(err.Error(), "UUID") {
				t.Fatalf("another volume's backup: %v, want ErrForeignBackup naming the UUIDs", err)
			}
			if !bytes.Equal(fileBytes(t, mine), before) {
				t.Fatal("the refused restore changed the volume")
			}
			// Its own backup goes back, found by the UUID even of a damaged
			// header (LUKS2: through the secondary copy).
			wipe4K(t, mine)
			if typ == "luks2" {
				if err := restoreTo(t, mine, myBak, RestoreOptions{}); err != nil {
					t.Fatalf("restoring the volume's own backup over a damaged primary: %v", err)
				}
			} else {
				// Nothing left to compare with: refused unless forced.
				if err := restoreTo(t, mine, myBak, RestoreOptions{}); !errors.Is(err, volume.ErrForeignBackup) {
					t.Fatalf("restoring onto a device without a LUKS header: %v", err)
				}
				if err := restoreTo(t, mine, myBak, RestoreOptions{Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(fileBytes(t, mine), before) {
				t.Error("the restored volume differs from the original")
			}
			// Forced, the foreign one is written.
			if err := restoreTo(t, mine, theirBak, RestoreOptions{Force: true}); err != nil {
				t.Fatalf("forced restore: %v", err)
			}
			if masterKeyOf(t, mine, pw("theirs"), volume.Options{}) == nil {
				t.Fatal("the forced header does not open")
			}
		})
	}
}

// TestKeyslotChangeSeesOtherWriters: a header rewritten by another program
// while a keyslot change derives its keys is not overwritten, and nothing
// else is written either.
func TestKeyslotChangeSeesOtherWriters(t *testing.T) {
	ops := map[string]func(d volume.Device) error{
		"add": func(d volume.Device) error {
			_, err := AddKey(context.Background(), d, pw("pass"), []byte("new"), fastSlot())
			return err
		},
		"change": func(d volume.Device) error {
			_, err := ChangeKey(context.Background(), d, pw("pass"), []byte("new"), fastSlot())
			return err
		},
		"remove": func(d volume.Device) error {
			_, err := RemoveKey(context.Background(), d, pw("pass"), true, nil)
			return err
		},
		"kill": func(d volume.Device) error { return KillSlot(context.Background(), d, 0, nil, true, nil) },
	}
	defer func() { testHookBeforeHeaderWrite = func() {} }()
	for _, typ := range []string{"luks1", "luks2"} {
		for name, op := range ops {
			p := newVolume(t, typ, "pass")
			other := openRaw(t, p, false) // the other program's handle
			var want []byte
			testHookBeforeHeaderWrite = func() {
				junk := make([]byte, 512)
				rand.Read(junk)
				other.WriteAt(junk, 0)
				want = fileBytes(t, p)
			}
			if err := op(openRaw(t, p, false)); !errors.Is(err, volume.ErrHeaderChanged) {
				t.Errorf("%s %s: %v, want ErrHeaderChanged", typ, name, err)
				continue
			}
			if !bytes.Equal(fileBytes(t, p), want) {
				t.Errorf("%s %s wrote after seeing the header change", typ, name)
			}
		}
	}
}
