//go:build unix

package main

// Power cuts during header changes (issue 31, item 2): passwd of a
// VeraCrypt volume, keyslot add and header restore of LUKS1 and LUKS2.
// In every crash state the volume opens with the old credentials or the
// new, never neither.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// recordOn runs change on a Recorder over the container at vol.
func recordOn(t *testing.T, vol string, change func(dev volume.Device) error) []crashsim.Op {
	t.Helper()
	dev, err := volume.OpenDevice(vol, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	rec := crashsim.NewRecorder(dev)
	if err := change(rec); err != nil {
		t.Fatal(err)
	}
	return rec.Ops()
}

// exploreCredentials judges every crash state of ops on base (one of pws
// opens the volume), reports the figures and fails on any state that
// opens with none.
func exploreCredentials(t *testing.T, name string, base []byte, ops []crashsim.Op, o volume.Options, pim int, pws ...string) {
	t.Helper()
	if len(ops) == 0 || !ops[len(ops)-1].Flush {
		t.Errorf("%s: the last write is not followed by a flush", name)
	}
	tally := judgeCredentials(t, base, ops, headerCrashOptions(strings.Fields(name)[0]), o, pim, pws...)
	tally.report(t, name, ops)
	for _, f := range tally.first {
		t.Errorf("%s: %s", name, f)
	}
}

// judgeCredentials counts the crash states of ops on base that open with
// none of pws.
func judgeCredentials(t *testing.T, base []byte, ops []crashsim.Op, co crashsim.Options, o volume.Options, pim int, pws ...string) crashTally {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "state.img")
	sf, err := newStateFile(scratch, base)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.f.Close()
	var tally crashTally
	for _, s := range crashsim.States(ops, co) {
		tally.states++
		if err := sf.set(s); err != nil {
			t.Fatal(err)
		}
		opened := false
		for _, pw := range pws {
			v, err := volume.OpenWith(context.Background(), scratch, volume.Credentials{Password: []byte(pw), PIM: pim}, o)
			if err == nil {
				v.Close()
				opened = true
				break
			}
		}
		if !opened {
			tally.fail(s, fmt.Errorf("%w with any of %q", errNotOpen, pws))
		}
	}
	return tally
}

// stateFile holds one crash state at a time over a copy of base, put
// back only where the last state wrote: a LUKS state is 20 MB, and a
// header check opens it read-only.
type stateFile struct {
	f     *os.File
	base  []byte
	dirty []crashsim.Op
}

func newStateFile(path string, base []byte) (*stateFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(base); err != nil {
		f.Close()
		return nil, err
	}
	return &stateFile{f: f, base: base}, nil
}

