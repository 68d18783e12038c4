package fattest

import (
	"fmt"
	iofs "io/fs"
	"testing"
	"time"
)

// InteropNames are the names the interop tests write in both directions
// (here and through the external tools): ASCII, upper, mixed case, long,
// Cyrillic, Japanese, an emoji (a UTF-16 surrogate pair), dots, double
// spaces, and last the package's own longest name.
func InteropNames(longest string) []string {
	return []string{
		"hello.txt",
		"UPPER.TXT",
		"MixedCase.Txt",
		"Long file name here.txt",
		"Привет мир.txt",
		"日本語のファイル名.dat",
		"emoji 😀 file.txt",
		"a.b.c.d",
		"name with  two  spaces",
		longest,
	}
}

// WriteInteropTree writes the tree the interop tests hand to the external
// readers and closes fsys: each of names at the root (the i-th with
// 1000*i+1 bytes), an empty file, a nested file of nested bytes under
// "/dir/sub dir", and dirFiles small files in /dir (enough to make it span
// several clusters); /hello.txt gets stamp as its times. It returns the
// files by path.
func WriteInteropTree(t *testing.T, fsys interface {
	MkdirAll(name string) error
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	Chtimes(name string, atime, mtime time.Time) error
	Close() error
}, names []string, nested, dirFiles int, stamp time.Time) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	for i, n := range names {
		want["/"+n] = Pattern(i, 1000*i+1)
	}
	want["/empty"] = nil
	if err := fsys.MkdirAll("/dir/sub dir"); err != nil {
		t.Fatal(err)
	}
	want["/dir/sub dir/nested file.bin"] = Pattern(99, nested)
	for i := 0; i < dirFiles; i++ {
		want[fmt.Sprintf("/dir/file number %03d.txt", i)] = Pattern(1000+i, 100+i)
	}
	for n, b := range want {
		MustWrite(t, fsys, n, b)
	}
	if err := fsys.Chtimes("/hello.txt", stamp, stamp); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}
