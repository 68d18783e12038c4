package serpent

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// nessieVector is one record of a NESSIE test-vector file.
type nessieVector struct {
	name               string
	key, plain, cipher []byte
	iter100, iter1000  []byte
}

// parseNessie reads the NESSIE layout: "Set s, vector# v:" followed by
// indented "name=hex" lines, where a line of only hex continues the key.
func parseNessie(t *testing.T, path string) []nessieVector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []nessieVector
	var cur *nessieVector
	last := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "Set ") && strings.HasSuffix(line, ":") {
			out = append(out, nessieVector{name: strings.TrimSuffix(line, ":")})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil || line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			if last == "key" && isHex(line) {
				cur.key = append(cur.key, mustHex(t, line)...)
			}
			continue
		}
		last = name
		switch name {
		case "key":
			cur.key = mustHex(t, value)
		case "plain":
			cur.plain = mustHex(t, value)
		case "cipher":
			cur.cipher = mustHex(t, value)
		case "Iterated 100 times":
			cur.iter100 = mustHex(t, value)
		case "Iterated 1000 times":
			cur.iter1000 = mustHex(t, value)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, v := range out {
		if len(v.plain) != 16 || len(v.cipher) != 16 || len(v.key) == 0 {
			t.Fatalf("%s: incomplete record %s", path, v.name)
		}
	}
	return out
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseBotanVec reads Botan's "Key = / In = / Out =" layout.
func parseBotanVec(t *testing.T, path string) []nessieVector {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []nessieVector
	var cur nessieVector
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		switch name {
		case "Key":
			cur = nessieVector{name: "botan " + value[:8], key: mustHex(t, value)}
		case "In":
			cur.plain = mustHex(t, value)
		case "Out":
			cur.cipher = mustHex(t, value)
			out = append(out, cur)
		}
	}
	return out
}

// repeat returns n copies of block.
func repeat(block []byte, n int) []byte { return bytes.Repeat(block, n) }

// checkVector runs one known answer through the current path, as a single
// block and as 27 copies (a 16-block group, an 8-block group and a tail).
func checkVector(t *testing.T, v nessieVector) {
	t.Helper()
	c, err := New(v.key)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 27} {
		got := make([]byte, 16*n)
		c.EncryptBlocks(got, repeat(v.plain, n))
		if !bytes.Equal(got, repeat(v.cipher, n)) {
			t.Fatalf("%s key %x: encrypt %d blocks: got %x want %x", v.name, v.key, n, got[:16], v.cipher)
		}
		c.DecryptBlocks(got, got)
		if !bytes.Equal(got, repeat(v.plain, n)) {
			t.Fatalf("%s key %x: decrypt %d blocks: got %x want %x", v.name, v.key, n, got[:16], v.plain)
		}
	}
	// Iterated encryptions, 16 identical lanes so the vector paths run them.
	buf := repeat(v.plain, 16)
	for i := 1; i <= 1000; i++ {
		if i > 100 && v.iter1000 == nil {
			break
		}
		c.EncryptBlocks(buf, buf)
		if i == 100 && v.iter100 != nil && !bytes.Equal(buf, repeat(v.iter100, 16)) {
			t.Fatalf("%s: iterated 100 times: got %x want %x", v.name, buf[:16], v.iter100)
		}
		if i == 1000 && !bytes.Equal(buf, repeat(v.iter1000, 16)) {
			t.Fatalf("%s: iterated 1000 times: got %x want %x", v.name, buf[:16], v.iter1000)
		}
	}
}

// forEachImpl runs f once per code path this machine supports.
func forEachImpl(t *testing.T, f func(t *testing.T)) {
	saved := impl
	defer func() { impl = saved }()
	for _, i := range available() {
		impl = i
		t.Run(i.name(), f)
	}
}

func TestNESSIE(t *testing.T) {
	files := map[string]int{
		"testdata/nessie-serpent-128-128.txt": 514,
		"testdata/nessie-serpent-256-128.txt": 642,
		"testdata/nessie-excerpts.txt":        6,
	}
	forEachImpl(t, func(t *testing.T) {
		for path, count := range files {
			vs := parseNessie(t, path)
			if len(vs) != count {
				t.Fatalf("%s: parsed %d vectors, want %d", path, len(vs), count)
			}
			for _, v := range vs {
				checkVector(t, v)
			}
		}
	})
}

func TestBotanVectors(t *testing.T) {
	vs := parseBotanVec(t, "testdata/botan-serpent.vec")
	if len(vs) != 24 {
		t.Fatalf("parsed %d vectors, want 24", len(vs))
	}
	forEachImpl(t, func(t *testing.T) {
		for _, v := range vs {
			checkVector(t, v)
		}
	})
}