func (sf *stateFile) set(s crashsim.State) error {
	// The ranges the last state and this one write, merged into runs,
	// each built in memory from base and this state's writes and
	// written once: a torn write is hundreds of sector writes, and a
	// pwrite each was most of the explorer's time.
	var spans [][2]int64
	for _, ws := range [][]crashsim.Op{sf.dirty, s.Writes} {
		for _, w := range ws {
			spans = append(spans, [2]int64{w.Off, w.Off + int64(len(w.Data))})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var runs [][2]int64
	for _, sp := range spans {
		if n := len(runs); n > 0 && sp[0] <= runs[n-1][1]+crashsim.SectorSize {
			runs[n-1][1] = max(runs[n-1][1], sp[1])
			continue
		}
		runs = append(runs, sp)
	}
	for _, r := range runs {
		buf := append([]byte(nil), sf.base[r[0]:r[1]]...)
		for _, w := range s.Writes {
			if w.Off >= r[0] && w.Off < r[1] {
				copy(buf[w.Off-r[0]:], w.Data)
			}
		}
		if _, err := sf.f.WriteAt(buf, r[0]); err != nil {
			return err
		}
	}
	sf.dirty = s.Writes
	return nil
}

// headerCrashOptions samples more than the filesystem explorer: a header
// state costs a key derivation, not a filesystem check. The long run's
// torn versions of each large write (a keyslot's material, a LUKS2
// header) are what make its total pass 100,000 states; VeraCrypt's
// derivation (PIM 1: 16,000 SHA-512 iterations) costs ten LUKS ones
// (1,000 PBKDF2 iterations here), so it gets fewer.
func headerCrashOptions(kind string) crashsim.Options {
	if os.Getenv("CRYPTVOL_CRASH_LONG") != "" {
		torn := 6500
		if kind == "veracrypt" {
			torn = 1000
		}
		return crashsim.Options{Subsets: 2000, Torn: torn, Seed: 31, Distinct: true}
	}
	return crashsim.Options{Subsets: 8, Torn: 2, Seed: 31, Distinct: true}
}

// rerunCrashOptions sample the second runs of a restore (one per flush of
// the first) less than a first run in the long run.
func rerunCrashOptions() crashsim.Options {
	if os.Getenv("CRYPTVOL_CRASH_LONG") != "" {
		return crashsim.Options{Subsets: 200, Torn: 1000, Seed: 31, Distinct: true}
	}
	return headerCrashOptions("luks")
}

func TestCrashStatesHeaders(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte("old-pass\n"), 0o600)
	ro := func(o volume.Options) volume.Options { o.ReadOnly = true; return o }

	t.Run("veracrypt-passwd", func(t *testing.T) {
		vol := filepath.Join(dir, "v.hc")
		cvIn(t, "create", vol, "--size", "1M", "--password-file", pwFile, "--quick", "--non-interactive", "--filesystem", "fat", "--pim", "1", "--hash", "sha512", "--encryption", "aes")
		base, _ := os.ReadFile(vol)
		o := volume.Options{Type: "veracrypt", Hash: "SHA-512", Encryption: "AES"}
		ops := recordOn(t, vol, func(dev volume.Device) error {
			return tcrypt.ChangeCredentials(context.Background(), dev, volume.Credentials{Password: []byte("old-pass"), PIM: 1}, volume.Credentials{Password: []byte("new-pass"), PIM: 1}, tcrypt.ChangeOptions{Open: o})
		})
		exploreCredentials(t, "veracrypt passwd", base, ops, ro(o), 1, "old-pass", "new-pass")

		// header restore: the backup taken under old-pass goes back over
		// the headers passwd rewrote for new-pass.
		os.WriteFile(vol, base, 0o600)
		var backup []byte
		recordOn(t, vol, func(dev volume.Device) error {
			var err error
			backup, err = tcrypt.HeaderBackup(context.Background(), dev, volume.Credentials{Password: []byte("old-pass"), PIM: 1}, o)
			return err
		})
		recordOn(t, vol, func(dev volume.Device) error {
			return tcrypt.ChangeCredentials(context.Background(), dev, volume.Credentials{Password: []byte("old-pass"), PIM: 1}, volume.Credentials{Password: []byte("new-pass"), PIM: 1}, tcrypt.ChangeOptions{Open: o})
		})
		changed, _ := os.ReadFile(vol)
		ops = recordOn(t, vol, func(dev volume.Device) error {
			return tcrypt.HeaderRestore(context.Background(), dev, volume.Credentials{Password: []byte("old-pass"), PIM: 1}, backup, tcrypt.RestoreOptions{Open: o, Recognise: holdsFilesystem})
		})
		if _, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("old-pass"), PIM: 1}, ro(o)); err != nil {
			t.Fatalf("the restored header does not open with the backup's password: %v", err)
		}
		exploreCredentials(t, "veracrypt header restore", changed, ops, ro(o), 1, "new-pass", "old-pass")
	})
	for _, typ := range []string{"luks1", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			vol := filepath.Join(dir, typ+".img")
			cvIn(t, "create", vol, "--type", typ, "--size", "20M", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--password-file", pwFile, "--quick", "--non-interactive", "--filesystem", "none")
			o := ro(volume.Options{Type: "luks"})
			kopts := luks.KeyslotOptions{KDF: luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}}
			old := volume.Credentials{Password: []byte("old-pass")}

			base, _ := os.ReadFile(vol)
			ops := recordOn(t, vol, func(dev volume.Device) error {
				_, err := luks.AddKey(context.Background(), dev, old, []byte("new-pass"), kopts)
				return err
			})
			exploreCredentials(t, typ+" keyslot add", base, ops, o, 0, "old-pass", "new-pass")
			added, _ := os.ReadFile(vol)

			// keyslot change: the old password's slot is rewritten for
			// the new one; old or new opens, never neither.
			ops = recordOn(t, vol, func(dev volume.Device) error {
				_, err := luks.ChangeKey(context.Background(), dev, old, []byte("third-pass"), kopts)
				return err
			})
			exploreCredentials(t, typ+" keyslot change", added, ops, o, 0, "old-pass", "third-pass")

			// keyslot remove: of two slots the one of old-pass goes;
			// the other, new-pass, must open in every state.
			os.WriteFile(vol, added, 0o600)
			ops = recordOn(t, vol, func(dev volume.Device) error {
				_, err := luks.RemoveKey(context.Background(), dev, old, false, nil)
				return err
			})
			if _, err := volume.OpenWith(context.Background(), vol, old, o); err == nil {
				t.Fatal("the old password still opens after keyslot remove")
			}
			exploreCredentials(t, typ+" keyslot remove", added, ops, o, 0, "new-pass")
		})
		t.Run(typ+"-restore", func(t *testing.T) {
			vol := filepath.Join(dir, typ+"-restore.img")
			cvIn(t, "create", vol, "--type", typ, "--size", "20M", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--password-file", pwFile, "--quick", "--non-interactive", "--filesystem", "none")
			o := ro(volume.Options{Type: "luks"})
			kopts := luks.KeyslotOptions{KDF: luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}}
			old := volume.Credentials{Password: []byte("old-pass")}
			base, _ := os.ReadFile(vol)

			// Header restore: a backup that opens with old-pass only,
			// restored over a header that opens with new-pass only (its
			// keyslot moved to a free area by the change).
			os.WriteFile(vol, base, 0o600)
			backup := luksBackup(t, vol)
			recordOn(t, vol, func(dev volume.Device) error {
				_, err := luks.ChangeKey(context.Background(), dev, old, []byte("new-pass"), kopts)
				return err
			})
			if _, err := volume.OpenWith(context.Background(), vol, old, o); err == nil {
				t.Fatal("the old password still opens after keyslot change")
			}
			changed, _ := os.ReadFile(vol)
			ops := recordRestore(t, vol, backup, nil)
			exploreCredentials(t, typ+" header restore", changed, ops, o, 0, "new-pass", "old-pass")

			// Header restore over a keyslot reused since the backup: the
			// backup's keyslot 0 area now holds third-pass's key
			// material, so the restore goes through an intermediate
			// header with the backup's keyslot staged elsewhere.
			os.WriteFile(vol, base, 0o600)
			recordOn(t, vol, func(dev volume.Device) error {
				if _, err := luks.AddKey(context.Background(), dev, old, []byte("new-pass"), kopts); err != nil {
					return err
				}
				if err := luks.KillSlot(context.Background(), dev, 0, nil, false, nil); err != nil {
					return err
				}
				zero := 0
				ko := kopts
				ko.Slot = &zero
				_, err := luks.AddKey(context.Background(), dev, volume.Credentials{Password: []byte("new-pass")}, []byte("third-pass"), ko)
				return err
			})
			reused, _ := os.ReadFile(vol)
			ops = recordRestore(t, vol, backup, nil)
			if n := headerWrites(ops); n < 2 {
				t.Errorf("%s header restore over a reused keyslot: the header at 0 written %d times: it did not go through an intermediate header", typ, n)
			}
			exploreCredentials(t, typ+" header restore (reused keyslot)", reused, ops, o, 0, "new-pass", "third-pass", "old-pass")

			// Restore again after a crash: from the state at each flush
			// of that restore, running it again finishes it (the
			// header region the backup's, byte for byte), and a crash
			// in the second run leaves old or new credentials too.
			again := 0
			for k, e := range crashsim.Epochs(ops) {
				if k == 0 || k == len(crashsim.Epochs(ops))-1 || len(e) == 0 {
					continue
				}
				img := applyEpochs(reused, ops, k)
				os.WriteFile(vol, img, 0o600)
				rerun := recordRestore(t, vol, backup, nil)
				tally := judgeCredentials(t, img, rerun, rerunCrashOptions(), o, 0, "new-pass", "third-pass", "old-pass")
				again += tally.states
				for _, f := range tally.first {
					t.Errorf("%s header restore run again after %d flushes: %s", typ, k, f)
				}
			}
			t.Logf("%s header restore run again from each flush of the first run: %d crash states of the second runs tried, 0 open with none", typ, again)
		})
	}
}

