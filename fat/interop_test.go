package fat

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
// fattest.InteropNames), the longest of them 206 UTF-16 units.
var interopNames = fattest.InteropNames("x" + strings.Repeat("y", 200) + ".long")

// mtools 4.0.32 (like fsck.fat 4.2) handles long names as UCS-2: it shows
// each half of a surrogate pair as '_' and, when it writes a name, keeps
// only the low 16 bits of a character outside the BMP (U+1F600 becomes
// U+F600). So for the emoji name the oracle checks are: mdir shows exactly
// two units for the emoji (a surrogate pair, not one truncated unit), the
// content is read back through the short name, and what mtools writes is
// read here as the U+F600 it stored. TestLFNSurrogatePairBytes checks the
// on-disk bytes against UTF-16 itself.
const emojiName = "emoji 😀 file.txt"

const emojiAsMdirShowsIt = "emoji __ file.txt"

// jst is a fixed zone far from UTC, so that a timestamp stored in the
// wrong zone cannot pass; mtools gets it as TZ=JST-9.
var jst = time.FixedZone("JST", 9*3600)

var interopSizes = []int64{300 << 10, 10 << 20, 100 << 20, 1 << 30}

// TestWrittenHereReadByMtools writes files through the API on each of the
// four acceptance sizes, then checks the image with fsck.fat -n, lists it
// with mdir and reads every file back with mcopy.
func TestWrittenHereReadByMtools(t *testing.T) {
	needTools(t, "fsck.fat", "mdir", "mcopy")
	stamp := time.Date(2021, 3, 4, 5, 6, 8, 0, jst)
	for _, size := range interopSizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			img, f := image(t, size)
			mustFormat(t, f, size, FormatOptions{Label: "INTEROP"})
			fs, err := OpenWithOptions(f, size, Options{Location: jst})
			if err != nil {
				t.Fatal(err)
			}
			want := fattest.WriteInteropTree(t, fs, interopNames, 70000, 60, stamp)
			fsckClean(t, img)

			// mdir -b lists one path per line, long names where they exist.
			out, err := runTool(t, nil, "mdir", "-b", "-i", img, "::/")
			if err != nil {
				t.Fatalf("mdir: %v\n%s", err, out)
			}
			listed := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				listed[strings.TrimSuffix(strings.TrimPrefix(l, "::/"), "/")] = true
			}
			for _, n := range append(interopNames, "dir", "empty") {
				if n == emojiName {
					n = emojiAsMdirShowsIt
				}
				if !listed[n] {
					t.Errorf("mdir does not list %q:\n%s", n, out)
				}
			}
			if len(listed) != len(interopNames)+2 {
				t.Errorf("mdir lists %d entries, want %d:\n%s", len(listed), len(interopNames)+2, out)
			}
			for n, b := range want {
				if n == "/"+emojiName {
					n = "/EMOJI_~1.TXT"
				}
				got, err := runTool(t, nil, "mcopy", "-n", "-i", img, "::"+n, "-")
				if err != nil {
					t.Errorf("mcopy %s: %v: %s", n, err, got)
					continue
				}
				if !bytes.Equal([]byte(got), b) {
					t.Errorf("mcopy %s: %d bytes differ from the %d written", n, len(got), len(b))
				}
			}
			// mcopy -m gives the host copy the stored time; with TZ=JST-9
			// it must be the instant we set.
			host := filepath.Join(t.TempDir(), "hello.txt")
			if out, err := runTool(t, []string{"TZ=JST-9"}, "mcopy", "-m", "-n", "-i", img, "::/hello.txt", host); err != nil {
				t.Fatalf("mcopy -m: %v %s", err, out)
			}
			st, err := os.Stat(host)
			if err != nil {
				t.Fatal(err)
			}
			if !st.ModTime().Equal(stamp) {
				t.Errorf("mtools sees modification time %v, want %v", st.ModTime(), stamp)
			}
		})
	}
}

// TestWrittenByMtoolsReadHere has mtools (mmd, mcopy -m) fill images made
// by mkfs.fat, then reads names, contents and times through the API.
func TestWrittenByMtoolsReadHere(t *testing.T) {
	needTools(t, "mkfs.fat", "mmd", "mcopy", "fsck.fat")
	src := t.TempDir()
	stamp := time.Date(2019, 12, 31, 23, 58, 10, 0, jst)
	want := map[string][]byte{}
	for i, n := range interopNames {
		p := filepath.Join(src, n)
		b := pattern(i+50, 777*i+3)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
		want[n] = b
	}
	for _, size := range interopSizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			img, f := image(t, size)
			if out, err := runTool(t, nil, "mkfs.fat", img); err != nil {
				t.Fatalf("mkfs.fat: %v %s", err, out)
			}
			env := []string{"TZ=JST-9"}
			if out, err := runTool(t, env, "mmd", "-i", img, "::/from mtools", "::/from mtools/Ещё"); err != nil {
				t.Fatalf("mmd: %v %s", err, out)
			}
			for n := range want {
				if out, err := runTool(t, env, "mcopy", "-m", "-i", img, filepath.Join(src, n), "::/from mtools/Ещё/"+n); err != nil {
					t.Fatalf("mcopy %s: %v %s", n, err, out)
				}
			}
			fs, err := OpenWithOptions(f, size, Options{Location: jst})
			if err != nil {
				t.Fatal(err)
			}
			ents, err := fs.ReadDir("/from mtools/ещё")
			if err != nil {
				t.Fatal(err)
			}
			var names, wantNames []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			for n := range want {
				if n == emojiName {
					n = strings.ReplaceAll(emojiName, "😀", "\uf600")
				}
				wantNames = append(wantNames, n)
			}
			sort.Strings(wantNames)
			if strings.Join(names, "|") != strings.Join(wantNames, "|") {
				t.Errorf("names\n got %q\nwant %q", names, wantNames)
			}
			for n, b := range want {
				if n == emojiName {
					n = strings.ReplaceAll(emojiName, "😀", "\uf600")
				}
				p := "/from mtools/Ещё/" + n
				if got := mustRead(t, fs, p); !bytes.Equal(got, b) {
					t.Errorf("%s: content differs", n)
				}
				fi, err := fs.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if !fi.ModTime().Equal(stamp) {
					t.Errorf("%s: modification time %v, want %v", n, fi.ModTime(), stamp)
				}
			}
			r, err := fs.Check(false)
			if err != nil || !r.Clean() {
				t.Errorf("Check of an mtools image: %v\n%s", err, r)
			}
			// And change it: the result must still satisfy fsck.fat.
			if err := fs.Rename("/from mtools/Ещё/"+interopNames[4], "/moved.txt"); err != nil {
				t.Fatal(err)
			}
			if err := fs.RemoveAll("/from mtools"); err != nil {
				t.Fatal(err)
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fsckClean(t, img)
			got, err := runTool(t, nil, "mcopy", "-n", "-i", img, "::/moved.txt", "-")
			if err != nil || got != string(want[interopNames[4]]) {
				t.Errorf("moved file through mcopy: %v", err)
			}
		})
	}
}
