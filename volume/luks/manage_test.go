package luks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

func openDev(t testing.TB, path string) *rawDevice {
	t.Helper()
	return openRaw(t, path, false)
}

func fastSlot() KeyslotOptions { return KeyslotOptions{KDF: fastKDF("pbkdf2")} }

// TestRoundTrip: create, write known data through the volume, add a second
// passphrase, remove the first, reopen with the second and read the data
// back; for LUKS1 and LUKS2 (4096-byte sectors).
func TestRoundTrip(t *testing.T) {
	for _, typ := range []string{"luks1", "luks2"} {
		typ := typ
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			p, dev := newImage(t, 24<<20)
			var fills int
			_, err := Create(context.Background(), dev, CreateOptions{Type: typ, KDF: fastKDF("pbkdf2"),
				Progress: func(done, total int64) { fills++ }}, pw("first"))
			if err != nil {
				t.Fatal(err)
			}
			if fills == 0 {
				t.Error("no progress reported while filling the data area")
			}
			dev.Close()
			v, err := openPath(t, p, pw("first"), volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantSS := map[string]int{"luks1": 512, "luks2": 4096}[typ]
			if v.SectorSize() != wantSS {
				t.Errorf("sector size %d, want %d", v.SectorSize(), wantSS)
			}
			rng := rand.New(rand.NewSource(1))
			data := make([]byte, 3<<20+1234)
			rng.Read(data)
			const at = 1<<20 + 777 // unaligned on purpose
			if _, err := v.WriteAt(data, at); err != nil {
				t.Fatal(err)
			}
			v.Close()

			d := openDev(t, p)
			slot, err := AddKey(context.Background(), d, pw("first"), []byte("second"), fastSlot())
			if err != nil || slot != 1 {
				t.Fatalf("AddKey: slot %d, %v", slot, err)
			}
			removed, err := RemoveKey(context.Background(), d, pw("first"), false, nil)
			if err != nil || removed != 0 {
				t.Fatalf("RemoveKey: slot %d, %v", removed, err)
			}
			if _, err := RemoveKey(context.Background(), d, pw("second"), false, nil); !errors.Is(err, ErrLastKeyslot) {
				t.Fatalf("removing the last keyslot without force: %v", err)
			}
			d.Close()
			if _, err := openPath(t, p, pw("first"), volume.Options{}); !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("the removed passphrase still opens: %v", err)
			}
			v, err = openPath(t, p, pw("second"), volume.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			got := make([]byte, len(data))
			if _, err := v.ReadAt(got, at); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatal("data read back differs")
			}
			if *v.Info().KeySlot != 1 {
				t.Errorf("opened keyslot %d, want 1", *v.Info().KeySlot)
			}
			if out, ok := cryptsetup(t, "second", "open", "--test-passphrase", "--key-file", "-", p); !ok {
				t.Fatalf("cryptsetup rejects the new passphrase:\n%s", out)
			}
		})
	}
}

// TestAddKeyToMetadataSizeImages adds a keyslot to each LUKS2 image with
// 16 KiB to 4 MiB metadata and opens it with the new passphrase, here and
// with cryptsetup.
func TestAddKeyToMetadataSizeImages(t *testing.T) {
	for _, src := range mdaImages(t) {
		src := src
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			p := testdata.CopyFile(t, src)
			d := openDev(t, p)
			slot, err := AddKey(context.Background(), d, pw(mdaPassphrase), []byte("new passphrase"), fastSlot())
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			v, err := openPath(t, p, pw("new passphrase"), volume.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if *v.Info().KeySlot != slot {
				t.Errorf("opened keyslot %d, want %d", *v.Info().KeySlot, slot)
			}
			key := v.MasterKey()
			v.Close()
			if out, ok := cryptsetup(t, "new passphrase", "open", "--test-passphrase", "--key-file", "-", p); !ok {
				t.Fatalf("cryptsetup rejects the new passphrase:\n%s", out)
			}
			sameKey(t, key, dumpVolumeKey(t, "new passphrase", p))
			// Both header copies were rewritten with the same new epoch.
			h, err := readLUKS2(openDev(t, p))
			if err != nil || h.warning != "" || h.bin.SeqID != 4 {
				t.Fatalf("header after the change: %v, warning %q, epoch %d (want 4)", err, h.warning, h.bin.SeqID)
			}
		})
	}
}

