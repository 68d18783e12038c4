// Package webdav serves an open filesystem (package filesystem's FS, or
// its Writer for FAT and exFAT) over WebDAV class 1 and 2, so that every
// desktop's own client (Windows Explorer's WebClient, macOS Finder,
// GNOME/KDE through GVfs/KIO, davfs2, rclone) reaches the files inside a
// volume without a driver or administrator rights.
//
// The protocol is golang.org/x/net/webdav; this package adds the adapter
// from filesystem.Writer to its FileSystem, an in-memory lock system with
// shared as well as exclusive locks (and the If header's entity tags),
// dead properties (kept in memory for the life of the server: PROPPATCH
// works, and a restart forgets them), authentication with a credential
// made per server (Digest, and Basic for clients without Digest), a
// server-side read-only mode, and durability: every request that changes
// the volume (PUT, MKCOL, DELETE, MOVE, COPY) is answered with success
// only after the filesystem has been synced, so a client's success means
// the data is on the disk.
//
// No path leaves the volume: names are cleaned as absolute paths inside
// it, a NUL is refused, and the filesystem implementations read only the
// volume (a symbolic link in an ext4 or NTFS volume resolves inside it,
// never on the host).
package webdav
