package fat

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/fat12"
	"github.com/diskfs/go-diskfs/filesystem/fat16"
	"github.com/diskfs/go-diskfs/filesystem/fat32"
)

// go-diskfs (v1.9.4) is kept as an independent reader: EVALUATION.md says
// why it is not used for writing. Its long-name decoder is UCS-2 only and
// its FAT32 reader refuses FAT copies that differ, so these tests use
// names inside the BMP and also prove the copies are equal.

func diskfsRead(t *testing.T, f *os.File, size int64, typ Type) filesystem.FileSystem {
	t.Helper()
	b := file.New(f, true)
	var fs filesystem.FileSystem
	var err error
	switch typ {
	case FAT12:
		fs, err = fat12.Read(b, size, 0, 512)
	case FAT16:
		fs, err = fat16.Read(b, size, 0, 512)
	default:
		fs, err = fat32.Read(b, size, 0, 512)
	}
	if err != nil {
		t.Fatalf("go-diskfs cannot read our %v image: %v", typ, err)
	}
	return fs
}

// TestDiskfsReadsWhatWeWrite writes a tree through the API on FAT12, FAT16
// and FAT32 and reads it back with go-diskfs.
func TestDiskfsReadsWhatWeWrite(t *testing.T) {
	for _, c := range []struct {
		size int64
		typ  Type
	}{{1 << 20, FAT12}, {20 << 20, FAT16}, {100 << 20, FAT32}} {
		t.Run(c.typ.String(), func(t *testing.T) {
			_, f := image(t, c.size)
			mustFormat(t, f, c.size, FormatOptions{Type: c.typ})
			fs := mustOpen(t, f, c.size)
			want := map[string][]byte{}
			names := []string{"plain.txt", "Long name with spaces.bin", "Привет мир.txt", "日本語.dat", "UPPER.TXT"}
			if err := fs.MkdirAll("/sub/deeper"); err != nil {
				t.Fatal(err)
			}
			for i, n := range names {
				want["/"+n] = pattern(i, 300*i+17)
				want["/sub/deeper/"+n] = pattern(i+10, 5000*i+1)
			}
			for i := 0; i < 40; i++ {
				want[fmt.Sprintf("/sub/entry %02d with a long name.txt", i)] = pattern(i+100, i*37)
			}
			for n, b := range want {
				mustWrite(t, fs, n, b)
			}
			// Churn: removals and renames leave deleted slots and freed
			// clusters behind, which the reader must skip.
			for i := 0; i < 40; i += 3 {
				n := fmt.Sprintf("/sub/entry %02d with a long name.txt", i)
				if err := fs.Remove(n); err != nil {
					t.Fatal(err)
				}
				delete(want, n)
			}
			if err := fs.Rename("/plain.txt", "/sub/renamed plain.txt"); err != nil {
				t.Fatal(err)
			}
			want["/sub/renamed plain.txt"] = want["/plain.txt"]
			delete(want, "/plain.txt")
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}

			dfs := diskfsRead(t, f, c.size, c.typ)
			for n, b := range want {
				df, err := dfs.OpenFile(n, os.O_RDONLY)
				if err != nil {
					t.Errorf("go-diskfs open %s: %v", n, err)
					continue
				}
				// One Read from offset 0 with room to spare: go-diskfs's Read
				// returns bytes past the end of the file when a read starts
				// inside a cluster (EVALUATION.md), so no io.ReadAll here.
				buf := make([]byte, len(b)+4096)
				k, err := df.Read(buf)
				if err != nil && err != io.EOF {
					t.Errorf("go-diskfs read %s: %v", n, err)
				}
				if got := buf[:k]; !bytes.Equal(got, b) {
					t.Errorf("go-diskfs reads %d bytes of %s, want %d", len(got), n, len(b))
				}
			}
			// Directory listings agree too (go-diskfs wants io/fs paths).
			for _, dir := range []string{"sub", "sub/deeper"} {
				ents, err := dfs.ReadDir(dir)
				if err != nil {
					t.Fatalf("go-diskfs ReadDir(%s): %v", dir, err)
				}
				var got, exp []string
				for _, e := range ents {
					got = append(got, e.Name())
				}
				for n := range want {
					if rest, ok := strings.CutPrefix(n, "/"+dir+"/"); ok && !strings.Contains(rest, "/") {
						exp = append(exp, rest)
					}
				}
				if dir == "sub" {
					exp = append(exp, "deeper")
				}
				sort.Strings(got)
				sort.Strings(exp)
				if strings.Join(got, "|") != strings.Join(exp, "|") {
					t.Errorf("%s:\n go-diskfs %q\n want     %q", dir, got, exp)
				}
			}
		})
	}
}

// TestWeReadWhatDiskfsWrites has go-diskfs write ASCII names (the part of
// its writer EVALUATION.md found correct) and reads them here.
func TestWeReadWhatDiskfsWrites(t *testing.T) {
	size := int64(100 << 20)
	_, f := image(t, size)
	dfs, err := fat32.Create(file.New(f, false), size, 0, 512, "DISKFS", false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	if err := dfs.Mkdir("/dir"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("/dir/written by go-diskfs %d.txt", i)
		want[n] = pattern(i, 1000*i+5)
		df, err := dfs.OpenFile(n, os.O_CREATE|os.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := df.Write(want[n]); err != nil {
			t.Fatal(err)
		}
		df.Close()
	}
	fs := mustOpen(t, f, size)
	for n, b := range want {
		if got := mustRead(t, fs, n); !bytes.Equal(got, b) {
			t.Errorf("%s differs", n)
		}
	}
	if fs.Label() != "DISKFS" {
		t.Errorf("label %q", fs.Label())
	}
}
