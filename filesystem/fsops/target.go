package fsops

import (
	"io"
	"io/fs"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Target is what Put, Remove, Mkdir and Move change: a Tree over an
// in-process filesystem.Writer (FAT, exFAT, ext2/3/4) or a RootTree over
// the mount of a kernel driver (NTFS through ntfs-3g). Paths are the
// volume's, starting with "/".
type Target interface {
	// Type is the filesystem's name ("vfat", "exfat", "ext4", "ntfs").
	Type() string
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Mkdir(name string) error
	MkdirAll(name string) error
	Remove(name string) error
	RemoveAll(name string) error
	// Rename replaces an existing file at newpath.
	Rename(oldpath, newpath string) error
	Chtimes(name string, atime, mtime time.Time) error
	// Symlink makes name a symbolic link to target (ErrUnsupported on
	// FAT and exFAT, which have none).
	Symlink(target, name string) error
	// CreateExcl creates a new file (failing if the name exists).
	CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error)
	// Statfs is the space before the operation (block size, available).
	Statfs() filesystem.Statfs
}

// What some filesystems have and others not (Tree answers for the
// in-process ones; a target without these has links and no attributes).
type (
	symlinkHolder   interface{ HasSymlinks() bool }
	attributeKeeper interface {
		Protected(fi fs.FileInfo) bool
		KeepMetadata(old, replacement string) error
	}
	batchRenamer interface {
		BatchesRenames() bool
		RenameAll(pairs [][2]string) (int, error)
	}
)

// hasSymlinks: put copies links as links where the filesystem has them
// (ext2/3/4; NTFS through ntfs-3g).
func hasSymlinks(t Target) bool {
	if h, ok := t.(symlinkHolder); ok {
		return h.HasSymlinks()
	}
	return true
}

// isProtected: a file marked read-only on FAT or exFAT is not replaced.
func isProtected(t Target, fi fs.FileInfo) bool {
	k, ok := t.(attributeKeeper)
	return ok && k.Protected(fi)
}

// keepMetadata gives a replacement the attributes and creation time of
// the file it replaces, where the filesystem has them.
func keepMetadata(t Target, old, replacement string) error {
	if k, ok := t.(attributeKeeper); ok {
		return k.KeepMetadata(old, replacement)
	}
	return nil
}

// FSName is a filesystem type as people write it.
func FSName(fstype string) string {
	switch fstype {
	case "vfat":
		return "FAT"
	case "exfat":
		return "exFAT"
	case "ntfs":
		return "NTFS"
	}
	return fstype
}
