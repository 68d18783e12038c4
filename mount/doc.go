// Package mount serves an unlocked volume through FUSE
// (github.com/hanwen/go-fuse/v2), in two ways:
//
//   - MountFiles: the FAT filesystem inside the volume as an ordinary
//     directory tree, read-write, without root. Every FUSE request becomes
//     a call on the fat package (whose one lock serialises the
//     filesystem).
//   - MountRaw: a directory holding one file, "volume", the decrypted data
//     area byte for byte. On Linux, as root, AttachLoop and MountDevice put
//     any filesystem the kernel knows (ext4, ...) on top of it, the way
//     TrueCrypt and VeraCrypt do on Linux.
//
// # Speed
//
// Requests are large: MaxWrite and max_read are 1 MiB (MaxIO) where the
// kernel allows it, and as root the mount's read-ahead is raised to 1 MiB
// too. File data goes between the kernel's request buffers and the sector
// layer without copies of its own beyond what encryption needs; a 1 MiB
// write is one encryption call spread over all cores and one write of the
// container.
//
//   - Write-behind (writeBehind): a write request returns once its data is
//     queued; a worker applies queued writes in order while the kernel
//     copies the next request. Every other request first waits for the
//     writes queued before it, so nothing ever sees them unapplied. A
//     queued write's error comes back from the next write, close(2) or
//     fsync(2) of the same handle.
//   - Write-only handles bypass the kernel page cache (direct I/O): one
//     copy less, and nothing reads through them anyway.
//   - With Options.Container set (Linux), write-out of the container starts
//     while writes stream in, so the disk writes while the CPU encrypts and
//     fsync finds little left to do.
//   - Read-ahead (readAhead): sequential reads of an open file are served
//     from 4 MiB windows read (and decrypted on all cores) in advance.
//
// # Durability
//
// fsync(2) on a file applies its queued writes, commits its directory
// entry and syncs the container: what it covered survives a crash.
// Unmounting (Wait, Unmount, Shutdown) applies every accepted write and
// closes the filesystem; Shutdown does so even when the mount is busy,
// then detaches it.
//
// The package also keeps the table of active mounts that `cryptvol list`
// shows (Table, WriteList), the daemon plumbing of `cryptvol mount`
// (StartDaemon, DaemonStart, DaemonSecret) and what the daemon runs:
// Serve mounts in the mode asked (files, a stacked driver under its raw
// file's helper process, StartRawHelper and ServeRaw; raw; loop) and serves
// until unmounted or cancelled. UnmountAll and UnmountRecorded end mounts
// and wait for their daemons; ServeVia mounts through WinFsp or a loopback
// WebDAV or NFS server, ServeProtocol is `cryptvol serve`. Their failures
// carry a Kind (Failure) that the command maps to its exit code. The
// raw-versus-encrypted I/O benchmark that mounts through it is package
// bench/iobench.
//
// FUSE is available on Linux (every architecture, 32-bit ARM included:
// go.mod keeps go-fuse at v2.11.0, because v2.12's splice package does not
// compile for 32-bit Linux, where syscall.Splice returns an int) and macOS
// (with macFUSE). Elsewhere every
// mounting function returns an error wrapping ErrNotSupported, which
// Supported reports.
package mount
