// Package volume opens TrueCrypt, VeraCrypt and LUKS volumes: Open (or
// OpenWith) finds the format, unlocks the header with the credentials and
// returns a Volume, an io.ReaderAt and io.WriterAt over the decrypted data
// area, whatever the format. The format drivers (volume/tcrypt,
// volume/luks) register themselves; import volume/all for every one.
//
// # One writer at a time
//
// OpenDevice, and so Open and OpenWith, lock the container file as they
// open it, without waiting: a shared lock for a read-only open, an
// exclusive one for a read-write open, held until the device (or the
// Volume) is closed. An open that conflicts fails at once with a
// *LockedError, which wraps ErrLocked and names the holder ("vol.hc is
// mounted at /mnt/x by PID 1234", "vol.hc is being written by cryptvol put
// (PID 1234)") from the small record every holder leaves in a per-user
// runtime directory. SetLockHolder says what this process is, for the
// records others read. The lock is flock(2) on Unix and LockFileEx on
// Windows; where neither exists there is none, and OpenWith warns.
// Devices a caller opens itself (OpenDeviceWith, New) are not locked.
//
// A lock is advisory: it cannot stop programs that do not take it
// (VeraCrypt, dd; cryptsetup takes it on image files), and on a network filesystem shared by two
// machines it may not reach the other machine. What can be seen of such a
// writer is seen: a Volume remembers the header bytes its keys came from
// and, before its first write, on every Sync and on Close, reads them again;
// if they changed on disk, it refuses every further write with
// ErrHeaderChanged. The header-rewriting operations of the drivers check
// their header the same way just before they write it.
package volume
