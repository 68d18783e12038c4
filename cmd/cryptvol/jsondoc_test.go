package main

import (
	"github.com/cryptvol/cryptvol/filesystem"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/archive/archivebench"
	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/iobench"
	"github.com/cryptvol/cryptvol/bench/matrix"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/opensslenc/encbench"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// documentedJSON are the types whose JSON the command-line contract of
// docs/ARCHITECTURE.md ("JSON output") lists, by the name it gives them.
var documentedJSON = map[string]any{
	"volume.Info":             volume.Info{},
	"jsonEntry":               jsonEntry{},
	"filesystem.FATCheckJSON": filesystem.FATCheckJSON{},
	"luks.Header":             luks.Header{},
	"mount.Entry":             mount.Entry{},
	"unlockedJSON":            unlockedJSON{},
	"bench.Report":            bench.Report{},
	"iobench.Result":          iobench.Result{},
	"encbench.Report":         encbench.Report{},
	"archivebench.Result":     archivebench.Result{},
	"matrix.Row":              matrix.Row{},
}

// jsonFields lists the JSON names of t's fields, nested ones as
// "parent.child"; a type met again inside itself (fsck's after_repair) is
// not expanded again.
func jsonFields(t reflect.Type, prefix string, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(time.Time{}) || seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type, prefix, seen)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, prefix+name)
		out = append(out, jsonFields(f.Type, prefix+name+".", seen)...)
	}
	return out
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestJSONFieldsDocumented: for every --json output with a named type,
// docs/ARCHITECTURE.md lists exactly the JSON fields the type encodes, so
// a field added, renamed or removed in the code fails here until the
// contract says so.
func TestJSONFieldsDocumented(t *testing.T) {
	src, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "\n### JSON output\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no \"JSON output\" section")
	}
	rest, _, _ = strings.Cut(rest, "\n#")
	found := map[string]bool{}
	for _, line := range strings.Split(rest, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 3 {
			continue
		}
		m := backticked.FindStringSubmatch(cells[1])
		if m == nil {
			continue // an object built in place (df, matrix, compare)
		}
		v, ok := documentedJSON[m[1]]
		if !ok {
			t.Errorf("%s: the doc names type %s, which this test does not know", strings.TrimSpace(cells[0]), m[1])
			continue
		}
		found[m[1]] = true
		var doc []string
		for _, f := range backticked.FindAllStringSubmatch(cells[2], -1) {
			doc = append(doc, f[1])
		}
		code := jsonFields(reflect.TypeOf(v), "", map[reflect.Type]bool{})
		if strings.Join(doc, " ") != strings.Join(code, " ") {
			t.Errorf("%s (%s):\n doc  %v\n code %v", strings.TrimSpace(cells[0]), m[1], doc, code)
		}
	}
	for name := range documentedJSON {
		if !found[name] {
			t.Errorf("type %s is not in the JSON table of docs/ARCHITECTURE.md", name)
		}
	}
}
