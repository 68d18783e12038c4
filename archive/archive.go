package archive

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// file is what an archive needs of its backing file; *os.File has it.
// Tests substitute a file that simulates crashes.
type file interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
	Stat() (fs.FileInfo, error)
}

// Archive is an open archive. Its methods may be called from several
// goroutines: reads (ReadFile, Open, Walk, List, Stat, Verify) run
// concurrently with each other and with changes (Add, Remove, Commit,
// Compact), which run one at a time. Readers wait only while a commit
// updates the in-memory index or Compact switches files, never while Add
// reads its input or a commit syncs. Only one process may hold an archive
// open for writing at a time.
type Archive struct {
	// wmu serialises the writers; it guards the batch. mu guards what
	// readers look at (the index, header, file, newest commit, tail and
	// broken): writers change those holding both, so a writer may read
	// them holding wmu alone.
	wmu      sync.Mutex
	mu       sync.RWMutex
	path     string
	f        file
	retired  []file // files replaced by Compact, kept open for open Members
	readOnly bool
	noSync   bool
	threads  int
	unlock   func()
	warn     func(string)

	hdr    header
	k      *keys
	idx    *index
	runs   []run  // the live index: base first
	last   footer // the newest commit
	lastAt int64  // its offset
	tail   int64  // bytes after the newest commit, found at Open

	batch    *batch
	broken   error     // set when a commit failed half-way
	salvaged *Salvaged // set when opened from the readable parts of a damaged index
}

// run is one index segment on the chain Open walks.
type run struct {
	at       int64 // footer offset
	segLen   int64
	firstGen uint64
	gen      uint64
}

// end is the offset just past the newest commit.
func (a *Archive) end() int64 { return a.lastAt + footerSize }

// CreateOptions choose how a new archive is protected.
type CreateOptions struct {
	// Cipher defaults to AES256GCM.
	Cipher Cipher
	// Argon2 costs for a password; zero means DefaultArgon2.
	Argon2 Argon2Params
	// NoSync skips fsync: for tests and throw-away archives only, as a
	// crash may then lose or tear committed data.
	NoSync bool
}

// OpenOptions choose how an archive is opened.
type OpenOptions struct {
	// ReadOnly opens without write access and without taking the writer
	// lock.
	ReadOnly bool
	// NoSync: see CreateOptions.
	NoSync bool
	// Threads is how many cores Walk decrypts on; 0 means GOMAXPROCS.
	Threads int
	// Salvage (with ReadOnly): if the index does not load because it is
	// damaged, open the archive anyway with the members the readable
	// parts of the index name (see Check), reporting how through
	// Salvaged. Members whose records are damaged fail when read.
	Salvage bool
	// Warn, if set, hears about the temporary files of interrupted runs
	// (a killed Compact) that Open and Compact find beside the archive:
	// removed when their process is gone, else left alone and reported.
	Warn func(msg string)
}

// Create makes a new, empty archive at path, which must not exist.
func Create(ctx context.Context, path string, cred Credentials, o *CreateOptions) (*Archive, error) {
	if o == nil {
		o = &CreateOptions{}
	}
	h := header{cipher: o.Cipher, argon: o.Argon2}
	if h.cipher == 0 {
		h.cipher = AES256GCM
	}
	if !h.cipher.valid() {
		return nil, fmt.Errorf("archive: unknown cipher %d", uint8(h.cipher))
	}
	src, err := cred.source()
	if err != nil {
		return nil, err
	}
	h.source = src
	if src == sourcePassword {
		if len(cred.Password) == 0 {
			return nil, errors.New("archive: empty password")
		}
		if h.argon == (Argon2Params{}) {
			h.argon = DefaultArgon2
		}
		if err := h.argon.check(); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
	} else {
		h.argon = Argon2Params{}
	}
	rand.Read(h.salt[:])
	rand.Read(h.fileID[:])
	fileKey := make([]byte, 32)
	rand.Read(fileKey)
	defer clear(fileKey)
	if err := h.wrap(ctx, cred, fileKey); err != nil {
		return nil, err
	}
	k := deriveKeys(h.cipher, fileKey)

	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		k.wipe()
		return nil, err
	}
	a := &Archive{path: path, f: f, noSync: o.NoSync, hdr: h, k: k, idx: newIndex()}
	fail := func(err error) (*Archive, error) {
		a.closeFiles()
		k.wipe()
		os.Remove(path)
		return nil, err
	}
	if a.unlock, err = lockFile(f); err != nil {
		return fail(err)
	}
	if err := a.writeInitial(a.f); err != nil {
		return fail(err)
	}
	if err := syncDir(path, a.noSync); err != nil {
		return fail(err)
	}
	return a, nil
}

// writeInitial writes the header and the first commit (an empty base index)
// of a fresh file, and syncs it.
func (a *Archive) writeInitial(f file) error {
	if _, err := f.WriteAt(a.hdr.marshal(a.k), 0); err != nil {
		return err
	}
	segOff := int64(headerSize)
	ft := footer{gen: 1, firstGen: 1, segOff: segOff}
	rand.Read(ft.segNonce[:])
	s, err := newStream(a.hdr.cipher, &a.k.index, &ft.segNonce, &a.hdr.fileID, segOff)
	if err != nil {
		return err
	}
	var seg []byte
	seg = s.seal(seg, nil, 0, true)
	at := segOff + int64(len(seg))
	seg = append(seg, ft.marshal(a.k, &a.hdr.fileID, at)...)
	if _, err := f.WriteAt(seg, segOff); err != nil {
		return err
	}
	if !a.noSync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	a.last, a.lastAt = ft, at
	a.runs = []run{{at: at, firstGen: 1, gen: 1}}
	return nil
}

