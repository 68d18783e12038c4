//go:build linux || darwin

package mount

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
)

// TestEveryFormat mounts the files of a VeraCrypt, TrueCrypt, LUKS1 and
// LUKS2 volume (each reopened by format detection, as the CLI does),
// writes through the mount, and reads the result back through the fat
// package after unmounting; then serves the same volume raw and checks the
// file's bytes against the volume's own reads.
func TestEveryFormat(t *testing.T) {
	needFUSE(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			v, _ := newVolume(t, k, 24<<20)
			data := randomBytes(1<<20 + 17)
			dir := mountDir(t)
			m, err := MountFiles(dir, v, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "a", "b", "data.bin"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := m.Unmount(); err != nil {
				t.Fatal(err)
			}
			ffs, err := fat.Open(v, v.Size())
			if err != nil {
				t.Fatal(err)
			}
			got, err := ffs.ReadFile("/a/b/data.bin")
			ffs.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after unmount: %d bytes, %v; want the %d written", len(got), err, len(data))
			}

			m, err = MountRaw(dir, v, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, RawFileName))
			if uerr := m.Unmount(); uerr != nil {
				t.Fatal(uerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, v.Size())
			if _, err := v.ReadAt(want, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, want) {
				t.Fatalf("raw file (%d bytes) differs from the data area (%d bytes)", len(raw), len(want))
			}
		})
	}
}
