// Package nfs serves a filesystem.FS over NFSv3 (with its MOUNT protocol
// on the same port) through github.com/willscott/go-nfs.
//
// NFSv3 has no authentication worth the name: a client says which uid it
// is and the server believes it. The only secret this server keeps is the
// export path, 128 random bits made per serve; MOUNT of any other path is
// refused, and file handles are random too (a client that skips MOUNT
// cannot guess one). Anyone who learns the export path can read and, unless
// the server is read-only, change every file. The server listens on
// loopback unless told otherwise.
//
// What go-nfs leaves to its user, and how this package answers it:
//   - Handles. go-nfs asks the handler to map handles to paths. Its own
//     CachingHandler forgets handles from an LRU, and on RENAME it
//     invalidates the renamed entry's handle, which the client still holds:
//     the next call on it fails with NFS3ERR_STALE (rclone issue 7973,
//     Microsoft Office saving over nfsmount; go-nfs issue 54). The handle
//     table here never forgets a handle while the server runs, and a rename
//     re-points the handles of the renamed entry and everything below it to
//     their new paths instead of invalidating them.
//   - Durability. go-nfs answers every WRITE with FILE_SYNC and treats
//     COMMIT as a no-op, so a WRITE is answered only after the filesystem
//     is synced; every other change (CREATE, MKDIR, REMOVE, RENAME, SETATTR)
//     is synced before its answer too. Killing the server loses nothing a
//     client was told succeeded.
//   - Writes into an existing file. The filesystem interface writes a file
//     only through Writer.Create (make or truncate). On FAT and exFAT,
//     whose packages open an existing file for writing, every WRITE opens,
//     writes and closes the file, so nothing is open between WRITEs (a FAT
//     volume killed with a file open reads as not cleanly closed). On
//     ext2/3/4 a file made, or truncated, through this server stays open
//     for writing while the server runs (its journal keeps a kill safe), so
//     WRITEs at any offset go to it; a WRITE into a non-empty file that
//     existed before the server started is refused (NFS3ERR_ACCES):
//     replace such a file (truncate it, or write a new one and rename it
//     over).
package nfs