// TestChangeAndKill covers luksChangeKey and luksKillSlot.
func TestChangeAndKill(t *testing.T) {
	for _, typ := range []string{"luks1", "luks2"} {
		typ := typ
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			p, dev := newImage(t, 20<<20)
			if _, err := Create(context.Background(), dev, CreateOptions{Type: typ, KDF: fastKDF("pbkdf2"), Quick: true}, pw("a")); err != nil {
				t.Fatal(err)
			}
			key := masterKeyOf(t, p, pw("a"), volume.Options{})
			slot, err := ChangeKey(context.Background(), dev, pw("a"), []byte("b"), fastSlot())
			if err != nil {
				t.Fatal(err)
			}
			wantSlot := map[string]int{"luks1": 1, "luks2": 0}[typ] // LUKS1 moves to a free keyslot
			if slot != wantSlot {
				t.Errorf("changed passphrase is in keyslot %d, want %d", slot, wantSlot)
			}
			if _, err := openPath(t, p, pw("a"), volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("old passphrase after change: %v", err)
			}
			sameKey(t, masterKeyOf(t, p, pw("b"), volume.Options{}), key)
			s5 := 5
			if _, err := AddKey(context.Background(), dev, pw("b"), []byte("c"), KeyslotOptions{Slot: &s5, KDF: fastKDF("pbkdf2")}); err != nil {
				t.Fatal(err)
			}
			if _, err := AddKey(context.Background(), dev, pw("b"), []byte("d"), KeyslotOptions{Slot: &s5, KDF: fastKDF("pbkdf2")}); !errors.Is(err, ErrKeyslotInUse) {
				t.Fatalf("adding into a used keyslot: %v", err)
			}
			wrong := pw("nope")
			if err := KillSlot(context.Background(), dev, 5, &wrong, false, nil); !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("kill with a wrong verification passphrase: %v", err)
			}
			if err := KillSlot(context.Background(), dev, slot, nil, false, nil); err != nil {
				t.Fatal(err)
			}
			if err := KillSlot(context.Background(), dev, 5, nil, false, nil); !errors.Is(err, ErrLastKeyslot) {
				t.Fatalf("killing the last keyslot: %v", err)
			}
			if err := KillSlot(context.Background(), dev, 5, nil, true, nil); err != nil {
				t.Fatal(err)
			}
			h, err := Inspect(dev)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range h.Keyslots {
				if k.Active {
					t.Errorf("keyslot %d still active", k.Slot)
				}
			}
			out := mustCryptsetup(t, "", "luksDump", p)
			if strings.Contains(out, "ENABLED") || strings.Contains(out, "luks2\n") && strings.Contains(out, "  5: ") {
				t.Errorf("cryptsetup still sees a keyslot:\n%s", out)
			}
		})
	}
}

// crashDevice lets the first allowed writes through and fails every later
// one, like a machine that lost power after the allowed-th write.
type crashDevice struct {
	volume.Device
	allowed, done int
}

var errCrash = errors.New("simulated crash")

func (c *crashDevice) WriteAt(p []byte, off int64) (int, error) {
	if c.done >= c.allowed {
		return 0, errCrash
	}
	c.done++
	return c.Device.WriteAt(p, off)
}

// TestCrashDuringKeyslotChange interrupts add, remove and change after
// each of their writes and checks the volume still opens with the old or
// the new passphrase — here and, for the passphrase that works, with
// cryptsetup.
func TestCrashDuringKeyslotChange(t *testing.T) {
	ops := []struct {
		name string
		run  func(dev volume.Device) error
		// ok lists passphrase sets: after the crash one of them must
		// open the volume entirely (every passphrase in it).
		ok [][]string
	}{
		{"add", func(d volume.Device) error {
			_, err := AddKey(context.Background(), d, pw("old"), []byte("new"), fastSlot())
			return err
		}, [][]string{{"old", "other"}}},
		{"remove", func(d volume.Device) error {
			_, err := RemoveKey(context.Background(), d, pw("old"), false, nil)
			return err
		}, [][]string{{"other"}}},
		{"change", func(d volume.Device) error {
			_, err := ChangeKey(context.Background(), d, pw("old"), []byte("new"), fastSlot())
			return err
		}, [][]string{{"old", "other"}, {"new", "other"}}},
	}
	for _, typ := range []string{"luks1", "luks2"} {
		base, dev := newImage(t, 20<<20)
		if _, err := Create(context.Background(), dev, CreateOptions{Type: typ, KDF: fastKDF("pbkdf2"), Quick: true}, pw("old")); err != nil {
			t.Fatal(err)
		}
		if _, err := AddKey(context.Background(), dev, pw("old"), []byte("other"), fastSlot()); err != nil {
			t.Fatal(err)
		}
		dev.Close()
		for _, op := range ops {
			// Count the writes of an uninterrupted run.
			full := &crashDevice{Device: openDev(t, testdata.CopyFile(t, base)), allowed: 1 << 30}
			if err := op.run(full); err != nil {
				t.Fatalf("%s %s: %v", typ, op.name, err)
			}
			for k := 0; k <= full.done; k++ {
				name := fmt.Sprintf("%s/%s/after-%d-of-%d-writes", typ, op.name, k, full.done)
				p := testdata.CopyFile(t, base)
				err := op.run(&crashDevice{Device: openDev(t, p), allowed: k})
				if k < full.done && !errors.Is(err, errCrash) {
					t.Errorf("%s: got %v, want the simulated crash", name, err)
				}
				if k == full.done && err != nil {
					t.Errorf("%s: %v", name, err)
				}
				checkOpensWithOneOf(t, name, p, op.ok)
			}
		}
	}
}

