package archive

import (
	"fmt"
	"io"
	"io/fs"
	"time"
)

// Entry describes a member.
type Entry struct {
	Name    string
	Size    int64
	ModTime time.Time
	Mode    fs.FileMode // fs.ModeDir for a directory
}

// IsDir reports whether the member is a directory.
func (e Entry) IsDir() bool { return e.Mode.IsDir() }

func (x *index) entryOf(e *entry) Entry {
	return Entry{
		Name:    string(x.nameOf(e)),
		Size:    e.size,
		ModTime: time.Unix(0, e.mtime),
		Mode:    fileMode(e.mode, e.kind),
	}
}

// Len returns the number of members.
func (a *Archive) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.idx.live
}

// Stat describes the member name.
func (a *Archive) Stat(name string) (Entry, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if err := a.usable(); err != nil {
		return Entry{}, err
	}
	pos := a.idx.findString(name)
	if pos < 0 {
		return Entry{}, fmt.Errorf("%s: %w", name, ErrNotExist)
	}
	return a.idx.entryOf(&a.idx.ents[pos]), nil
}

// List returns every member, in the order they were added (a replaced
// member takes the place of its replacement).
func (a *Archive) List() []Entry {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]Entry, 0, a.idx.live)
	for i := range a.idx.ents {
		if e := &a.idx.ents[i]; !e.dead {
			out = append(out, a.idx.entryOf(e))
		}
	}
	return out
}

// found is a member looked up under the lock, with what reading it needs
// (Compact may switch the archive to a new file at any time after).
type found struct {
	e      entry
	ent    Entry
	f      file
	cipher Cipher
	fileID [16]byte
}

// lookup finds the regular file name.
func (a *Archive) lookup(name string) (found, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if err := a.usable(); err != nil {
		return found{}, err
	}
	pos := a.idx.findString(name)
	if pos < 0 {
		return found{}, fmt.Errorf("%s: %w", name, ErrNotExist)
	}
	m := found{e: a.idx.ents[pos], f: a.f, cipher: a.hdr.cipher, fileID: a.hdr.fileID}
	m.ent = a.idx.entryOf(&m.e)
	if m.e.kind != opFile {
		return m, fmt.Errorf("%s: is a directory", name)
	}
	return m, nil
}

// reader keys a stream reader for a member found.
func (a *Archive) reader(m *found) (*streamReader, error) {
	s, err := newStream(m.cipher, &a.k.record, &m.e.nonce, &m.fileID, m.e.offset)
	if err != nil {
		return nil, err
	}
	return newStreamReader(m.f, s, m.e.offset, m.e.size), nil
}

// ReadFile returns the contents of the member name, authenticated. A
// member of up to ChunkSize bytes costs one index lookup and one read.
func (a *Archive) ReadFile(name string) ([]byte, error) {
	m, err := a.lookup(name)
	if err != nil {
		return nil, err
	}
	e := &m.e
	if e.size > int64(maxInt) {
		return nil, fmt.Errorf("%s: %d bytes do not fit in memory on this platform: use Open", name, e.size)
	}
	if e.size > ChunkSize {
		sr, err := a.reader(&m)
		if err != nil {
			return nil, err
		}
		defer sr.close()
		out := make([]byte, e.size)
		if _, err := io.ReadFull(sr, out); err != nil {
			return nil, memberError(name, err)
		}
		return out, nil
	}
	// One chunk: read it whole and open it in place.
	buf := make([]byte, e.size+TagSize)
	if n, err := m.f.ReadAt(buf, e.offset); n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: %s: record cut short", ErrDamaged, name)
		}
		return nil, err
	}
	var s streamCrypt
	if err := s.init(m.cipher, &a.k.record, &e.nonce, &m.fileID, e.offset); err != nil {
		return nil, err
	}
	p, err := s.open(buf[:0], buf, 0, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDamaged, name, err)
	}
	return p, nil
}

func memberError(name string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: %s: record cut short", ErrDamaged, name)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Member is an open member: an io.ReadSeeker over its plaintext that reads
// and authenticates one chunk (64 KiB) at a time, so memory use does not
// depend on the member's size. A Member is not safe for concurrent use; it
// keeps working after Compact (it reads the file it was opened from) until
// the archive is closed.
type Member struct {
	r   *streamReader
	ent Entry
}

// Open opens the member name for reading.
func (a *Archive) Open(name string) (*Member, error) {
	m, err := a.lookup(name)
	if err != nil {
		return nil, err
	}
	sr, err := a.reader(&m)
	if err != nil {
		return nil, err
	}
	return &Member{r: sr, ent: m.ent}, nil
}

// Stat describes the member.
func (m *Member) Stat() Entry { return m.ent }

// Read reads plaintext; every byte it returns has been authenticated.
func (m *Member) Read(p []byte) (int, error) {
	if m.r == nil {
		return 0, fs.ErrClosed
	}
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = memberError(m.ent.Name, err)
	}
	return n, err
}

// Seek sets the position for the next Read (io.Seeker).
func (m *Member) Seek(offset int64, whence int) (int64, error) {
	if m.r == nil {
		return 0, fs.ErrClosed
	}
	return m.r.Seek(offset, whence)
}

// Close releases the member's buffer.
func (m *Member) Close() error {
	if m.r == nil {
		return fs.ErrClosed
	}
	m.r.close()
	m.r = nil
	return nil
}
