package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// checksumFile is the name of the checksum list in the output directory.
const checksumFile = "SHA256SUMS"

// fileSHA256 returns the hex SHA-256 of the file at p.
func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeChecksums writes dir/SHA256SUMS for the named files in dir, in the
// format `sha256sum -c` reads: "<hex>  <name>" (two spaces: binary and
// text mode are the same thing everywhere but Windows, and the files are
// compared as bytes).
func writeChecksums(dir string, names []string) error {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return atomicfile.Write(filepath.Join(dir, checksumFile), atomicfile.Options{Perm: 0o644}, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}
