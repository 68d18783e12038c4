package adiantum

import (
	"bufio"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// record is one vector of a testdata file: its fields by name, and the
// comment line that names it in testmgr.h.
type record struct {
	name   string
	fields map[string][]byte
	rounds int
}

// readRecords reads a testdata file whose vectors each end with the field
// last.
func readRecords(t *testing.T, file, last string) []record {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	r := record{fields: map[string][]byte{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "# "); ok && strings.Contains(name, "_tv_template[") {
			r.name = name
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("%s: bad line %q", file, line)
		}
		if k == "rounds" {
			if r.rounds, err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := hex.DecodeString(v)
		if err != nil {
			t.Fatalf("%s: %s: %v", file, k, err)
		}
		r.fields[k] = b
		if k == last {
			out = append(out, r)
			r = record{fields: map[string][]byte{}}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// withNH runs f with NH on path impl.
func withNH(impl int, f func()) {
	saved := nhImpl
	nhImpl = impl
	defer func() { nhImpl = saved }()
	f()
}
