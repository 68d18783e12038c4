package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// 299 members and one damaged byte in the middle of the file: get
// extracts the 298 others, byte for byte, names the damaged one and exits
// 3 (it used to stop at the damaged member, with 68 of 299 out); verify
// says a repair keeps 298, and after it all 298 read back.
func TestArchiveGetGoesOnPastDamage(t *testing.T) {
	work := t.TempDir()
	src := filepath.Join(work, "src")
	os.Mkdir(src, 0o755)
	want := map[string][]byte{}
	for i := 0; i < 299; i++ {
		b := make([]byte, 1000+i*13)
		rand.Read(b)
		name := fmt.Sprintf("m%03d.bin", i)
		want[name] = b
		os.WriteFile(filepath.Join(src, name), b, 0o644)
	}
	key := filepath.Join(work, "key")
	kb := make([]byte, 32)
	rand.Read(kb)
	os.WriteFile(key, kb, 0o600)
	ar := filepath.Join(work, "a.cva")
	t.Chdir(src)
	code, _, stderr := runCLI("archive", "create", ar, ".", "-r", "-k", key)
	if code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	raw, _ := os.ReadFile(ar)
	raw[len(raw)/3] ^= 0x10
	os.WriteFile(ar, raw, 0o600)

	out := filepath.Join(work, "out")
	code, _, stderr = runCLI("archive", "get", ar, "-C", out, "-k", key)
	if code != 3 || !strings.Contains(stderr, "1 of 299 files do not authenticate and were not extracted (listed above); 298 extracted") {
		t.Fatalf("get: exit %d\n%s", code, stderr)
	}
	var damaged string
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(out, name))
		switch {
		case err != nil && damaged == "":
			damaged = name
		case err != nil:
			t.Fatalf("%s and %s both missing", damaged, name)
		case !bytes.Equal(got, b):
			t.Fatalf("%s extracted wrong", name)
		}
	}
	if damaged == "" || !strings.Contains(stderr, "DAMAGED: "+damaged+":") {
		t.Fatalf("damaged member %q not named:\n%s", damaged, stderr)
	}
	if left := findPlaintext(t, out, want[damaged], ""); len(left) > 0 {
		t.Fatalf("left of the damaged member: %v", left)
	}

	code, stdout, _ := runCLI("archive", "verify", ar, "-k", key)
	if code != 3 || !strings.Contains(stdout, "A repair would keep 298 members") || !strings.Contains(stdout, "  "+damaged+" (") {
		t.Fatalf("verify: exit %d\n%s", code, stdout)
	}
	if code, stdout, stderr := runCLI("archive", "verify", ar, "--repair", "-k", key); code != 0 || !strings.Contains(stdout, "OK") {
		t.Fatalf("repair: exit %d\n%s%s", code, stdout, stderr)
	}
	out2 := filepath.Join(work, "out2")
	if code, _, stderr := runCLI("archive", "get", ar, "-C", out2, "-k", key); code != 0 {
		t.Fatalf("get after repair: exit %d\n%s", code, stderr)
	}
	ents, _ := os.ReadDir(out2)
	if len(ents) != 298 {
		t.Fatalf("%d files after repair, want 298", len(ents))
	}
}
