package luks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsHeaderFile: a LUKS1 and a LUKS2 header backup are header files;
// a short file, a file of zeros and a missing file are not.
func TestIsHeaderFile(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []string{"luks1", "luks2"} {
		p := newVolume(t, typ, "backup")
		dev := openRaw(t, p, true)
		backup := filepath.Join(dir, typ+".hdr")
		f, err := os.Create(backup)
		if err != nil {
			t.Fatal(err)
		}
		_, err = HeaderBackup(dev, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !IsHeaderFile(backup) {
			t.Errorf("a %s header backup is not a header file", typ)
		}
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("LUKS"), 0o600)
	zeros := filepath.Join(dir, "zeros")
	os.WriteFile(zeros, make([]byte, 4096), 0o600)
	for _, p := range []string{short, zeros, filepath.Join(dir, "missing")} {
		if IsHeaderFile(p) {
			t.Errorf("%s is taken for a header file", filepath.Base(p))
		}
	}
}