func checkOpensWithOneOf(t *testing.T, name, p string, sets [][]string) {
	t.Helper()
	for _, set := range sets {
		all := true
		for _, pass := range set {
			v, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true})
			if err != nil {
				all = false
				break
			}
			v.Close()
		}
		if !all {
			continue
		}
		// The passphrase that works here must work for cryptsetup too.
		if out, ok := cryptsetup(t, set[0], "open", "--test-passphrase", "--key-file", "-", p); !ok {
			t.Errorf("%s: cryptvol opens with %q but cryptsetup does not:\n%s", name, set[0], out)
		}
		return
	}
	t.Errorf("%s: the volume opens with none of the passphrase sets %v", name, sets)
}

// TestHeaderBackupRestore backs up a header, destroys it and restores it,
// and compares our backup with cryptsetup's luksHeaderBackup.
func TestHeaderBackupRestore(t *testing.T) {
	for _, src := range []string{"compatimage.img.xz", "compatimage2.img.xz", "luks2_mda_images.tar.xz/test_image_64"} {
		pass := compatPassphrase
		if strings.Contains(src, "mda") {
			pass = mdaPassphrase
		}
		p := testdata.CopyFile(t, unpackMember(t, src))
		d := openDev(t, p)
		var ours bytes.Buffer
		if _, err := HeaderBackup(d, &ours); err != nil {
			t.Fatal(err)
		}
		theirs := filepath.Join(t.TempDir(), "hdr.bak")
		mustCryptsetup(t, "", "luksHeaderBackup", "--header-backup-file", theirs, p)
		tb, _ := os.ReadFile(theirs)
		if !bytes.Equal(ours.Bytes(), tb) {
			t.Errorf("%s: our backup (%d bytes) differs from cryptsetup's (%d bytes)", src, ours.Len(), len(tb))
		}
		// The backup is a detached header.
		if _, err := openPath(t, p, pw(pass), volume.Options{Header: theirs, ReadOnly: true}); err != nil {
			t.Errorf("%s: the backup does not work as a detached header: %v", src, err)
		}
		// Destroy every keyslot, then restore.
		h, _ := Inspect(d)
		for _, k := range h.Keyslots {
			if k.Active {
				if err := KillSlot(context.Background(), d, k.Slot, nil, true, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true}); err == nil {
			t.Fatalf("%s: opens with every keyslot killed", src)
		}
		if err := HeaderRestore(d, bytes.NewReader(tb), int64(len(tb)), RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true}); err != nil {
			t.Fatalf("%s: after restore: %v", src, err)
		}
	}
	// A LUKS1 backup does not go onto a LUKS2 volume.
	p2 := testdata.CopyFile(t, testdata.Unpack(t, "compatimage2.img.xz"))
	var b1 bytes.Buffer
	if _, err := HeaderBackup(openDev(t, testdata.Unpack(t, "compatimage.img.xz")), &b1); err != nil {
		t.Fatal(err)
	}
	if err := HeaderRestore(openDev(t, p2), bytes.NewReader(b1.Bytes()), int64(b1.Len()), RestoreOptions{Force: true}); err == nil {
		t.Fatal("a LUKS1 backup was restored over a LUKS2 header")
	}
	// A backup with requirement flags is refused.
	var br bytes.Buffer
	reqs := unpackMember(t, "luks2_header_requirements.tar.xz/luks2_header_requirements")
	if _, err := HeaderBackup(openDev(t, testdata.CopyFile(t, reqs)), &br); err != nil {
		t.Fatalf("backup of a header with requirements: %v", err)
	}
	free := testdata.CopyFile(t, unpackMember(t, "luks2_header_requirements.tar.xz/luks2_header_requirements_free"))
	if err := HeaderRestore(openDev(t, free), bytes.NewReader(br.Bytes()), int64(br.Len()), RestoreOptions{Force: true}); !errors.Is(err, volume.ErrUnsupported) {
		t.Fatalf("restoring a backup with requirements: %v", err)
	}
}

// TestRequirementsRefuseChanges: no keyslot change on a header with
// requirement flags, as cryptsetup ("Unmet requirements detected").
func TestRequirementsRefuseChanges(t *testing.T) {
	p := testdata.CopyFile(t, unpackMember(t, "luks2_header_requirements.tar.xz/luks2_header_requirements"))
	d := &guardedDevice{Device: openDev(t, p), t: t}
	if _, err := AddKey(context.Background(), d, pw(reqsPassphrase), []byte("x"), fastSlot()); !errors.Is(err, volume.ErrUnsupported) {
		t.Errorf("AddKey: %v", err)
	}
	if err := KillSlot(context.Background(), d, 0, nil, true, nil); !errors.Is(err, volume.ErrUnsupported) {
		t.Errorf("KillSlot: %v", err)
	}
	if d.writes != 0 {
		t.Errorf("%d writes to a header with requirements", d.writes)
	}
}
