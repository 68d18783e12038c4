package webdav

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/net/webdav"
)

// etagLocks adds to a LockSystem the entity-tag conditions of the If
// header (RFC 4918 section 10.4), which x/net/webdav's in-memory lock
// system ignores: a state list such as (<token> ["etag"]) holds only if
// the token is the resource's lock and the etag is its current one, and
// a Not inverts a condition. The token conditions are left to the lock
// system.
type etagLocks struct {
	webdav.LockSystem
	fs *fileSystem
}

func (l etagLocks) Confirm(now time.Time, name0, name1 string, conditions ...webdav.Condition) (func(), error) {
	for _, c := range conditions {
		if c.ETag == "" {
			continue
		}
		if l.etagMatches(name0, c.ETag) == c.Not {
			return nil, webdav.ErrConfirmationFailed
		}
	}
	return l.LockSystem.Confirm(now, name0, name1, conditions...)
}

// etagMatches compares tag with the resource's ETag as x/net/webdav makes
// it (modification time and size), ignoring a weak prefix and quotes.
func (l etagLocks) etagMatches(name, tag string) bool {
	fi, err := l.fs.Stat(context.Background(), name)
	if err != nil {
		return false
	}
	cur := fmt.Sprintf("%x%x", fi.ModTime().UnixNano(), fi.Size())
	return strings.Trim(strings.TrimPrefix(tag, "W/"), `"`) == cur
}
