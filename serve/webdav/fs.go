package webdav

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"golang.org/x/net/webdav"

	"github.com/cryptvol/cryptvol/filesystem"
)

// errAppend is returned for O_APPEND on an existing file: the filesystem
// layer opens files for writing only by creating or truncating them, and
// no WebDAV method needs appending.
var errAppend = errors.New("appending to an existing file is not supported")

// fileSystem adapts a filesystem.FS (and its Writer, when writable) to
// webdav.FileSystem. One mutex serialises every call into the filesystem:
// the implementations guard their own state, but a WebDAV operation such
// as OpenFile or RemoveAll is several calls that must see one state, and
// the read-only implementations (ext4, NTFS) are not promised to be safe
// for concurrent use.
type fileSystem struct {
	mu    sync.Mutex
	ro    filesystem.FS
	w     filesystem.Writer // nil when read-only
	props *deadProps
}

func newFileSystem(fsys filesystem.FS, readOnly bool) *fileSystem {
	f := &fileSystem{ro: fsys, props: newDeadProps()}
	if w, ok := fsys.(filesystem.Writer); ok && !readOnly {
		f.w = w
	}
	return f
}

// clean makes name an absolute, cleaned path inside the volume: ".."
// stops at the root, and a NUL (which no filesystem here can name) is
// refused.
func clean(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return path.Clean("/" + name), nil
}

func (f *fileSystem) writer(op, name string) (filesystem.Writer, error) {
	if f.w == nil {
		return nil, &os.PathError{Op: op, Path: name, Err: os.ErrPermission}
	}
	return f.w, nil
}

// sync makes what the last call changed durable before the client is
// answered; the volume refusing the call or the sync is noted in ref
// (refusal.go).
func (f *fileSystem) sync(ref *refusal, op, name string, err error) error {
	if err != nil {
		return osError(op, name, ref.note(err))
	}
	return osError(op, name, ref.note(f.w.Sync()))
}

func (f *fileSystem) Mkdir(ctx context.Context, name string, perm os.FileMode) error {
	p, err := clean(name)
	if err != nil {
		return err
	}
	w, err := f.writer("mkdir", p)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.ro.Stat(p); err == nil {
		return &os.PathError{Op: "mkdir", Path: p, Err: os.ErrExist}
	}
	return f.sync(refusalOf(ctx), "mkdir", p, w.Mkdir(p))
}

func (f *fileSystem) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	p, err := clean(name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := f.ro.Stat(p)
	return fi, osError("stat", p, err)
}

func (f *fileSystem) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (webdav.File, error) {
	p, err := clean(name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, statErr := f.ro.Stat(p)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, osError("open", p, statErr)
	}
	switch {
	case exists && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrExist}
	case !exists && flag&os.O_CREATE == 0:
		return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
	}
	writing := flag&(os.O_WRONLY|os.O_RDWR|os.O_TRUNC|os.O_APPEND) != 0
	if writing {
		if _, err := f.writer("open", p); err != nil {
			return nil, err
		}
	}
	if exists && fi.IsDir() {
		if flag&(os.O_TRUNC|os.O_WRONLY) != 0 {
			return nil, &os.PathError{Op: "open", Path: p, Err: filesystem.ErrIsDir}
		}
		return &handle{fsys: f, name: p, dir: true}, nil
	}
	if exists && flag&os.O_TRUNC == 0 {
		if flag&os.O_APPEND != 0 && fi.Size() > 0 {
			return nil, &os.PathError{Op: "open", Path: p, Err: errAppend}
		}
		if flag&os.O_WRONLY == 0 {
			// O_RDONLY, or O_RDWR as PROPPATCH opens: the content is
			// read; a Write is refused.
			r, err := f.ro.Open(p)
			if err != nil {
				return nil, osError("open", p, err)
			}
			return &handle{fsys: f, name: p, r: r}, nil
		}
	}
	// Created, or truncated: the one way the filesystem layer writes.
	wf, err := f.w.Create(p)
	if err != nil {
		return nil, osError("open", p, refusalOf(ctx).note(err))
	}
	if !exists {
		f.props.remove(p) // a stale entry of a name deleted meanwhile
	}
	return &handle{fsys: f, ref: refusalOf(ctx), name: p, r: wf, wf: wf}, nil
}

