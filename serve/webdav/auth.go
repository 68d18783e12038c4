package webdav

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// realm names the server in the browser's or file manager's password
// prompt.
const realm = "cryptvol"

// nonceLife is how long a Digest nonce is accepted; an older one is
// answered with stale=true, and clients retry with a fresh one without
// asking the user.
const nonceLife = time.Hour

// auth checks HTTP Digest (RFC 7616, MD5 with qop=auth: what Windows'
// WebClient, macOS, GVfs, davfs2, neon and curl speak) and HTTP Basic
// (RFC 7617) against one user and password. Digest is offered first:
// Windows' WebClient refuses Basic over plain http unless the registry's
// BasicAuthLevel is 2, and accepts Digest without any change. Basic is
// kept for clients that have nothing else; over loopback the password
// does not travel on a network.
type auth struct {
	user, password string
	key            []byte // signs nonces, so none need be remembered
	now            func() time.Time
}

func newAuth(user, password string) (*auth, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &auth{user: user, password: password, key: key, now: time.Now}, nil
}

// check reports whether r carries valid credentials, and if not whether
// its Digest nonce was merely too old.
func (a *auth) check(r *http.Request) (ok, stale bool) {
	h := r.Header.Get("Authorization")
	scheme, rest, _ := strings.Cut(h, " ")
	switch strings.ToLower(scheme) {
	case "basic":
		u, p, ok := r.BasicAuth()
		return ok && equal(u, a.user) && equal(p, a.password), false
	case "digest":
		return a.checkDigest(r, parseParams(rest))
	}
	return false, false
}

func (a *auth) checkDigest(r *http.Request, p map[string]string) (ok, stale bool) {
	if alg := p["algorithm"]; alg != "" && !strings.EqualFold(alg, "MD5") {
		return false, false
	}
	if !equal(p["username"], a.user) || p["realm"] != realm || p["uri"] != r.RequestURI {
		return false, false
	}
	fresh, valid := a.nonceValid(p["nonce"])
	if !valid {
		return false, false
	}
	ha1 := md5hex(a.user + ":" + realm + ":" + a.password)
	ha2 := md5hex(r.Method + ":" + p["uri"])
	var want string
	switch p["qop"] {
	case "auth":
		want = md5hex(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + ha2)
	case "":
		want = md5hex(ha1 + ":" + p["nonce"] + ":" + ha2) // RFC 2069 clients
	default:
		return false, false
	}
	if !equal(p["response"], want) {
		return false, false
	}
	if !fresh {
		return false, true
	}
	return true, false
}

// challenge answers 401 with both schemes, Digest first.
func (a *auth) challenge(w http.ResponseWriter, stale bool) {
	d := fmt.Sprintf(`Digest realm="%s", qop="auth", algorithm=MD5, nonce="%s"`, realm, a.nonce())
	if stale {
		d += ", stale=true"
	}
	w.Header().Add("WWW-Authenticate", d)
	w.Header().Add("WWW-Authenticate", fmt.Sprintf(`Basic realm="%s", charset="UTF-8"`, realm))
	http.Error(w, "401 Unauthorized: the user and password are those 'cryptvol serve' printed", http.StatusUnauthorized)
}

// nonce is the time it was made and an HMAC of it. Nonces are not
// remembered, so a captured Digest header can be replayed for the nonce's
// hour: over loopback no one can capture it, and off loopback the server
// speaks TLS only.
func (a *auth) nonce() string {
	b := make([]byte, 8, 8+16)
	binary.BigEndian.PutUint64(b, uint64(a.now().Unix()))
	return base64.RawURLEncoding.EncodeToString(append(b, a.mac(b)...))
}

func (a *auth) mac(t []byte) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write(t)
	return m.Sum(nil)[:16]
}

func (a *auth) nonceValid(n string) (fresh, valid bool) {
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil || len(b) != 24 || !hmac.Equal(b[8:], a.mac(b[:8])) {
		return false, false
	}
	made := time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0)
	return a.now().Sub(made) < nonceLife, true
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// parseParams splits a Digest header's comma-separated key=value and
// key="quoted value" pairs.
func parseParams(s string) map[string]string {
	m := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimLeft(s, ", \t") {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		k = strings.ToLower(strings.TrimSpace(k))
		var v string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				b.WriteByte(rest[i])
			}
			v, s = b.String(), rest[min(i+1, len(rest)):]
		} else {
			v, s, _ = strings.Cut(rest, ",")
			v = strings.TrimSpace(v)
		}
		m[k] = v
	}
	return m
}
