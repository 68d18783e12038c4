package volume

import "github.com/cryptvol/cryptvol/volume/internal/lock"

// LockedError is the error of an open refused because another process (or
// another open in this one) holds the container's lock: Holders say who,
// from their records, exclusive holders first; none when no record could be
// found. It wraps ErrLocked.
type LockedError = lock.LockedError

// Holder is one lock holder's record: its PID, what it runs ("cryptvol
// put"), where it has the volume mounted (a mount daemon), and whether it
// holds the lock exclusively (to write).
type Holder = lock.Holder

// SetLockHolder says what this process is doing, for the holder records
// that other processes refused the lock read: command such as "cryptvol
// put" (default: the program's file name) and, for a mount daemon, the
// mount point. It applies to locks taken afterwards.
func SetLockHolder(command, mountPoint string) { lock.SetIdentity(command, mountPoint) }
