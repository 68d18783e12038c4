package fat

import (
	"io"
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// backend is FS as an open File sees it (fatcore.Backend); a type of its
// own so that these methods stay out of FS's API.
type backend FS

func (fs *FS) files() *backend { return (*backend)(fs) }

func (b *backend) fs() *FS                    { return (*FS)(b) }
func (b *backend) Lock()                      { b.mu.Lock() }
func (b *backend) Unlock()                    { b.mu.Unlock() }
func (b *backend) Closed() bool               { return b.closed }
func (b *backend) Writable() error            { return b.fs().writable() }
func (b *backend) Device() io.WriterAt        { return b.w }
func (b *backend) Size(n *node) int64         { return int64(n.ent.size) }
func (b *backend) Commit(n *node) error       { return b.fs().commit(n) }
func (b *backend) Info(n *node) iofs.FileInfo { return b.fs().info(n.ent) }
func (b *backend) ErrIsDir() error            { return ErrIsDir }
func (b *backend) ErrNotDir() error           { return ErrNotDir }

// List returns a directory's entries sorted by name, and an ErrCorrupt
// error naming any invalid entries (which are left out).
func (b *backend) List(d *dirCache) ([]iofs.DirEntry, error) {
	return fatcore.Listing(d.live, b.fs().info), d.corrupt()
}

// DirInfo describes a directory: the root has no entry of its own.
func (b *backend) DirInfo(d *dirCache) iofs.FileInfo {
	if d.self == nil {
		return b.fs().rootInfo()
	}
	return b.fs().info(d.self)
}

// The directory tree, for fatcore.OpenFile.
func (b *backend) Root() *dirCache                  { return b.root }
func (b *backend) IsDir(e *entry) bool              { return e.isDir() }
func (b *backend) ReadOnly(e *entry) bool           { return e.attr&AttrReadOnly != 0 }
func (b *backend) OpenNode(e *entry) (*node, error) { return b.fs().openNode(e) }
func (b *backend) Nodes() *fatcore.Nodes[*node]     { return &b.nodes }
func (b *backend) OpenDir(parent *dirCache, e *entry) (*dirCache, error) {
	return b.fs().openDir(parent, e)
}
func (b *backend) Resolve(name string) (*dirCache, *entry, string, error) {
	return b.fs().resolve(name)
}

// The rest of the tree, for the path operations of fatcore.Paths (the
// on-disk parts are in ops.go and rename.go).
func (b *backend) Dirs() fatcore.Dirs[*dirCache, *entry] { return b.fs().dirTree() }
func (b *backend) RootInfo() *FileInfo                   { return b.fs().rootInfo() }
func (b *backend) EntryInfo(e *entry) *FileInfo          { return b.fs().info(e) }
func (b *backend) Corrupt(d *dirCache) error             { return d.corrupt() }
func (b *backend) EnsureUnshared() error                 { return b.fs().ensureUnshared() }
func (b *backend) ErrNotEmpty() error                    { return ErrNotEmpty }

var _ fatcore.Tree[*node, *dirCache, *entry, *FileInfo, Attr] = (*backend)(nil)
