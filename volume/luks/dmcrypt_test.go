package luks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/cryptvol/cryptvol/volume"
)

// TestDmcryptImages opens the LUKS2 images of testdata/adiantum, which
// cryptsetup 2.6.1 formatted and Linux 6.1's dm-crypt wrote in a VM
// (testdata/adiantum/mkimages.sh): Adiantum with XChaCha12 and 4096-byte
// sectors and with XChaCha20 and 512-byte sectors, and aes-xts-plain64 with
// 4096-byte sectors as the control of how dm-crypt numbers large sectors'
// IVs. The keyslots are cryptsetup's own choice, Adiantum for Adiantum
// volumes. The plaintext dm-crypt was given must read back at both places
// it was written, and the whole data area must hash to what dm-crypt read.
func TestDmcryptImages(t *testing.T) {
	const pass = "adiantum from the kernel"
	sums := readDataSums(t, "testdata/adiantum/dmcrypt-data.sha256")
	var pattern bytes.Buffer
	for i := 0; i < 512; i++ {
		fmt.Fprintf(&pattern, "dm-crypt adiantum %013d\n", i)
	}
	for _, tc := range []struct {
		name, cipher string
		sectorSize   int
	}{
		{"fwd-luks2-xchacha12-4096.img", "xchacha12,aes-adiantum-plain64", 4096},
		{"fwd-luks2-xchacha20-512.img", "xchacha20,aes-adiantum-plain64", 512},
		{"fwd-luks2-aes-xts-4096.img", "aes-xts-plain64", 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, ok := sums[tc.name]
			if !ok {
				t.Fatalf("no dm-crypt hash for %s", tc.name)
			}
			p := unxz(t, filepath.Join("testdata/adiantum", tc.name+".xz"))
			v, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if in := v.Info(); in.Format != "luks2" || in.Encryption != tc.cipher || in.SectorSize != tc.sectorSize || in.KeySize != 256 {
				t.Fatalf("info %+v", in)
			}
			for _, at := range []int64{0, 1536 << 10} {
				got := make([]byte, pattern.Len())
				if _, err := v.ReadAt(got, at); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, pattern.Bytes()) {
					t.Fatalf("the plaintext dm-crypt wrote at %d does not read back", at)
				}
			}
			h := sha256.New()
			if _, err := io.Copy(h, io.NewSectionReader(v, 0, v.Size())); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != want {
				t.Fatalf("data area hashes to %s; dm-crypt read %s", got, want)
			}
		})
	}
}

// readDataSums reads "HASH  NAME" lines.
func readDataSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h, name, ok := strings.Cut(sc.Text(), "  "); ok {
			out[name] = h
		}
	}
	return out
}

// unxz decompresses an .xz file into the test's temporary directory.
func unxz(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := xz.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".xz"))
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
