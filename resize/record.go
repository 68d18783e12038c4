package resize

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/volume"
)

// A resize in progress is recorded beside the container, in
// CONTAINER.cryptvol-resize, written before the first change and removed
// after the last: the size it started from and the size it goes to. The
// next Run of the same file finds it and finishes that resize, so that
// "the same command again" finishes the job even with a relative size
// (which is then taken relative to the size the interrupted run started
// from, not to the half-way size a kill left).
//
// The external tools' changes go through a journal,
// CONTAINER.cryptvol-resize-journal: what the tool's result would write
// into the container, as the encrypted bytes and their offsets (so the
// journal holds nothing the container does not already show: no
// plaintext, no keys). Only once the journal is complete and synced does
// the record say so; then it is copied into the container, which a kill
// during the copy leaves to the next Run to copy again (the same bytes to
// the same places). A journal the record does not vouch for is thrown
// away: the container was not touched yet.
type record struct {
	Dev, Ino uint64 // the container file's identity
	OldSize  int64  `json:"old_size"`
	Target   int64  `json:"target"`
	// Journal says the journal is complete and is to be copied in.
	Journal bool `json:"journal,omitempty"`
}

func recordPath(container string) string  { return container + ".cryptvol-resize" }
func journalPath(container string) string { return container + ".cryptvol-resize-journal" }

// loadRecord returns the record of an interrupted resize of the file at
// path, or nil. A record of another file (the container was replaced)
// is removed.
func loadRecord(path string) (*record, error) {
	b, err := os.ReadFile(recordPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", recordPath(path), err)
	}
	id, err := volume.FileIDOf(path)
	if err != nil {
		return nil, err
	}
	if id.Dev != rec.Dev || id.Ino != rec.Ino {
		os.Remove(recordPath(path))
		os.Remove(journalPath(path))
		return nil, nil
	}
	return &rec, nil
}

// save writes the record, atomically and durably.
func (rec *record) save(path string) error {
	id, err := volume.FileIDOf(path)
	if err != nil {
		return err
	}
	rec.Dev, rec.Ino = id.Dev, id.Ino
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(recordPath(path), atomicfile.Options{Perm: 0o600})
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.CloseAndRename()
}

// finish removes the record and any journal: the resize is done.
func finishRecord(path string) error {
	os.Remove(journalPath(path))
	if err := os.Remove(recordPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// journalDevice is the container as an external tool's result sees it:
// reads come from the container, writes go to the journal. The tool
// reads each block before it writes it and writes it once, so reading
// through to the container is enough.
type journalDevice struct {
	volume.Device
	f   *os.File
	end int64
}

func newJournal(container string, dev volume.Device) (*journalDevice, error) {
	f, err := os.OpenFile(journalPath(container), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &journalDevice{Device: dev, f: f}, nil
}

// WriteAt appends an entry: offset and length (8 bytes each), the bytes.
func (j *journalDevice) WriteAt(p []byte, off int64) (int, error) {
	var h [16]byte
	binary.LittleEndian.PutUint64(h[:], uint64(off))
	binary.LittleEndian.PutUint64(h[8:], uint64(len(p)))
	if _, err := j.f.WriteAt(h[:], j.end); err != nil {
		return 0, err
	}
	if _, err := j.f.WriteAt(p, j.end+16); err != nil {
		return 0, err
	}
	j.end += 16 + int64(len(p))
	return len(p), nil
}

func (j *journalDevice) Sync() error { return j.f.Sync() }

func (j *journalDevice) Close() error { return j.f.Close() }

// copyIn copies the complete journal of container into dev (synced), then
// records the copy as done and removes the journal: what runTool does once
// the tool's result is complete, and what an interrupted copy needs again
// (begin, rollforward.go).
func (rec *record) copyIn(container string, dev volume.Device) error {
	if err := replayJournal(container, dev); err != nil {
		return err
	}
	rec.Journal = false
	if err := rec.save(container); err != nil {
		return err
	}
	if err := os.Remove(journalPath(container)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// replayJournal copies the journal of container into dev and syncs it.
func replayJournal(container string, dev volume.Device) error {
	f, err := os.Open(journalPath(container))
	if err != nil {
		return fmt.Errorf("the journal of an interrupted resize: %w", err)
	}
	defer f.Close()
	var h [16]byte
	buf := []byte{}
	for off := int64(0); ; {
		if _, err := f.ReadAt(h[:], off); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		at, n := int64(binary.LittleEndian.Uint64(h[:])), int64(binary.LittleEndian.Uint64(h[8:]))
		if n < 0 || n > 64<<20 || at < 0 || at+n > dev.Size() {
			return fmt.Errorf("%w: the resize journal %s has an entry of %d bytes at %d", volume.ErrDamaged, journalPath(container), n, at)
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		if _, err := f.ReadAt(buf[:n], off+16); err != nil {
			return fmt.Errorf("%w: the resize journal %s ends inside an entry", volume.ErrDamaged, journalPath(container))
		}
		if _, err := dev.WriteAt(buf[:n], at); err != nil {
			return err
		}
		off += 16 + n
	}
	return dev.Sync()
}
