package fat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLFNSurrogatePairBytes checks the long-name slot of "😀" against
// UTF-16 as defined: U+1F600 is the pair D83D DE00, followed by a 0x0000
// terminator and 0xFFFF padding, all little-endian; the slot's first byte
// is 0x40|1, byte 11 the LFN attribute and byte 13 the checksum.
func TestLFNSurrogatePairBytes(t *testing.T) {
	var s shortName
	copy(s[:], "EMOJI   TXT")
	sum := lfnChecksum(s)
	got := make([]byte, 32)
	encodeLFN(got, "😀", sum)
	want := []byte{0x41,
		0x3D, 0xD8, 0x00, 0xDE, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, // units 1-5
		0x0F, 0x00, sum,
		0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // units 6-11
		0x00, 0x00,
		0xFF, 0xFF, 0xFF, 0xFF} // units 12-13
	if !bytes.Equal(got, want) {
		t.Fatalf("slot\n got %x\nwant %x", got, want)
	}
	// And it decodes back through a directory.
	d := &dirCache{fs: &FS{g: &geometry{typ: FAT16, bytesPerSector: 512}, fat: &fatTable{count: 100}}}
	d.data = make([]byte, 512)
	copy(d.data, got)
	copy(d.data[32:], s[:])
	d.data[32+11] = byte(AttrArchive)
	d.parse()
	if e := d.lookup("😀"); e == nil || e.name != "😀" {
		t.Fatalf("decoded entries: %v", d.byKey)
	}
}

// TestLFNChecksum checks the checksum by its definition (rotate right by
// one bit, add the next byte, over the 11 bytes of the short name) on a
// name where each step is easy to follow by hand: for "A" followed by ten
// spaces, the sum runs 0x41, 0xC0, 0x80, 0x60, 0x50, 0x48, 0x44, 0x42,
// 0x41, 0xC0, 0x80.
func TestLFNChecksum(t *testing.T) {
	var s shortName
	copy(s[:], "A          ")
	if got := lfnChecksum(s); got != 0x80 {
		t.Fatalf("checksum %#x, want 0x80", got)
	}
}

// TestShortNamesLikeMtools creates the same names, in the same order, with
// mcopy and through the API, and compares the short names generated.
func TestShortNamesLikeMtools(t *testing.T) {
	needTools(t, "mkfs.fat", "mcopy")
	names := []string{
		"readme.txt", "README.TXT2", "Long file name here.txt", "Long file name there.txt",
		"Long file name everywhere.txt", "a.b.c.d", "x.tar.gz", "noext", "Привет мир.txt",
		"Привет мир 2.txt", "spaces in name.doc", "UPPER.TXT", "lower.txt", "file+plus.txt",
		"[brackets].txt", "semi;colon.txt", "comma,name.txt", "equals=sign.txt",
		"verylongextension.abcdef", "12345678.123", "123456789.123", "ab.cdef",
	}
	src := t.TempDir()
	img, _ := image(t, 10<<20)
	if out, err := runTool(t, nil, "mkfs.fat", img); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, n := range names {
		p := filepath.Join(src, n)
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := runTool(t, nil, "mcopy", "-i", img, p, "::/"+n); err != nil {
			t.Fatalf("mcopy %q: %v %s", n, err, out)
		}
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	theirs, err := Open(f, 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := newMemDev(t, 10<<20)
	mustFormat(t, m, 10<<20, FormatOptions{})
	ours := mustOpen(t, m, 10<<20)
	for _, n := range names {
		mustWrite(t, ours, "/"+n, []byte(n))
		a, err := theirs.Stat("/" + n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ours.Stat("/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if a.ShortName() != b.ShortName() {
			t.Errorf("%q: mtools made %q, we made %q", n, a.ShortName(), b.ShortName())
		}
	}
}

// TestNameRules covers names that must be refused or handled specially.
func TestNameRules(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "a*b", "a?b", "con:x", "trailing.", "trailing ", "tab\tname", "pipe|x", strings.Repeat("x", 256)} {
		if err := checkName(bad); err == nil {
			t.Errorf("checkName(%q) accepted", bad)
		}
	}
	for _, good := range []string{"a", ".hidden", "a.b.c", "Привет", "😀", "name with space", strings.Repeat("x", 255), strings.Repeat("😀", 127)} {
		if err := checkName(good); err != nil {
			t.Errorf("checkName(%q): %v", good, err)
		}
	}
	if err := checkName(strings.Repeat("😀", 128)); err == nil {
		t.Error("256 UTF-16 units accepted")
	}
	// Case flags: 8.3 names in one case per part need no long name.
	for _, c := range []struct {
		name string
		nt   byte
		ok   bool
	}{
		{"readme.txt", ntLowerBase | ntLowerExt, true},
		{"README.txt", ntLowerExt, true},
		{"readme.TXT", ntLowerBase, true},
		{"ReadMe.txt", 0, false},
		{"toolongname.txt", 0, false},
		{"a.b.c", 0, false},
		{"a b.txt", 0, false},
	} {
		_, nt, ok := exactShortName(c.name)
		if ok != c.ok || nt != c.nt {
			t.Errorf("exactShortName(%q) = %#x, %v; want %#x, %v", c.name, nt, ok, c.nt, c.ok)
		}
	}
}

// TestShortNameTailsUnique creates many names with the same basis and
// checks every short name is distinct.
func TestShortNameTailsUnique(t *testing.T) {
	m := newMemDev(t, 10<<20)
	mustFormat(t, m, 10<<20, FormatOptions{})
	fs := mustOpen(t, m, 10<<20)
	if err := fs.Mkdir("/d"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for i := 0; i < 150; i++ {
		n := fmt.Sprintf("/d/Common prefix name %d.txt", i)
		mustWrite(t, fs, n, nil)
		fi, err := fs.Stat(n)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[fi.ShortName()]; dup {
			t.Fatalf("%s and %s share short name %s", prev, n, fi.ShortName())
		}
		seen[fi.ShortName()] = n
	}
}
