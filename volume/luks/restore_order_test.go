package luks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
)

// restoreFixture makes a volume whose backup (old's keyslot 0) is to be
// restored over a header where keyslot 0's area holds another
// passphrase's key material, and returns the path, the backup and the
// bytes before the restore.
func restoreFixture(t *testing.T, typ string) (string, []byte, []byte) {
	t.Helper()
	p := newVolume(t, typ, "old")
	dev := openRaw(t, p, false)
	var backup bytes.Buffer
	if _, err := HeaderBackup(dev, &backup); err != nil {
		t.Fatal(err)
	}
	ko := KeyslotOptions{KDF: fastKDF("pbkdf2")}
	if _, err := AddKey(context.Background(), dev, pw("old"), []byte("new"), ko); err != nil {
		t.Fatal(err)
	}
	if err := KillSlot(context.Background(), dev, 0, nil, false, nil); err != nil {
		t.Fatal(err)
	}
	zero := 0
	ko.Slot = &zero
	if _, err := AddKey(context.Background(), dev, pw("new"), []byte("third"), ko); err != nil {
		t.Fatal(err)
	}
	return p, backup.Bytes(), fileBytes(t, p)
}

// TestRestoreStatesOpenInCryptsetup takes the device at every flush of a
// restore that goes through an intermediate header and has cryptsetup
// open it: each is a plain LUKS header, no state a reader of its own.
func TestRestoreStatesOpenInCryptsetup(t *testing.T) {
	cryptsetup(t, "", "--version") // skips without it
	for _, typ := range []string{"luks1", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			p, backup, before := restoreFixture(t, typ)
			rec := crashsim.NewRecorder(openRaw(t, p, false))
			if err := HeaderRestore(rec, bytes.NewReader(backup), int64(len(backup)), RestoreOptions{Warn: func(m string) { t.Errorf("warning: %s", m) }}); err != nil {
				t.Fatal(err)
			}
			if got := fileBytes(t, p); !bytes.Equal(got[:len(backup)], backup) {
				t.Fatal("the header region is not the backup's after the restore")
			}
			epochs := crashsim.Epochs(rec.Ops())
			if len(epochs) < 5 {
				t.Fatalf("%d flush epochs: the restore did not go through an intermediate header", len(epochs))
			}
			state := filepath.Join(t.TempDir(), "state.img")
			img := append([]byte(nil), before...)
			for k, e := range epochs {
				for _, w := range e {
					copy(img[w.Off:], w.Data)
				}
				if err := os.WriteFile(state, img, 0o600); err != nil {
					t.Fatal(err)
				}
				var opened []string
				for _, pass := range []string{"old", "new", "third"} {
					if _, ok := cryptsetup(t, pass, "open", "--test-passphrase", "--key-file", "-", state); ok {
						opened = append(opened, pass)
					}
				}
				if len(opened) == 0 {
					t.Errorf("after %d of %d flushes cryptsetup opens the device with none of old, new, third", k+1, len(epochs)-1)
				}
				t.Logf("after %d flushes: cryptsetup opens it with %s", k+1, strings.Join(opened, ", "))
			}
		})
	}
}

// TestRestoreWithoutSafeOrderWarns fills all eight LUKS1 keyslots and
// rewrites one in place: no free keyslot is left to stage the backup's in,
// so the restore goes in one write, says so, and is still exact.
func TestRestoreWithoutSafeOrderWarns(t *testing.T) {
	p := newVolume(t, "luks1", "p0")
	dev := openRaw(t, p, false)
	ko := KeyslotOptions{KDF: fastKDF("pbkdf2")}
	for i := 1; i < 8; i++ {
		if _, err := AddKey(context.Background(), dev, pw("p0"), []byte(fmt.Sprint("p", i)), ko); err != nil {
			t.Fatal(err)
		}
	}
	var backup bytes.Buffer
	if _, err := HeaderBackup(dev, &backup); err != nil {
		t.Fatal(err)
	}
	ko.Warn = func(string) {}
	if _, err := ChangeKey(context.Background(), dev, pw("p0"), []byte("q0"), ko); err != nil {
		t.Fatal(err)
	}
	var warned []string
	if err := HeaderRestore(dev, bytes.NewReader(backup.Bytes()), int64(backup.Len()), RestoreOptions{Warn: func(m string) { warned = append(warned, m) }}); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "one write") {
		t.Errorf("warnings %q, want one saying the restore went in one write", warned)
	}
	h, err := readLUKS1(dev)
	if err != nil {
		t.Fatal(err)
	}
	n := h.areaEnd()
	if got := fileBytes(t, p); !bytes.Equal(got[:n], backup.Bytes()[:n]) {
		t.Error("the header region is not the backup's after the restore")
	}
	v, err := openPath(t, p, pw("p0"), volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the restored header does not open with the backup's passphrase: %v", err)
	}
	v.Close()
}
