package exfat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// interopNames are the names written in both directions (see
// fattest.InteropNames), the longest of them the full 255 UTF-16 units.
var interopNames = fattest.InteropNames("x" + strings.Repeat("y", 249) + ".long")

var jst = time.FixedZone("JST", 9*3600)

var interopSizes = []int64{8 << 20, 100 << 20, 1 << 30}

// TestWrittenHereReadByExfatFuse writes files through the API, checks the
// image with fsck.exfat -n, and reads every name, content and time back
// through exfat-fuse.
func TestWrittenHereReadByExfatFuse(t *testing.T) {
	needTools(t, "fsck.exfat")
	stamp := time.Date(2021, 3, 4, 5, 6, 8, 0, jst)
	for _, size := range interopSizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			img, f := image(t, size)
			mustFormat(t, f, size, FormatOptions{Label: "Interop ✓"})
			fs, err := OpenWithOptions(f, size, Options{Location: jst})
			if err != nil {
				t.Fatal(err)
			}
			want := fattest.WriteInteropTree(t, fs, interopNames, 700000, 400, stamp)
			fsckClean(t, img)
			mnt := fuseMount(t, img, true)
			checkTree(t, mnt, want, []string{"/dir", "/dir/sub dir"})
			st, err := os.Stat(filepath.Join(mnt, "hello.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !st.ModTime().Equal(stamp) {
				t.Errorf("exfat-fuse sees modification time %v, want %v", st.ModTime(), stamp)
			}
		})
	}
}

// checkTree compares the tree under root (a host directory) with want
// (files by path) and dirs: every file's content, and that nothing else is
// there.
func checkTree(t *testing.T, root string, want map[string][]byte, dirs []string) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, root))
		rel = "/" + strings.TrimLeft(rel, "/")
		if rel == "/" {
			return nil
		}
		if fi.IsDir() {
			seen[rel] = true
			return nil
		}
		b, ok := want[rel]
		if !ok {
			t.Errorf("unexpected file %s", rel)
			return nil
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", rel, err)
		} else if !bytes.Equal(got, b) {
			t.Errorf("%s: %d bytes differ from the %d written", rel, len(got), len(b))
		}
		seen[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("%s is missing", p)
		}
	}
	for _, d := range dirs {
		if !seen[d] {
			t.Errorf("directory %s is missing", d)
		}
	}
}

// TestWrittenByExfatFuseReadHere has exfat-fuse fill images made by
// mkfs.exfat, then reads names, contents and times through the API,
// changes the volume here and has fsck.exfat and exfat-fuse check the
// result.
func TestWrittenByExfatFuseReadHere(t *testing.T) {
	needTools(t, "mkfs.exfat", "fsck.exfat")
	stamp := time.Date(2019, 12, 31, 23, 58, 10, 0, jst)
	for _, size := range interopSizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			img, f := image(t, size)
			if out, err := runTool(t, nil, "mkfs.exfat", "-L", "FUSE", img); err != nil {
				t.Fatalf("mkfs.exfat: %v %s", err, out)
			}
			mnt := fuseMount(t, img, false)
			want := map[string][]byte{}
			base := filepath.Join(mnt, "from fuse", "Ещё")
			if err := os.MkdirAll(base, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, n := range interopNames {
				b := pattern(i+50, 777*i+3)
				if err := os.WriteFile(filepath.Join(base, n), b, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(filepath.Join(base, n), stamp, stamp); err != nil {
					t.Fatal(err)
				}
				want["/from fuse/Ещё/"+n] = b
			}
			for i := 0; i < 300; i++ {
				n := fmt.Sprintf("/many/f%04d", i)
				if i == 0 {
					os.Mkdir(filepath.Join(mnt, "many"), 0o755)
				}
				want[n] = pattern(i, 10*i)
				if err := os.WriteFile(filepath.Join(mnt, n), want[n], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want["/big.bin"] = pattern(5, 3<<20+17)
			if err := os.WriteFile(filepath.Join(mnt, "big.bin"), want["/big.bin"], 0o644); err != nil {
				t.Fatal(err)
			}
			fuseUnmount(t, mnt)
			fsckClean(t, img)

			fs, err := OpenWithOptions(f, size, Options{Location: jst})
			if err != nil {
				t.Fatal(err)
			}
			if fs.Label() != "FUSE" {
				t.Errorf("label %q", fs.Label())
			}
			ents, err := fs.ReadDir("/FROM FUSE/ещё")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			wantNames := append([]string(nil), interopNames...)
			sort.Strings(wantNames)
			if strings.Join(names, "|") != strings.Join(wantNames, "|") {
				t.Errorf("names\n got %q\nwant %q", names, wantNames)
			}
			for p, b := range want {
				if got := mustRead(t, fs, p); !bytes.Equal(got, b) {
					t.Errorf("%s: content differs", p)
				}
			}
			fi, err := fs.Stat("/from fuse/Ещё/hello.txt")
			if err != nil {
				t.Fatal(err)
			}
			if !fi.ModTime().Equal(stamp) {
				t.Errorf("modification time %v, want %v", fi.ModTime(), stamp)
			}
			if r, err := fs.Check(false); err != nil || !r.Clean() {
				t.Errorf("Check of an exfat-fuse image: %v\n%s", err, r)
			}
			// Change it here: rename over a file, remove a tree, add.
			if err := fs.Rename("/from fuse/Ещё/"+interopNames[4], "/big.bin"); err != nil {
				t.Fatal(err)
			}
			want["/big.bin"] = want["/from fuse/Ещё/"+interopNames[4]]
			if err := fs.RemoveAll("/from fuse"); err != nil {
				t.Fatal(err)
			}
			for p := range want {
				if strings.HasPrefix(p, "/from fuse/") {
					delete(want, p)
				}
			}
			want["/many/added here.txt"] = pattern(77, 12345)
			mustWrite(t, fs, "/many/added here.txt", want["/many/added here.txt"])
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fsckClean(t, img)
			mnt = fuseMount(t, img, true)
			checkTree(t, mnt, want, []string{"/many"})
		})
	}
}
