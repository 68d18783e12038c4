package webdav

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strings"

	"golang.org/x/net/webdav"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Options configure NewHandler.
type Options struct {
	// ReadOnly refuses every method that would change the volume with 405
	// (and the filesystem is not written even if a method got through).
	// A filesystem that is not a filesystem.Writer is always served
	// read-only.
	ReadOnly bool
	// User and Password are the one credential accepted; both must be
	// set.
	User, Password string
	// Logger, if set, is told of every request and its error.
	Logger func(r *http.Request, err error)
}

// readMethods are the methods a read-only server answers.
var readMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PROPFIND": true}

// maxXMLBody bounds the XML request bodies (PROPFIND, PROPPATCH, LOCK)
// read whole to be checked.
const maxXMLBody = 1 << 20

// NewHandler serves fsys over WebDAV at the root of the URL space.
func NewHandler(fsys filesystem.FS, o Options) (http.Handler, error) {
	if o.User == "" || o.Password == "" {
		return nil, errors.New("webdav: a user and a password are required")
	}
	a, err := newAuth(o.User, o.Password)
	if err != nil {
		return nil, err
	}
	adapter := newFileSystem(fsys, o.ReadOnly)
	readOnly := adapter.w == nil
	locks := newLockSystem()
	dav := &webdav.Handler{FileSystem: adapter, LockSystem: etagLocks{locks, adapter}, Logger: o.Logger}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, stale := a.check(r); !ok {
			a.challenge(w, stale)
			return
		}
		if readOnly && !readMethods[r.Method] {
			w.Header().Set("Allow", "OPTIONS, GET, HEAD, PROPFIND")
			http.Error(w, "405 Method Not Allowed: the volume is served read-only", http.StatusMethodNotAllowed)
			return
		}
		if readOnly && r.Method == "OPTIONS" {
			// Tell clients up front: no locking, no writing.
			w = &optionsReadOnly{ResponseWriter: w}
		}
		switch r.Method {
		case "PROPFIND", "PROPPATCH", "LOCK":
			if status := checkXMLBody(r); status != 0 {
				http.Error(w, http.StatusText(status), status)
				return
			}
		}
		if r.Method == "LOCK" {
			body, _ := io.ReadAll(r.Body) // in memory: checkXMLBody read it
			r.Body = io.NopCloser(bytes.NewReader(body))
			if serveSharedLock(w, r, body, locks, adapter) {
				return
			}
		}
		ctx, ref := withRefusal(r.Context())
		dav.ServeHTTP(&refusalStatus{ResponseWriter: w, r: ref}, r.WithContext(ctx))
	}), nil
}

// checkXMLBody reads an XML request body (up to maxXMLBody) and refuses
// what encoding/xml, and so x/net/webdav, would accept although Namespaces
// in XML 1.0 forbids it: a prefix bound to the empty name
// (xmlns:p=""). The body is put back for the handler. It returns 0 when
// the request may go on.
func checkXMLBody(r *http.Request) int {
	if r.Body == nil || r.Body == http.NoBody {
		return 0
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxXMLBody+1))
	r.Body.Close()
	if err != nil {
		return http.StatusBadRequest
	}
	if len(b) > maxXMLBody {
		return http.StatusRequestEntityTooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		t, err := d.RawToken()
		if err != nil {
			return 0 // the end, or a syntax error the handler reports
		}
		if se, ok := t.(xml.StartElement); ok {
			for _, at := range se.Attr {
				if at.Name.Space == "xmlns" && strings.TrimSpace(at.Value) == "" {
					return http.StatusBadRequest
				}
			}
		}
	}
}

// optionsReadOnly drops class 2 (locking) from a read-only server's DAV
// header.
type optionsReadOnly struct{ http.ResponseWriter }

func (o *optionsReadOnly) WriteHeader(code int) {
	if o.Header().Get("DAV") != "" {
		o.Header().Set("DAV", "1")
		o.Header().Set("Allow", "OPTIONS, GET, HEAD, PROPFIND")
	}
	o.ResponseWriter.WriteHeader(code)
}

func (o *optionsReadOnly) Write(b []byte) (int, error) {
	if o.Header().Get("DAV") != "" {
		o.Header().Set("DAV", "1")
		o.Header().Set("Allow", "OPTIONS, GET, HEAD, PROPFIND")
	}
	return o.ResponseWriter.Write(b)
}