// luksBackup takes a header backup of the container at vol.
func luksBackup(t *testing.T, vol string) []byte {
	t.Helper()
	var backup bytes.Buffer
	recordOn(t, vol, func(dev volume.Device) error {
		_, err := luks.HeaderBackup(dev, &backup)
		return err
	})
	return backup.Bytes()
}

// recordRestore restores backup over the container at vol under a
// Recorder (dropping the flushes drop names) and checks that the header
// region is then the backup's, byte for byte.
func recordRestore(t *testing.T, vol string, backup []byte, drop func(int) bool) []crashsim.Op {
	t.Helper()
	dev, err := volume.OpenDevice(vol, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	rec := crashsim.NewRecorder(dev)
	rec.DropFlush = drop
	var warned []string
	if err := luks.HeaderRestore(rec, bytes.NewReader(backup), int64(len(backup)), luks.RestoreOptions{Warn: func(m string) { warned = append(warned, m) }}); err != nil {
		t.Fatal(err)
	}
	if len(warned) > 0 {
		t.Errorf("the restore was not written in a crash-safe order: %q", warned)
	}
	got := make([]byte, len(backup))
	n, _ := dev.ReadAt(got, 0)
	// A LUKS1 backup is padded to 4096 bytes, which a small device may
	// not hold; everything the device holds must be the backup's.
	if !bytes.Equal(got[:n], backup[:n]) {
		t.Errorf("after the restore the header region is not the backup's")
	}
	return rec.Ops()
}

// TestCrashRestoreCatchesDroppedFlush drops, in LUKS header restore, the
// flush between the header switch and the overwriting of the old key
// material, and shows that the explorer finds states that open with no
// password: a disk that persists the overwrite before the last header
// write leaves the old header pointing at key material that is gone.
func TestCrashRestoreCatchesDroppedFlush(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte("old-pass\n"), 0o600)
	for _, typ := range []string{"luks1", "luks2"} {
		t.Run(typ, func(t *testing.T) {
			vol := filepath.Join(dir, typ+".img")
			cvIn(t, "create", vol, "--type", typ, "--size", "20M", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--password-file", pwFile, "--quick", "--non-interactive", "--filesystem", "none")
			o := volume.Options{Type: "luks", ReadOnly: true}
			backup := luksBackup(t, vol)
			recordOn(t, vol, func(dev volume.Device) error {
				_, err := luks.ChangeKey(context.Background(), dev, volume.Credentials{Password: []byte("old-pass")}, []byte("new-pass"), luks.KeyslotOptions{KDF: luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}})
				return err
			})
			changed, _ := os.ReadFile(vol)
			ops := recordRestore(t, vol, backup, nil)
			// The unchanged restore ends with the header switch, flushed,
			// then the old key material overwritten, flushed.
			flushes := len(ops) - crashsim.Writes(ops)
			epochs := crashsim.Epochs(ops)
			if flushes < 3 || len(epochs[flushes-1]) == 0 || epochs[flushes-1][0].Off == 0 {
				t.Fatalf("the restore's log (%d flushes) does not end with an overwrite of old key material", flushes)
			}
			drop := flushes - 2
			os.WriteFile(vol, changed, 0o600)
			dropped := recordRestore(t, vol, backup, func(n int) bool { return n == drop })
			tally := judgeCredentials(t, changed, dropped, crashsim.Options{Subsets: 40, Torn: 4, Seed: 31, Distinct: true}, o, 0, "new-pass", "old-pass")
			t.Logf("%s: flush %d of %d dropped: %d crash states, %d open with neither password; first: %q", typ, drop, flushes, tally.states, tally.notOpen, tally.first)
			if tally.notOpen == 0 {
				t.Fatal("the explorer found nothing wrong with a restore that overwrites the old key material before the new header is known to be on the disk")
			}
		})
	}
}

// headerWrites counts the writes at offset 0 (a header switch writes there).
func headerWrites(ops []crashsim.Op) int {
	n := 0
	for _, o := range ops {
		if !o.Flush && o.Off == 0 {
			n++
		}
	}
	return n
}

// applyEpochs is base with the writes of the first k epochs of ops.
func applyEpochs(base []byte, ops []crashsim.Op, k int) []byte {
	img := append([]byte(nil), base...)
	for _, e := range crashsim.Epochs(ops)[:k] {
		for _, w := range e {
			copy(img[w.Off:], w.Data)
		}
	}
	return img
}
