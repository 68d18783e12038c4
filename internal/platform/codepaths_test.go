package platform

import (
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
)

// TestCodePaths: every cipher of the registry is listed (the legacy ones
// grouped), then the four PBKDF2 PRFs with SIMD lanes.
func TestCodePaths(t *testing.T) {
	out := CodePaths()
	cipherPart, kdfPart, ok := strings.Cut(out, "kdf code paths:\n")
	if !ok || !strings.HasPrefix(cipherPart, "cipher code paths:\n") {
		t.Fatalf("headings missing:\n%s", out)
	}
	for _, s := range ciphers.All() {
		want := "  " + s.Name + " "
		if s.Legacy {
			want = s.Name
		}
		if !strings.Contains(cipherPart, want) || !strings.Contains(cipherPart, s.Implementation()) {
			t.Errorf("%s (%s) not listed:\n%s", s.Name, s.Implementation(), cipherPart)
		}
	}
	for _, l := range []string{"ChaCha20", "XChaCha", "NH"} {
		if !strings.Contains(cipherPart, "  "+l+" ") {
			t.Errorf("no %s line:\n%s", l, cipherPart)
		}
	}
	if n := strings.Count(kdfPart, "  PBKDF2-"); n != 4 || !strings.HasSuffix(kdfPart, "\n") {
		t.Errorf("%d PBKDF2 lines:\n%s", n, kdfPart)
	}
}

// TestReadBuild: a linked-in commit wins over the build info, and says
// when its tree was modified.
func TestReadBuild(t *testing.T) {
	if b := ReadBuild("0123abc", "true"); b.Revision != "0123abc (modified)" {
		t.Errorf("modified: %q", b.Revision)
	}
	if b := ReadBuild("0123abc", ""); b.Revision != "0123abc" {
		t.Errorf("clean: %q", b.Revision)
	}
	for _, s := range ReadBuild("", "").Settings {
		if !strings.Contains(s, "=") {
			t.Errorf("setting %q is not KEY=VALUE", s)
		}
	}
}
