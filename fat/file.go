package fat

import (
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// File is an open file or directory. Its methods are safe for concurrent
// use. Reads and writes go straight to the device (no data cache); size,
// first cluster and modification time reach the directory entry on Sync,
// Close, or FS.Sync. Its methods (Read ReadAt Write WriteAt Seek Truncate
// Sync Close Stat ReadDir Name) are the handle fat and exfat share.
type File = fatcore.File[*node, *dirCache]

// paths is what FS gets from fatcore: Open, Create, OpenFile, ReadFile,
// WriteFile, MkdirAll and IOFS over OpenFile, and Stat, ReadDir, Mkdir,
// Remove, RemoveAll, Chtimes, SetCreateTime, SetAttributes and Rename over
// the backend (see fatcore.Paths for their documentation).
type paths = fatcore.Paths[*node, *dirCache, *entry, *FileInfo, Attr]

// create adds the new empty file base to parent; its clusters come with
// the first write.
func (fs *FS) create(parent *dirCache, base string, perm iofs.FileMode) (*node, error) {
	if err := checkName(base); err != nil {
		return nil, err
	}
	if err := parent.corrupt(); err != nil {
		return nil, err
	}
	tmpl := &entry{attr: Attr(fatcore.NewFileAttr(perm))}
	tmpl.setCreated(fs.now(), fs.loc)
	e, err := parent.add(base, tmpl, true, nil)
	if err != nil {
		return nil, err
	}
	n := &node{ent: e}
	e.node = n
	fs.nodes.MarkDirty(n)
	return n, nil
}

// list returns a directory's entries sorted by name, and an ErrCorrupt
// error naming any invalid entries (which are left out).
func (fs *FS) list(d *dirCache) ([]iofs.DirEntry, error) {
	return fatcore.Listing(d.live, fs.info), d.corrupt()
}
