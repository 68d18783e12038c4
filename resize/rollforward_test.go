package resize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// journaled makes a 64 KiB container of zeros with a complete journal of
// two writes beside it, recorded (Journal: true) as a kill during the
// copy-in leaves it, the first write already copied; it returns the path
// and the bytes the container must hold once the copy is done. With hold
// the container stays open and locked (as by the resize itself).
func journaled(t *testing.T, vouched, hold bool) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.vol")
	want := make([]byte, 64<<10)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		t.Fatal(err)
	}
	j, err := newJournal(path, dev)
	if err != nil {
		t.Fatal(err)
	}
	a, b := bytes.Repeat([]byte("A"), 4096), bytes.Repeat([]byte("B"), 1000)
	j.WriteAt(a, 8192)
	j.WriteAt(b, 60000)
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	j.Close()
	dev.WriteAt(a, 8192) // the copy-in got this far
	copy(want[8192:], a)
	copy(want[60000:], b)
	rec := &record{OldSize: 64 << 10, Target: 128 << 10, Journal: vouched}
	if err := rec.save(path); err != nil {
		t.Fatal(err)
	}
	if hold {
		t.Cleanup(func() { dev.Close() })
	} else {
		dev.Close()
	}
	return path, want
}

// openFast opens path as OpenWith does, the device first, with a type
// whose header check fails at once on zeros (no key derivation tried).
func openFast(t *testing.T, path string, readOnly bool) (warned []string, err error) {
	o := volume.Options{Type: "luks2", ReadOnly: readOnly, Warn: func(m string) { warned = append(warned, m) }}
	v, err := volume.OpenWith(t.Context(), path, volume.Credentials{Password: []byte("x")}, o)
	if err == nil {
		v.Close()
		t.Fatal("a container of zeros opened")
	}
	return warned, err
}

func TestOpenFinishesAJournalsCopyIn(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		path, want := journaled(t, true, false)
		warned, _ := openFast(t, path, readOnly)
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, want) {
			t.Fatalf("read-only %v: the open did not finish copying the journal in", readOnly)
		}
		if len(warned) != 1 || !strings.Contains(warned[0], "resize` again") {
			t.Errorf("read-only %v: warnings %q, want one saying to run the resize again", readOnly, warned)
		}
		if _, err := os.Stat(journalPath(path)); err == nil {
			t.Errorf("read-only %v: the journal is still there", readOnly)
		}
		rec, err := loadRecord(path)
		if err != nil || rec == nil || rec.Journal || rec.Target != 128<<10 {
			t.Errorf("read-only %v: record %+v (%v), want it kept with the copy marked done", readOnly, rec, err)
		}
	}
}

// A journal the record does not vouch for (the tool's run was killed) is
// not copied in: the container was not touched.
func TestOpenLeavesAnUnvouchedJournal(t *testing.T) {
	path, _ := journaled(t, false, false)
	before, _ := os.ReadFile(path)
	dev, err := volume.OpenDevice(path, true)
	if err != nil {
		t.Fatal(err)
	}
	dev.Close()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
		t.Error("a journal the record does not vouch for was copied in")
	}
}

// While the resize runs it holds the container's exclusive lock: an open
// then copies nothing (the resize does), and says so.
func TestOpenDuringTheResizeLeavesTheCopy(t *testing.T) {
	path, want := journaled(t, true, true)
	before, _ := os.ReadFile(path)
	warned, err := openFast(t, path, true)
	if !errors.Is(err, volume.ErrLocked) {
		t.Errorf("open of a container locked by its resize: %v, want ErrLocked", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, before) || bytes.Equal(got, want) {
		t.Error("the journal was copied in while its resize held the lock")
	}
	if len(warned) == 0 || !strings.Contains(warned[0], "could not be finished") {
		t.Errorf("warnings %q, want one saying the copy-in could not be finished", warned)
	}
}