// Open opens an existing archive. A torn tail (an append that did not
// complete) is skipped: the archive opens with its last complete commit,
// and Tail reports the bytes after it; the first change truncates them.
func Open(ctx context.Context, path string, cred Credentials, o *OpenOptions) (*Archive, error) {
	if o == nil {
		o = &OpenOptions{}
	}
	flag := os.O_RDWR
	if o.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	a := &Archive{path: path, f: f, readOnly: o.ReadOnly, noSync: o.NoSync, threads: o.Threads, warn: o.Warn}
	for _, l := range atomicfile.SweepOnce(filepath.Dir(path)) {
		a.leftover(l)
	}
	if !o.ReadOnly {
		if a.unlock, err = lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := a.load(ctx, cred, false); err != nil {
		if !(o.Salvage && o.ReadOnly && errors.Is(err, ErrDamaged)) {
			a.closeFiles()
			return nil, err
		}
		if serr := a.openSalvaged(ctx, cred); serr != nil {
			a.closeFiles()
			return nil, err
		}
	}
	return a, nil
}

// load reads the header and the live index. With rollback, a newest commit
// whose index does not load is passed over for the one before it.
func (a *Archive) load(ctx context.Context, cred Credentials, rollback bool) error {
	if err := a.unlockHeader(ctx, cred); err != nil {
		return err
	}
	return a.loadIndex(ctx, rollback)
}

// unlockHeader reads the header and derives the keys from cred.
func (a *Archive) unlockHeader(ctx context.Context, cred Credentials) error {
	raw := make([]byte, headerSize)
	if n, err := a.f.ReadAt(raw, 0); n < headerSize {
		if err == nil || err == io.EOF {
			return ErrNotArchive
		}
		return err
	}
	h, err := parseHeader(raw)
	if err != nil {
		return err
	}
	k, err := h.unlock(ctx, cred, raw)
	if err != nil {
		return err
	}
	a.hdr, a.k = h, k
	return nil
}

// loadIndex reads the live index, the header being unlocked.
func (a *Archive) loadIndex(ctx context.Context, rollback bool) error {
	h, k := a.hdr, a.k
	st, err := a.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	from := size
	for {
		at, ft, err := findFooter(a.f, k, &h.fileID, from)
		if err != nil {
			return err
		}
		idx, runs, err := loadChain(ctx, a.f, k, &h, at, ft)
		if err == nil {
			a.idx, a.runs, a.last, a.lastAt = idx, runs, ft, at
			a.tail = size - a.end()
			return nil
		}
		if !rollback || errors.Is(err, context.Canceled) {
			return err
		}
		from = at + footerSize - 1
	}
}

// Close releases the archive, discarding an uncommitted batch.
func (a *Archive) Close() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return ErrClosed
	}
	if a.batch != nil {
		a.discardBatch()
	}
	err := a.closeFiles()
	if a.k != nil {
		a.k.wipe()
	}
	a.f = nil
	return err
}

func (a *Archive) closeFiles() error {
	if a.unlock != nil {
		a.unlock()
		a.unlock = nil
	}
	var err error
	if a.f != nil {
		err = a.f.Close()
	}
	for _, f := range a.retired {
		f.Close()
	}
	a.retired = nil
	return err
}

// leftover reports what a sweep for killed runs' files found.
func (a *Archive) leftover(l atomicfile.Leftover) {
	if a.warn != nil {
		a.warn(l.String())
	}
}

// usable reports why the archive cannot be used, if it cannot.
func (a *Archive) usable() error {
	if a.f == nil {
		return ErrClosed
	}
	return a.broken
}

// Tail returns the number of bytes after the last complete commit that
// Open found: the remains of an interrupted append (0 normally).
func (a *Archive) Tail() int64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.tail
}

// Cipher returns the archive's AEAD.
func (a *Archive) Cipher() Cipher {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.hdr.cipher
}

// KDF describes the key derivation: "argon2id" with its parameters, or
// "key-file".
func (a *Archive) KDF() (string, Argon2Params) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.hdr.source == sourceKeyFile {
		return "key-file", Argon2Params{}
	}
	return "argon2id", a.hdr.argon
}

// Commits returns the number of the newest commit (1 after Create or
// Compact).
func (a *Archive) Commits() uint64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.last.gen
}

// Segments returns how many index segments Open read.
func (a *Archive) Segments() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.runs)
}

// IndexMemory returns the bytes the in-memory index holds.
func (a *Archive) IndexMemory() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.idx.memoryBytes()
}

// syncDir makes a new or renamed directory entry durable. Windows has no
// such call (FlushFileBuffers on a directory opened for reading is
// refused with "Access denied"); NTFS journals the entry itself.
func syncDir(path string, noSync bool) error {
	if noSync || runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil // not every platform opens directories
	}
	defer d.Close()
	// Some systems cannot sync a directory; the entry is then as durable
	// as they make it.
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
