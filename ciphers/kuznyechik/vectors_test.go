package kuznyechik

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vector is one record of a testdata file: named hex fields.
type vector struct {
	file string
	line int
	f    map[string][]byte
}

// readVectors parses testdata/name: "field = hex" lines, records separated by
// blank lines, "#" comments.
func readVectors(t *testing.T, name string) []vector {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []vector
	var cur *vector
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			cur = nil
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s:%d: no '=' in %q", name, n, line)
		}
		b, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		if cur == nil {
			out = append(out, vector{file: name, line: n, f: map[string][]byte{}})
			cur = &out[len(out)-1]
		}
		cur.f[strings.TrimSpace(k)] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return out
}
