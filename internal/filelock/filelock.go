// Package filelock is cryptvol's one advisory file lock: flock(2) on Unix,
// LockFileEx on Windows, taken without waiting, shared or exclusive, held
// by the open file until it is unlocked or closed (the kernel drops it
// when the process dies, so a killed holder never leaves a stale lock).
//
// Its users are volume/internal/lock (one writer per container, with
// holder records), internal/atomicfile (a temporary file being written is
// in use) and archive (one writer per archive). They used to carry a copy
// each; this one keeps the most careful of them: EINTR retried, a busy
// lock told apart from a filesystem or platform without locks, and shared
// locks for readers.
package filelock

import (
	"errors"
	"os"
)

// ErrBusy is the answer of TryLock when another open file holds a
// conflicting lock.
var ErrBusy = errors.New("locked by another open file")

// ErrNoLocks is the answer of TryLock on a filesystem or platform that has
// no advisory locks (some network filesystems, ENOLCK without a lock
// daemon). Callers decide whether going on unlocked is acceptable.
var ErrNoLocks = errors.New("no file locks on this filesystem")

// Byte chooses which lock of a file is meant on Windows, where a lock
// covers a byte range and is mandatory: one byte far beyond any real data,
// so that the holder's own reads and writes through other handles are not
// refused. Two locks one process holds on one file (an archive being
// compacted: its writer lock and its temporary file's) use different
// bytes. flock locks the whole file and ignores it.
type Byte uint32

const (
	// Primary is the lock of a volume container or an archive.
	Primary Byte = 0xFFFFFFFE
	// Temporary is the lock of a temporary file being written
	// (internal/atomicfile).
	Temporary Byte = 0xFFFFFFFD
)

// TryLock locks f without waiting, exclusively or shared, and returns the
// function that unlocks it. The lock belongs to f's open file (not to the
// process): another os.Open of the same file, even in this process,
// conflicts with it. The errors are ErrBusy, ErrNoLocks or the system's.
func TryLock(f *os.File, exclusive bool, b Byte) (unlock func(), err error) {
	return tryLock(f, exclusive, b)
}

// Held reports whether another open file holds a lock on f that an
// exclusive lock would conflict with. It takes and at once releases the
// lock when it is free; where there are no locks it reports false.
func Held(f *os.File, b Byte) bool {
	unlock, err := tryLock(f, true, b)
	if err == nil {
		unlock()
		return false
	}
	return errors.Is(err, ErrBusy)
}
