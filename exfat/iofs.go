package exfat

import (
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// IOFS returns a read-only io/fs view of the filesystem (fs.FS,
// fs.ReadDirFS, fs.StatFS and fs.ReadFileFS), for fs.WalkDir, fs.Glob,
// http.FS, testing/fstest and the like. Paths follow io/fs rules: no
// leading slash, "." for the root.
func (fs *FS) IOFS() iofs.FS { return fatcore.IOFS(fs) }

// ReadFile reads a whole file.
func (fs *FS) ReadFile(name string) ([]byte, error) { return fatcore.ReadFile(fs, name) }

// WriteFile creates or replaces a file with data. A new file's content
// appears at once: its directory entry is written only after the data and
// the allocation. An existing file keeps its old content on disk until the
// new content is complete (see File.Truncate).
func (fs *FS) WriteFile(name string, data []byte, perm iofs.FileMode) error {
	return fatcore.WriteFile(fs, name, data, perm)
}
