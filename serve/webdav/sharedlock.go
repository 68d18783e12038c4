package webdav

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/webdav"
)

// lockInfo is a LOCK request's body (RFC 4918 section 14.11).
type lockInfo struct {
	XMLName xml.Name `xml:"DAV: lockinfo"`
	Scope   struct {
		Exclusive *struct{} `xml:"DAV: exclusive"`
		Shared    *struct{} `xml:"DAV: shared"`
	} `xml:"DAV: lockscope"`
	Type struct {
		Write *struct{} `xml:"DAV: write"`
	} `xml:"DAV: locktype"`
	Owner struct {
		InnerXML string `xml:",innerxml"`
	} `xml:"DAV: owner"`
}

// serveSharedLock answers a LOCK that creates or refreshes a shared lock,
// which x/net/webdav cannot, and reports whether it did; every other LOCK
// is left to x/net/webdav (which shares the lock system). body is the
// request's body, already read.
func serveSharedLock(w http.ResponseWriter, r *http.Request, body []byte, ls *lockSystem, fsys *fileSystem) bool {
	now := time.Now()
	timeout, err := parseTimeout(r.Header.Get("Timeout"))
	if err != nil {
		return false // x/net/webdav answers 400
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// A refresh names its lock in the If header: "(<token>)".
		token := ifToken(r.Header.Get("If"))
		ld, shared := ls.isShared(token)
		if !shared {
			return false
		}
		if ld, err = ls.Refresh(now, token, timeout); err != nil {
			http.Error(w, err.Error(), http.StatusPreconditionFailed)
			return true
		}
		writeSharedLock(w, token, ld)
		return true
	}
	var li lockInfo
	if err := xml.Unmarshal(body, &li); err != nil || li.Scope.Shared == nil || li.Scope.Exclusive != nil || li.Type.Write == nil {
		return false
	}
	depth := r.Header.Get("Depth")
	if depth != "" && depth != "0" && !strings.EqualFold(depth, "infinity") {
		http.Error(w, "Depth must be 0 or infinity", http.StatusBadRequest)
		return true
	}
	name, err := clean(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return true
	}
	ld := webdav.LockDetails{Root: name, Duration: timeout, OwnerXML: li.Owner.InnerXML, ZeroDepth: depth == "0"}
	token, err := ls.createShared(now, ld)
	if err == webdav.ErrLocked {
		http.Error(w, err.Error(), webdav.StatusLocked)
		return true
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	// As for an exclusive lock: locking a name that does not exist
	// creates an empty file (RFC 4918 section 7.3).
	created := false
	if _, err := fsys.Stat(r.Context(), name); err != nil {
		f, err := fsys.OpenFile(r.Context(), name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			ls.Unlock(now, token)
			status := http.StatusInternalServerError
			if os.IsNotExist(err) {
				status = http.StatusConflict
			}
			http.Error(w, err.Error(), status)
			return true
		}
		created = true
	}
	w.Header().Set("Lock-Token", "<"+token+">")
	if created {
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
	}
	writeSharedLock(w, token, ld)
	return true
}

// ifToken is the one lock token of an If header such as "(<token>)", or
// "".
func ifToken(h string) string {
	i := strings.Index(h, "<")
	j := strings.Index(h, ">")
	if i < 0 || j < i || strings.Count(h, "<") != 1 {
		return ""
	}
	return h[i+1 : j]
}

// parseTimeout reads the Timeout header (RFC 4918 section 10.7): the
// first of its choices, "Infinite" (a negative duration) or "Second-N".
func parseTimeout(s string) (time.Duration, error) {
	s, _, _ = strings.Cut(s, ",")
	s = strings.TrimSpace(s)
	if s == "" || s == "Infinite" {
		return -1, nil
	}
	n, ok := strings.CutPrefix(s, "Second-")
	if !ok {
		return 0, fmt.Errorf("bad Timeout %q", s)
	}
	secs, err := strconv.ParseUint(n, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad Timeout %q", s)
	}
	return time.Duration(secs) * time.Second, nil
}

func writeSharedLock(w io.Writer, token string, ld webdav.LockDetails) {
	if rw, ok := w.(http.ResponseWriter); ok && rw.Header().Get("Content-Type") == "" {
		rw.Header().Set("Content-Type", "application/xml; charset=utf-8")
	}
	depth := "infinity"
	if ld.ZeroDepth {
		depth = "0"
	}
	timeout := "Infinite"
	if ld.Duration >= 0 {
		timeout = fmt.Sprintf("Second-%d", ld.Duration/time.Second)
	}
	var tok, root bytes.Buffer
	xml.EscapeText(&tok, []byte(token))
	xml.EscapeText(&root, []byte(ld.Root))
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"+
		"<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery><D:activelock>\n"+
		"\t<D:locktype><D:write/></D:locktype>\n"+
		"\t<D:lockscope><D:shared/></D:lockscope>\n"+
		"\t<D:depth>%s</D:depth>\n"+
		"\t<D:owner>%s</D:owner>\n"+
		"\t<D:timeout>%s</D:timeout>\n"+
		"\t<D:locktoken><D:href>%s</D:href></D:locktoken>\n"+
		"\t<D:lockroot><D:href>%s</D:href></D:lockroot>\n"+
		"</D:activelock></D:lockdiscovery></D:prop>",
		depth, ld.OwnerXML, timeout, tok.String(), root.String())
}