func (f *fileSystem) RemoveAll(ctx context.Context, name string) error {
	p, err := clean(name)
	if err != nil {
		return err
	}
	w, err := f.writer("remove", p)
	if err != nil {
		return err
	}
	if p == "/" {
		return &os.PathError{Op: "remove", Path: p, Err: os.ErrPermission}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.ro.Stat(p); err != nil {
		return osError("remove", p, err)
	}
	err = f.removeAll(w, p)
	f.props.remove(p)
	return f.sync(refusalOf(ctx), "remove", p, err)
}

// removeAll deletes p and, for a directory, everything under it, depth
// first.
func (f *fileSystem) removeAll(w filesystem.Writer, p string) error {
	fi, err := f.ro.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		ents, err := f.ro.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := f.removeAll(w, path.Join(p, e.Name())); err != nil {
				return err
			}
		}
	}
	return w.Remove(p)
}

func (f *fileSystem) Rename(ctx context.Context, oldName, newName string) error {
	op, err := clean(oldName)
	if err != nil {
		return err
	}
	np, err := clean(newName)
	if err != nil {
		return err
	}
	w, err := f.writer("rename", op)
	if err != nil {
		return err
	}
	if op == "/" || np == "/" || strings.HasPrefix(np, op+"/") {
		return &os.PathError{Op: "rename", Path: op, Err: os.ErrInvalid}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.sync(refusalOf(ctx), "rename", op, w.Rename(op, np)); err != nil {
		return err
	}
	f.props.rename(op, np)
	return nil
}

// handle is an open file or directory.
type handle struct {
	fsys *fileSystem
	ref  *refusal // the opening request's (refusal.go)
	name string
	dir  bool
	r    filesystem.File         // nil for a directory
	wf   filesystem.WritableFile // nil unless created or truncated
	ents []fs.FileInfo           // a directory's entries, read at the first Readdir
	pos  int
	read bool
}

func (h *handle) Read(p []byte) (int, error) {
	if h.dir {
		return 0, &os.PathError{Op: "read", Path: h.name, Err: filesystem.ErrIsDir}
	}
	h.fsys.mu.Lock()
	defer h.fsys.mu.Unlock()
	return h.r.Read(p)
}

func (h *handle) Seek(off int64, whence int) (int64, error) {
	if h.dir {
		return 0, nil
	}
	h.fsys.mu.Lock()
	defer h.fsys.mu.Unlock()
	return h.r.Seek(off, whence)
}

func (h *handle) Write(p []byte) (int, error) {
	if h.wf == nil {
		return 0, &os.PathError{Op: "write", Path: h.name, Err: os.ErrPermission}
	}
	h.fsys.mu.Lock()
	defer h.fsys.mu.Unlock()
	n, err := h.wf.Write(p)
	return n, osError("write", h.name, h.ref.note(err))
}

// ReadFrom lets io.Copy (PUT's body) write in large pieces.
func (h *handle) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var total int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			m, werr := h.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (h *handle) Readdir(count int) ([]fs.FileInfo, error) {
	if !h.dir {
		return nil, &os.PathError{Op: "readdir", Path: h.name, Err: filesystem.ErrNotDir}
	}
	if !h.read {
		h.fsys.mu.Lock()
		ents, err := h.fsys.ro.ReadDir(h.name)
		for _, e := range ents {
			if err != nil {
				break
			}
			var fi fs.FileInfo
			if fi, err = e.Info(); err == nil {
				h.ents = append(h.ents, fi)
			}
		}
		h.fsys.mu.Unlock()
		if err != nil {
			return nil, osError("readdir", h.name, err)
		}
		sort.Slice(h.ents, func(i, j int) bool { return h.ents[i].Name() < h.ents[j].Name() })
		h.read = true
	}
	rest := h.ents[h.pos:]
	if count <= 0 {
		h.pos = len(h.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(count, len(rest))]
	h.pos += len(rest)
	return rest, nil
}

func (h *handle) Stat() (fs.FileInfo, error) {
	h.fsys.mu.Lock()
	defer h.fsys.mu.Unlock()
	if h.r == nil {
		fi, err := h.fsys.ro.Stat(h.name)
		return fi, osError("stat", h.name, err)
	}
	fi, err := h.r.Stat()
	return fi, osError("stat", h.name, err)
}

// Close of a written file commits it and syncs the filesystem, so that
// PUT answers success only once the data is on the disk.
func (h *handle) Close() error {
	if h.r == nil {
		return nil
	}
	h.fsys.mu.Lock()
	defer h.fsys.mu.Unlock()
	err := h.ref.note(h.r.Close())
	if h.wf != nil {
		err = h.fsys.sync(h.ref, "close", h.name, err)
	}
	return osError("close", h.name, err)
}

func (h *handle) DeadProps() (map[xml.Name]webdav.Property, error) {
	return h.fsys.props.get(h.name), nil
}

func (h *handle) Patch(patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	if h.fsys.w == nil {
		return nil, &os.PathError{Op: "proppatch", Path: h.name, Err: os.ErrPermission}
	}
	return h.fsys.props.patch(h.name, patches), nil
}
