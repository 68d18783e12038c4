package selftest

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// record is one vector: "field = value" lines, ended by a blank line.
type record struct {
	line   int // line number of its first field
	fields map[string]string
}

// parseRecords reads the vector file format: '#' starts a comment line,
// blank lines separate records, each other line is "field = value".
func parseRecords(text string) ([]record, error) {
	var out []record
	cur := record{}
	flush := func() {
		if cur.fields != nil {
			out = append(out, cur)
		}
		cur = record{}
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			flush()
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"field = value\", got %q", i+1, line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if cur.fields == nil {
			cur = record{line: i + 1, fields: map[string]string{}}
		}
		if _, dup := cur.fields[k]; dup {
			return nil, fmt.Errorf("line %d: field %q repeated", i+1, k)
		}
		cur.fields[k] = v
	}
	flush()
	return out, nil
}

func (r record) has(k string) bool { _, ok := r.fields[k]; return ok }

func (r record) get(k string) string { return r.fields[k] }

// label names the vector in messages.
func (r record) label() string {
	if n := r.get("name"); n != "" {
		return n
	}
	return fmt.Sprintf("vector at line %d", r.line)
}

// text returns a required text field.
func (r record) text(k string) (string, error) {
	v, ok := r.fields[k]
	if !ok {
		return "", fmt.Errorf("field %q missing", k)
	}
	return v, nil
}

// bytes decodes a required hex field; "seq:N" stands for the N-byte
// counting sequence 00 01 ... ff 00 01 ... of the IEEE 1619 vectors.
func (r record) bytes(k string) ([]byte, error) {
	v, err := r.text(k)
	if err != nil {
		return nil, err
	}
	if n, ok := strings.CutPrefix(v, "seq:"); ok {
		size, err := strconv.Atoi(n)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("field %q: bad sequence length %q", k, n)
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i)
		}
		return b, nil
	}
	b, err := hex.DecodeString(strings.ReplaceAll(v, " ", ""))
	if err != nil {
		return nil, fmt.Errorf("field %q: %v", k, err)
	}
	return b, nil
}

// int decodes a required decimal field.
func (r record) int(k string) (int, error) {
	v, err := r.text(k)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("field %q: %v", k, err)
	}
	return n, nil
}

// mismatch describes a wrong answer on one line: the first differing
// byte and up to 16 bytes from there.
func mismatch(what string, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s gives %d bytes, want %d", what, len(got), len(want))
	}
	at := 0
	for at < len(got) && got[at] == want[at] {
		at++
	}
	end := min(at+16, len(got))
	return fmt.Errorf("%s differs at byte %d: got %x, want %x", what, at, got[at:end], want[at:end])
}
