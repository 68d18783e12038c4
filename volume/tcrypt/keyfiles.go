package tcrypt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	poolSizeTrueCrypt = 64  // TrueCrypt, and VeraCrypt with passwords ≤ 64 bytes
	poolSizeVeraCrypt = 128 // VeraCrypt ≥ 1.26 when the password is longer than 64 bytes
	maxKeyfileBytes   = 1 << 20
)

// crcTable is the reflected CRC-32 (IEEE) table; the keyfile pool mixes the
// raw running CRC register, which hash/crc32 does not expose.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = 0xEDB88320 ^ c>>1
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

// applyKeyfile mixes one keyfile into pool the way TrueCrypt does: the CRC
// register after each of the file's first 1 MiB of bytes is added, as four
// big-endian bytes, into the pool at a cursor that wraps around.
func applyKeyfile(pool []byte, r io.Reader) error {
	buf := make([]byte, 64<<10)
	crc := ^uint32(0)
	j, total := 0, 0
	for total < maxKeyfileBytes {
		n, err := r.Read(buf[:min(len(buf), maxKeyfileBytes-total)])
		for _, b := range buf[:n] {
			crc = crcTable[byte(crc)^b] ^ crc>>8
			pool[j] += byte(crc >> 24)
			pool[j+1] += byte(crc >> 16)
			pool[j+2] += byte(crc >> 8)
			pool[j+3] += byte(crc)
			j = (j + 4) % len(pool)
		}
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	clear(buf)
	return nil
}

// expandKeyfiles turns the list of keyfile paths into files: a directory
// stands for every regular, non-hidden file directly inside it, in name
// order, as VeraCrypt treats keyfile "search paths".
func expandKeyfiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("keyfile: %w", err)
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("keyfile directory: %w", err)
		}
		var names []string
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("keyfile directory %s holds no files", p)
		}
		for _, n := range names {
			out = append(out, filepath.Join(p, n))
		}
	}
	return out, nil
}

// passwordInput builds the bytes the KDF receives from a password and
// keyfiles. Without keyfiles it is the password itself. With keyfiles it is
// the whole pool (64 bytes, or 128 for VeraCrypt passwords longer than 64
// bytes), each keyfile mixed in, then the password added bytewise.
func passwordInput(password []byte, keyfiles []string, veracrypt bool) ([]byte, error) {
	maxLen := poolSizeTrueCrypt
	if veracrypt && len(password) > poolSizeTrueCrypt {
		maxLen = poolSizeVeraCrypt
	}
	if len(password) > maxLen {
		return nil, fmt.Errorf("password is %d bytes; %s volumes take at most %d", len(password), map[bool]string{true: "VeraCrypt", false: "TrueCrypt"}[veracrypt], maxLen)
	}
	if len(keyfiles) == 0 {
		return append([]byte(nil), password...), nil
	}
	files, err := expandKeyfiles(keyfiles)
	if err != nil {
		return nil, err
	}
	pool := make([]byte, maxLen)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("keyfile: %w", err)
		}
		err = applyKeyfile(pool, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("keyfile %s: %w", name, err)
		}
	}
	for i, b := range password {
		pool[i] += b
	}
	return pool, nil
}
