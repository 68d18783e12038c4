package webdav

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "127.5.6.7:80": true, "[::1]:8080": true, "localhost:1": true,
		":8080": false, "0.0.0.0:80": false, "[::]:80": false, "192.0.2.10:443": false, "example.org:80": false, "bogus": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestCleanStaysInside(t *testing.T) {
	for in, want := range map[string]string{
		"../../etc/passwd": "/etc/passwd", "/a/../../b": "/b", "a//b/./c": "/a/b/c", "": "/", "/..": "/",
	} {
		if got, err := clean(in); err != nil || got != want {
			t.Errorf("clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := clean("a\x00b"); err == nil {
		t.Error("clean accepted a NUL")
	}
}

// TestSelfSignedTLS serves over https with a generated certificate and
// checks that the fingerprint printed is the certificate's the client sees.
func TestSelfSignedTLS(t *testing.T) {
	fsys, _ := newFATImage(t, 33<<20)
	defer fsys.Close()
	s, err := Start(fsys, Config{Listen: "127.0.0.1:0", TLSCert: "", TLSKey: ""})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	if !strings.HasPrefix(s.URL, "http://") || s.Fingerprint != "" {
		t.Fatalf("loopback without a certificate: %s %q, want plain http", s.URL, s.Fingerprint)
	}
	cert, fp, err := SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	if strings.ReplaceAll(fp, ":", "") != strings.ToUpper(strings.TrimSpace(hexString(sum[:]))) {
		t.Errorf("fingerprint %s is not the SHA-256 of the certificate", fp)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
