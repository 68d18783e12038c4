package webdav

import (
	"crypto/tls"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeTLSWithOpenSSLCertificate serves https with a certificate and
// key that openssl made, and checks that a client reaches it over TLS,
// sees that very certificate, and still needs the credential.
func TestServeTLSWithOpenSSLCertificate(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("skipping: openssl is not installed (Debian package openssl)")
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	out, err := exec.Command(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
		"-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", cert).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl req: %v\n%s", err, out)
	}
	fp, err := exec.Command(openssl, "x509", "-in", cert, "-noout", "-fingerprint", "-sha256").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(fp[strings.IndexByte(string(fp), '=')+1:]))

	fsys, _ := newFATImage(t, 33<<20)
	defer fsys.Close()
	s, err := Start(fsys, Config{TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("URL %s, want https", s.URL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(withAuth bool) *http.Response {
		req, _ := http.NewRequest("PROPFIND", s.URL, nil)
		req.Header.Set("Depth", "0")
		if withAuth {
			req.SetBasicAuth(s.User, s.Password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get(false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("PROPFIND without credential over TLS: %d, want 401", r.StatusCode)
	}
	r := get(true)
	if r.StatusCode != http.StatusMultiStatus {
		t.Errorf("PROPFIND over TLS: %d, want 207", r.StatusCode)
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		t.Fatal("no TLS connection state")
	}
	if got := Fingerprint(r.TLS.PeerCertificates[0].Raw); got != want {
		t.Errorf("server's certificate fingerprint %s, openssl says %s", got, want)
	}
}
