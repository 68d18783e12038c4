package testdata

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TCryptImage is one image of tcrypt-images.tar.xz with the credentials its
// name implies (../shared/testdata/README.md):
// KIND_V-HASH-MODE-CIPHER[-hidden].
type TCryptImage struct {
	Path     string
	Name     string
	Hash     string   // PRF as the file name spells it ("sha512", "stribog512", ...)
	Mode     string   // xts, lrw, cbc
	Ciphers  []string // as the file name spells them
	Hidden   bool     // the image also holds a hidden volume
	System   bool     // a system-encryption disk image
	Password string
	Keyfiles []string
	PIM      int
}

// Passwords of the corpus.
const (
	TCryptPassword       = "aaaaaaaaaaaa"
	TCryptHiddenPassword = "bbbbbbbbbbbb"
	TCryptPIMPassword    = "cccccccccccccccccccc"
	TCryptPassword72     = "aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffffffffffff"
)

// TCryptImages unpacks the TrueCrypt/VeraCrypt corpus and describes its 93
// images.
func TCryptImages(t testing.TB) []TCryptImage {
	t.Helper()
	dir := filepath.Join(Unpack(t, "tcrypt-images.tar.xz"), "tcrypt-images")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kf := []string{filepath.Join(dir, "keyfile1"), filepath.Join(dir, "keyfile2")}
	var out []TCryptImage
	for _, e := range ents {
		n := e.Name()
		if n == "README" || strings.HasPrefix(n, "keyfile") {
			continue
		}
		kind, rest, _ := strings.Cut(n, "-")
		parts := strings.Split(rest, "-")
		im := TCryptImage{Path: filepath.Join(dir, n), Name: n, Hash: parts[0], Mode: parts[1], Password: TCryptPassword}
		cs := parts[2:]
		if cs[len(cs)-1] == "hidden" {
			im.Hidden = true
			cs = cs[:len(cs)-1]
		}
		im.Ciphers = cs
		switch {
		case strings.HasPrefix(kind, "sys_"):
			im.System = true
		case strings.HasPrefix(kind, "vcpim_"):
			f := strings.Split(kind, "_")
			im.PIM, _ = strconv.Atoi(f[len(f)-1])
			im.Password = TCryptPIMPassword
		case strings.HasPrefix(kind, "tck_"), strings.HasPrefix(kind, "vck_"):
			im.Keyfiles = kf
			switch {
			case strings.Contains(kind, "_nopw"):
				im.Password = ""
			case strings.Contains(kind, "_pw72"):
				im.Password = TCryptPassword72
			}
		}
		out = append(out, im)
	}
	if len(out) != 93 {
		t.Fatalf("corpus has %d TrueCrypt/VeraCrypt images, want 93", len(out))
	}
	return out
}

// Slow reports whether opening the image needs a very large Argon2id run
// (PIM 33: 1 GiB, 15 passes).
func (im TCryptImage) Slow() bool { return im.Hash == "argon2id" && im.PIM >= 30 }

// RawZeroAt reports whether the 512 bytes at off in the image file are all
// zero: real ciphertext never is, so such a data area was wiped by the
// corpus makers and cannot hold the filesystem the README promises.
func RawZeroAt(t testing.TB, path string, off int64) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 512)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatalf("reading the raw data area: %v", err)
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
