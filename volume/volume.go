package volume

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cryptvol/cryptvol/sector"
)

// Volume is an unlocked volume: an io.ReaderAt and io.WriterAt over the
// decrypted data area, whatever the format. Offsets are relative to the
// start of the data area. It is safe for concurrent use.
type Volume struct {
	dev      Device
	hdr      Device // where u.Header was read
	driver   Driver // that unlocked it; nil for New
	mode     sector.Mode
	u        *Unlocked
	segs     []Segment // the data area, in order (one for most formats)
	ss       int64
	size     int64
	readOnly bool
	closers  []func() error
	// stripes serialise read-modify-write of partial sectors.
	stripes [64]sync.Mutex
	closed  bool
	mu      sync.Mutex
	// wrote is set by the first write; headerOK once the header was found
	// unchanged before it. headerErr, once set, refuses every write.
	wrote    atomic.Bool
	headerOK atomic.Bool
	// unsynced is set when a write to the device completes and cleared
	// as a Sync starts: Close flushes only when something was written
	// since the last Sync (the filesystem's Close has just flushed).
	unsynced  atomic.Bool
	headerMu  sync.Mutex
	headerErr error
	// protectTripped is set by the first write refused for landing in the
	// protected hidden volume: from then on every write is refused, as
	// TrueCrypt and VeraCrypt make the outer volume read-only until it is
	// dismounted, so that a writer that goes on after the refusal (its
	// metadata, a retry elsewhere) cannot leave the outer filesystem in a
	// state that tells where the hidden volume is.
	protectTripped atomic.Bool
}

// scratchSize bounds the buffer one write encrypts before writing it out.
const scratchSize = 1 << 20

var scratchPool = sync.Pool{New: func() any { b := make([]byte, scratchSize); return &b }}

// New makes a Volume from a driver's Unlocked description, for drivers that
// create volumes (and so know the keys without deriving them again).
// Closing the Volume does not close dev.
func New(dev Device, u *Unlocked, o Options) (*Volume, error) { return newVolume(dev, u, o) }

func newVolume(dev Device, u *Unlocked, o Options) (*Volume, error) {
	ss := u.Mode.SectorSize()
	if ss <= 0 || scratchSize%ss != 0 || u.DataSize%int64(ss) != 0 || u.DataOffset < 0 {
		return nil, fmt.Errorf("%w: inconsistent data area (sector %d, size %d)", ErrDamaged, ss, u.DataSize)
	}
	if short := u.DataOffset + u.DataSize - dev.Size(); len(u.Segments) == 0 && short > 0 {
		if !o.ReadOnly && !u.ReadOnly {
			// A write beyond the end would grow the file with sectors
			// that are not the volume's: refuse before touching it.
			return nil, fmt.Errorf("%w: the file is %d bytes, %d short of the end of its data area (it was cut short); refusing to write to it (reading still works)", ErrTruncated, dev.Size(), short)
		}
		o.warn(fmt.Sprintf("the data area ends %d bytes beyond the end of the file: the container is truncated", short))
	}
	segs, err := layoutSegments(u, int64(ss), dev, o)
	if err != nil {
		return nil, err
	}
	v := &Volume{
		dev:      dev,
		hdr:      dev,
		mode:     sector.Parallel(u.Mode, runtime.GOMAXPROCS(0)),
		u:        u,
		segs:     segs,
		ss:       int64(ss),
		size:     u.DataSize,
		readOnly: o.ReadOnly || u.ReadOnly,
	}
	v.u.Info.ReadOnly = v.readOnly
	return v, nil
}

// Size is the size of the decrypted data area in bytes.
func (v *Volume) Size() int64 { return v.size }

// SectorSize is the encryption sector size in bytes.
func (v *Volume) SectorSize() int { return int(v.ss) }

// Info describes the volume. The master key is not included.
func (v *Volume) Info() Info { return v.u.Info }

// MasterKey returns a copy of the master key (for `info --show-key`).
func (v *Volume) MasterKey() []byte { return append([]byte(nil), v.u.MasterKey...) }

// ProtectionTriggered reports whether a write was refused for landing in
// the protected hidden volume, which has made the volume read-only.
func (v *Volume) ProtectionTriggered() bool { return v.protectTripped.Load() }

// ReadOnly reports whether writes are refused.
func (v *Volume) ReadOnly() bool { return v.readOnly }

// ReadAt reads decrypted bytes of the data area.
func (v *Volume) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("volume: negative offset %d", off)
	}
	if off >= v.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := len(p)
	var tail error
	if int64(n) > v.size-off {
		n = int(v.size - off)
		tail = io.EOF
	}
	done := 0
	for done < n {
		pos := off + int64(done)
		if pos%v.ss == 0 && int64(n-done) >= v.ss {
			// Whole sectors decrypt straight into p.
			k := int(int64(n-done) / v.ss * v.ss)
			if err := v.readSectors(p[done:done+k], pos); err != nil {
				return done, err
			}
			done += k
			continue
		}
		bp := scratchPool.Get().(*[]byte)
		sec := pos - pos%v.ss
		buf := (*bp)[:v.ss]
		err := v.readSectors(buf, sec)
		if err == nil {
			done += copy(p[done:n], buf[pos-sec:])
		}
		scratchPool.Put(bp)
		if err != nil {
			return done, err
		}
	}
	return n, tail
}

