package encbench

import (
	"context"
	"os/exec"
	"testing"
)

// TestRun measures two ciphers on a small buffer and checks every figure
// is there; with openssl installed its rows come from real openssl runs
// (a wrong option would make openssl fail and Run return the error).
func TestRun(t *testing.T) {
	_, err := exec.LookPath("openssl")
	vs := err == nil
	r, err := Run(context.Background(), Options{
		Size: 256 << 10, Ciphers: []string{"aes-128-cbc", "rc4"}, Rounds: 1, VsOpenSSL: vs, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 || r.Results[0].Cipher != "aes-128-cbc" || r.Results[1].Cipher != "rc4" {
		t.Fatalf("results %+v", r.Results)
	}
	for _, c := range r.Results {
		if c.EncryptBPS <= 0 || c.DecryptBPS <= 0 {
			t.Errorf("%s: %+v", c.Cipher, c)
		}
		if vs && (c.OpenSSLEncryptBPS <= 0 || c.OpenSSLDecryptBPS <= 0 || c.OpenSSLStartup <= 0) {
			t.Errorf("%s: openssl figures missing: %+v", c.Cipher, c)
		}
	}
	if _, err := Run(context.Background(), Options{Ciphers: []string{"aes-1-cbc"}}); err == nil {
		t.Error("unknown cipher accepted")
	}
}
