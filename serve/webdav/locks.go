package webdav

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"golang.org/x/net/webdav"
)

// lockSystem is an in-memory webdav.LockSystem with shared locks as well
// as exclusive ones (x/net/webdav's has only exclusive locks, and answers
// a shared LOCK with 501, which Office and litmus ask for). Locks live as
// long as the server. x/net/webdav creates exclusive locks through Create;
// the handler creates shared ones through createShared.
type lockSystem struct {
	mu    sync.Mutex
	locks map[string]*lock // by token
}

type lock struct {
	details webdav.LockDetails
	shared  bool
	expires time.Time // zero: never
}

func newLockSystem() *lockSystem { return &lockSystem{locks: map[string]*lock{}} }

// covers reports whether a lock rooted at root (of depth infinity unless
// zeroDepth) applies to name.
func covers(root string, zeroDepth bool, name string) bool {
	if root == name {
		return true
	}
	return !zeroDepth && under(name, root)
}

// overlap reports whether two locks' scopes share a resource.
func overlap(a, b webdav.LockDetails) bool {
	return covers(a.Root, a.ZeroDepth, b.Root) || covers(b.Root, b.ZeroDepth, a.Root)
}

func (l *lockSystem) expire(now time.Time) {
	for t, k := range l.locks {
		if !k.expires.IsZero() && !now.Before(k.expires) {
			delete(l.locks, t)
		}
	}
}

func expiry(now time.Time, d time.Duration) time.Time {
	if d < 0 {
		return time.Time{}
	}
	return now.Add(d)
}

func (l *lockSystem) create(now time.Time, d webdav.LockDetails, shared bool) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	d.Root = path0(d.Root)
	for _, k := range l.locks {
		if overlap(k.details, d) && !(shared && k.shared) {
			return "", webdav.ErrLocked
		}
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	h := hex.EncodeToString(b)
	token := "urn:uuid:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	l.locks[token] = &lock{details: d, shared: shared, expires: expiry(now, d.Duration)}
	return token, nil
}

// path0 is the lock root as x/net/webdav passes names: cleaned, absolute.
func path0(p string) string {
	c, err := clean(p)
	if err != nil {
		return p
	}
	return c
}

func (l *lockSystem) Create(now time.Time, d webdav.LockDetails) (string, error) {
	return l.create(now, d, false)
}

func (l *lockSystem) createShared(now time.Time, d webdav.LockDetails) (string, error) {
	return l.create(now, d, true)
}

// isShared reports whether token names a shared lock, and its details.
func (l *lockSystem) isShared(token string) (webdav.LockDetails, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.locks[token]
	if k == nil {
		return webdav.LockDetails{}, false
	}
	return k.details, k.shared
}

// Confirm succeeds when the conditions name, for each of name0 and name1
// that is not empty, a lock that covers it. A resource under someone
// else's lock fails unless one of the conditions is a lock on it too.
func (l *lockSystem) Confirm(now time.Time, name0, name1 string, conditions ...webdav.Condition) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	for _, name := range []string{name0, name1} {
		if name == "" {
			continue
		}
		name = path0(name)
		ok := false
		for _, c := range conditions {
			if k := l.locks[c.Token]; k != nil && !c.Not && covers(k.details.Root, k.details.ZeroDepth, name) {
				ok = true
				break
			}
		}
		if !ok {
			return nil, webdav.ErrConfirmationFailed
		}
	}
	return func() {}, nil
}

func (l *lockSystem) Refresh(now time.Time, token string, d time.Duration) (webdav.LockDetails, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	k := l.locks[token]
	if k == nil {
		return webdav.LockDetails{}, webdav.ErrNoSuchLock
	}
	k.details.Duration = d
	k.expires = expiry(now, d)
	return k.details, nil
}

func (l *lockSystem) Unlock(now time.Time, token string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if l.locks[token] == nil {
		return webdav.ErrNoSuchLock
	}
	delete(l.locks, token)
	return nil
}