// WriteAt encrypts and writes p at data-area offset off. Nothing is written
// if the range is out of bounds, the volume is read-only or the range
// touches a protected hidden volume; after such a refusal, every later
// write fails with ErrProtected too (ProtectionTriggered).
func (v *Volume) WriteAt(p []byte, off int64) (int, error) {
	if v.readOnly {
		return 0, ErrReadOnly
	}
	if off < 0 || off+int64(len(p)) > v.size {
		return 0, fmt.Errorf("%w: write of %d bytes at %d, volume size %d", ErrOutOfRange, len(p), off, v.size)
	}
	if ps := v.u.ProtectedSize; ps > 0 {
		if v.protectTripped.Load() {
			return 0, fmt.Errorf("%w (an earlier write was refused: the outer volume is read-only until closed)", ErrProtected)
		}
		if off < v.u.ProtectedOffset+ps && off+int64(len(p)) > v.u.ProtectedOffset {
			v.protectTripped.Store(true)
			return 0, fmt.Errorf("%w: %d bytes at %d, the hidden volume is bytes %d to %d of the outer one; the outer volume is read-only from now on", ErrProtected, len(p), off, v.u.ProtectedOffset, v.u.ProtectedOffset+ps)
		}
	}
	if err := v.checkReserved(p, off); err != nil {
		return 0, err
	}
	if !v.headerOK.Load() {
		if err := v.checkHeader(); err != nil {
			return 0, err
		}
	}
	if !v.wrote.Load() {
		v.wrote.Store(true) // once: a store per write would bounce the cache line between cores
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		if pos%v.ss == 0 && int64(len(p)-done) >= v.ss {
			k := int(int64(len(p)-done) / v.ss * v.ss)
			if k > scratchSize {
				k = scratchSize
			}
			if err := v.writeSectors(p[done:done+k], pos); err != nil {
				return done, err
			}
			done += k
			continue
		}
		k, err := v.writePartial(p[done:], pos)
		done += k
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeSectors encrypts whole sectors of src (≤ scratchSize) into a scratch
// buffer and writes them; the caller's buffer is never modified.
func (v *Volume) writeSectors(src []byte, pos int64) error {
	bp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(bp)
	return v.storeSectors((*bp)[:len(src)], src, pos)
}

// writePartial does a read-modify-write of the one sector holding pos and
// returns how many bytes of p it consumed.
func (v *Volume) writePartial(p []byte, pos int64) (int, error) {
	sec := pos - pos%v.ss
	lock := &v.stripes[(sec/v.ss)%int64(len(v.stripes))]
	lock.Lock()
	defer lock.Unlock()
	bp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(bp)
	buf := (*bp)[:v.ss]
	if err := v.readSectors(buf, sec); err != nil {
		return 0, err
	}
	k := copy(buf[pos-sec:], p)
	if err := v.storeSectors(buf, buf, sec); err != nil {
		return 0, err
	}
	return k, nil
}

// checkHeader compares the header with what the keys came from; a change
// is remembered, and every later write refused.
func (v *Volume) checkHeader() error {
	v.headerMu.Lock()
	defer v.headerMu.Unlock()
	if v.headerErr != nil {
		return v.headerErr
	}
	if err := v.u.Header.Check(v.hdr); err != nil {
		if errors.Is(err, ErrHeaderChanged) {
			v.headerOK.Store(false)
			v.headerErr = err
		}
		return err
	}
	v.headerOK.Store(true)
	return nil
}

// Sync flushes written data to stable storage. After writes it also checks
// that the header on disk is still the one the volume was opened with, and
// returns ErrHeaderChanged (refusing further writes) if not.
func (v *Volume) Sync() error {
	v.unsynced.Store(false)
	err := v.dev.Sync()
	if err != nil {
		v.unsynced.Store(true)
	}
	if v.wrote.Load() {
		if herr := v.checkHeader(); herr != nil {
			return herr
		}
	}
	return err
}

// Close wipes the keys and closes the files Open opened. It is safe to
// call more than once.
func (v *Volume) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	var first error
	switch {
	case v.readOnly:
	case v.unsynced.Load():
		first = v.Sync()
	case v.wrote.Load():
		// Nothing written since the last Sync, so no flush (with nothing
		// to write, an fdatasync still flushes the disk's cache: 2 ms on
		// the test machine, after every put's own; issue 31, item 4),
		// but the header is still checked, as Sync would.
		first = v.checkHeader()
	}
	clear(v.u.MasterKey)
	if v.u.State != nil {
		clear(v.u.State.Key)
	}
	if v.u.Close != nil {
		if err := v.u.Close(); err != nil && first == nil {
			first = err
		}
	}
	for _, c := range v.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
