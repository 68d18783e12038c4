// Package lock gives a volume one writer at a time across processes: an
// advisory lock on the container file, shared for readers and exclusive for
// writers, taken without waiting when the file is opened and held until it
// is closed (or the process dies: the kernel drops it then).
//
//   - Unix: flock(2) on the open file. Two opens of one file conflict even
//     inside one process, as they do between processes.
//   - Windows: LockFileEx on one byte far beyond any real data (Windows
//     locks are mandatory, so locking a byte that is read or written would
//     stop the lock holder's own I/O through other handles).
//   - Elsewhere (plan9, js, wasip1, ...): no lock at all; Acquire says so in
//     Lock.Warning and one writer at a time is the user's duty.
//
// A lock cannot tell who holds it, so a holder writes a small record of
// itself (PID, command, mount point, shared or exclusive) in a per-user
// runtime directory, under the file's device and inode number, right after
// taking the lock, and removes it on release. A process refused the lock
// reads those records to say who is in the way (LockedError). Records of
// processes that died without releasing are recognised (the lock is free,
// or the PID is gone) and removed.
//
// What an advisory lock cannot cover:
//   - Programs that do not take it: VeraCrypt, dd, a hex editor. They can
//     write the container while cryptvol holds it. (cryptsetup takes the
//     same flock on an image file, and waits for it; on a block device it
//     locks files of its own in /run/cryptsetup instead.)
//   - Two machines sharing the container over a network filesystem: NFS
//     and SMB may pass flock to the server, or keep it on each client, or
//     refuse it; cryptvol cannot tell which.
//   - Holders of another user account: their records live in their own
//     runtime directory, so the lock still refuses but cannot name them.
//
// The volume package covers part of the first two by remembering the header
// bytes it unlocked the volume with and refusing to write once they have
// changed on disk (volume.ErrHeaderChanged).
package lock
