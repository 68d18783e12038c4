package nfs

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"net"
	"path"
	"strings"
	"sync"

	billy "github.com/go-git/go-billy/v5"
	gonfs "github.com/willscott/go-nfs"
	"github.com/willscott/go-nfs/helpers"
)

// handleLimit is what the handler tells go-nfs it can hold (READDIRPLUS
// returns at most half as many entries per call). The table itself never
// evicts: a forgotten handle is a stale file to the client.
const handleLimit = 1 << 20

var errStale = errors.New("unknown or stale file handle")

// handler is the go-nfs Handler: MOUNT checks the secret export path, and
// a table maps random 16-byte handles to paths and back.
type handler struct {
	fs     *billyFS
	export string
	// verifiers serves go-nfs's READDIR cookie verifiers (CachingHandler);
	// its own handle methods are not used.
	verifiers *helpers.CachingHandler

	mu     sync.Mutex
	byID   map[string]string // handle → path ("/" for the root)
	byPath map[string]string // path → handle
}

func newHandler(b *billyFS, export string) *handler {
	h := &handler{fs: b, export: export, byID: map[string]string{}, byPath: map[string]string{}}
	h.verifiers = helpers.NewCachingHandler(helpers.NewNullAuthHandler(b), 1024).(*helpers.CachingHandler)
	b.renamed = h.rename
	return h
}

// subMount is the filesystem MOUNT returns for a directory below the
// export (libnfs mounts the directory of the file it names, since the
// export list is empty): the same filesystem, whose root handle is that of
// the directory.
type subMount struct {
	*billyFS
	dir string
}

// Mount accepts the export path and directories below it; anything else is
// refused alike, whether it exists or not.
func (h *handler) Mount(ctx context.Context, c net.Conn, req gonfs.MountRequest) (gonfs.MountStatus, billy.Filesystem, []gonfs.AuthFlavor) {
	p := string(req.Dirpath)
	flavors := []gonfs.AuthFlavor{gonfs.AuthFlavorNull}
	if strings.TrimRight(p, "/") == h.export {
		return gonfs.MountStatusOk, h.fs, flavors
	}
	rest, ok := strings.CutPrefix(p, h.export+"/")
	if !ok {
		return gonfs.MountStatusErrAcces, nil, nil
	}
	dir := clean(rest)
	if fi, err := h.fs.Stat(dir); err != nil {
		return gonfs.MountStatusErrNoEnt, nil, nil
	} else if !fi.IsDir() {
		return gonfs.MountStatusErrNotDir, nil, nil
	}
	return gonfs.MountStatusOk, &subMount{billyFS: h.fs, dir: dir}, flavors
}

func (h *handler) Change(billy.Filesystem) billy.Change {
	if h.fs.w == nil {
		return nil
	}
	return h.fs
}

func (h *handler) FSStat(ctx context.Context, _ billy.Filesystem, s *gonfs.FSStat) error {
	if err := h.fs.lock("fsstat", "/", false); err != nil {
		return err
	}
	st := h.fs.ro.Statfs()
	h.fs.mu.Unlock()
	s.TotalSize = uint64(st.TotalBytes)
	s.FreeSize = uint64(st.FreeBytes)
	s.AvailableSize = uint64(st.AvailBytes)
	s.TotalFiles = st.Files
	s.FreeFiles = st.FreeFiles
	s.AvailableFiles = st.FreeFiles
	return nil
}

func joinPath(p []string) string { return path.Clean("/" + strings.Join(p, "/")) }

func (h *handler) ToHandle(f billy.Filesystem, p []string) []byte {
	key := joinPath(p)
	if sub, ok := f.(*subMount); ok {
		key = path.Join(sub.dir, key)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.byPath[key]; ok {
		return []byte(id)
	}
	b := make([]byte, 16)
	rand.Read(b)
	h.byID[string(b)] = key
	h.byPath[key] = string(b)
	return b
}

func (h *handler) FromHandle(fh []byte) (billy.Filesystem, []string, error) {
	h.mu.Lock()
	p, ok := h.byID[string(fh)]
	h.mu.Unlock()
	if !ok {
		return nil, nil, errStale
	}
	if p == "/" {
		return h.fs, []string{}, nil
	}
	return h.fs, strings.Split(p[1:], "/"), nil
}

// InvalidateHandle is what go-nfs calls after REMOVE, RMDIR and RENAME.
// A handle whose path still exists (a rename re-pointed it, see rename)
// stays valid; a removed file's handle goes.
func (h *handler) InvalidateHandle(_ billy.Filesystem, fh []byte) error {
	h.mu.Lock()
	p, ok := h.byID[string(fh)]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	if _, err := h.fs.Lstat(p); err == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(p)
	return nil
}

// forgetLocked drops the handles of p and everything below it.
func (h *handler) forgetLocked(p string) {
	for q, id := range h.byPath {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(h.byPath, q)
			delete(h.byID, id)
		}
	}
}

// rename re-points the handles of oldpath and everything below it to
// newpath; the handles of what the rename replaced go stale.
func (h *handler) rename(oldpath, newpath string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(newpath)
	moved := map[string]string{}
	for q, id := range h.byPath {
		if q == oldpath || strings.HasPrefix(q, oldpath+"/") {
			moved[newpath+q[len(oldpath):]] = id
			delete(h.byPath, q)
		}
	}
	for q, id := range moved {
		h.byPath[q] = id
		h.byID[id] = q
	}
}

func (h *handler) HandleLimit() int { return handleLimit }

func (h *handler) VerifierFor(p string, contents []fs.FileInfo) uint64 {
	return h.verifiers.VerifierFor(p, contents)
}

func (h *handler) DataForVerifier(p string, id uint64) []fs.FileInfo {
	return h.verifiers.DataForVerifier(p, id)
}
