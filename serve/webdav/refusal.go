package webdav

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// x/net/webdav answers a PUT whose file cannot be created 404 and one
// whose write fails 405, whatever the reason; a MKCOL, MOVE or DELETE the
// filesystem refuses gets 405 or 500. When the volume refused the write
// -- hidden-volume protection (volume.ErrProtected), or the read-only
// state that protection leaves the volume in after its first refused
// write, as TrueCrypt does -- the client should hear 403 Forbidden, the
// status for "understood, and refused", as a mount answers EPERM. So each
// request carries a refusal flag that the filesystem adapter sets when
// the volume refuses, and the response's error status becomes 403.
type refusal struct {
	atomic.Int32 // 0, or refusedProtected / refusedReadOnly
}

const (
	refusedProtected = 1 + iota
	refusedReadOnly
)

type refusalKey struct{}

func withRefusal(ctx context.Context) (context.Context, *refusal) {
	r := new(refusal)
	return context.WithValue(ctx, refusalKey{}, r), r
}

// refusalOf returns the request's flag, or nil (a nil flag notes nothing).
func refusalOf(ctx context.Context) *refusal {
	r, _ := ctx.Value(refusalKey{}).(*refusal)
	return r
}

// note sets the flag when err is the volume refusing a write, and
// returns err.
func (r *refusal) note(err error) error {
	switch {
	case r == nil || err == nil:
	case errors.Is(err, volume.ErrProtected):
		r.Store(refusedProtected)
	case errors.Is(err, filesystem.ErrReadOnly), errors.Is(err, volume.ErrReadOnly):
		r.CompareAndSwap(0, refusedReadOnly)
	}
	return err
}

// refusalStatus turns the error status of a request whose write the
// volume refused into 403, with a body that says why.
type refusalStatus struct {
	http.ResponseWriter
	r        *refusal
	replaced bool
}

// refusedText says why, without what the error itself says (where the
// hidden volume lies is not the client's to know).
var refusedText = map[int32]string{
	refusedProtected: "403 Forbidden: the write would overwrite the protected hidden volume; the outer volume is read-only from now on\n",
	refusedReadOnly:  "403 Forbidden: the volume is read-only now (an earlier write was refused or failed)\n",
}

func (w *refusalStatus) WriteHeader(code int) {
	if why := w.r.Load(); code >= 400 && why != 0 {
		w.replaced = true
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Del("Content-Length")
		w.ResponseWriter.WriteHeader(http.StatusForbidden)
		w.ResponseWriter.Write([]byte(refusedText[why]))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalStatus) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil // x/net/webdav's status text, replaced above
	}
	return w.ResponseWriter.Write(p)
}

func (w *refusalStatus) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
