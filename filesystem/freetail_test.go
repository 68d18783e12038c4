package filesystem_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// TestFreeTailExt4AgainstDumpe2fs: the free run FreeTail finds at the end
// of ext4 images made by mkfs.ext4 -d (files in them; 1 KiB and 4 KiB
// blocks, block groups with and without a superblock backup last, and
// with uninitialised block bitmaps) starts where dumpe2fs's last group's
// last free range starts, when that range reaches the last block.
func TestFreeTailExt4AgainstDumpe2fs(t *testing.T) {
	needTool(t, "mkfs.ext4", "dumpe2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	for i, n := range []int{300 << 10, 2 << 20, 5000} {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), make([]byte, n), 0o644)
	}
	for _, c := range []struct {
		size int64
		args []string
	}{{32 << 20, nil}, {56 << 20, nil}, {200 << 20, []string{"-b", "4096"}}, {48 << 20, []string{"-O", "^flex_bg"}}} {
		img := filepath.Join(dir, fmt.Sprintf("e%d.img", c.size))
		f, _ := os.Create(img)
		f.Truncate(c.size)
		f.Close()
		run(t, "mkfs.ext4", append(append([]string{"-q", "-F", "-d", src}, c.args...), img)...)
		want := dumpe2fsTail(t, img)
		start, end, err := filesystem.FreeTail(openImage(t, img), c.size)
		if err != nil {
			t.Fatalf("%d MiB %v: %v", c.size>>20, c.args, err)
		}
		if start != want || end != c.size {
			t.Errorf("%d MiB %v: free tail [%d, %d), dumpe2fs says from %d to %d", c.size>>20, c.args, start, end, want, c.size)
		}
		t.Logf("%d MiB %v: the last %d bytes are free", c.size>>20, c.args, end-start)
	}
}

// dumpe2fsTail is the byte offset where the free blocks at the end of the
// filesystem begin, as dumpe2fs lists them group by group (merged across
// groups wholly free); the end of the filesystem when its last block is
// in use.
func dumpe2fsTail(t *testing.T, img string) int64 {
	t.Helper()
	out := run(t, "dumpe2fs", img)
	m := regexp.MustCompile(`(?m)^Block size:\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("dumpe2fs: no block size")
	}
	bs, _ := strconv.ParseInt(m[1], 10, 64)
	groupRe := regexp.MustCompile(`^\d+: \(Blocks (\d+)-(\d+)\)`)
	freeRe := regexp.MustCompile(`(?m)^\s+Free blocks: (.*)$`)
	groups := strings.Split(out, "\nGroup ")[1:]
	tail := int64(-1) // first block of the free run at the end
	for g := len(groups) - 1; g >= 0; g-- {
		gm := groupRe.FindStringSubmatch(groups[g])
		fm := freeRe.FindStringSubmatch(groups[g])
		if gm == nil || fm == nil {
			t.Fatalf("dumpe2fs: group %d unreadable", g)
		}
		first, _ := strconv.ParseInt(gm[1], 10, 64)
		last, _ := strconv.ParseInt(gm[2], 10, 64)
		if tail < 0 {
			tail = last + 1
		}
		ranges := strings.Split(strings.TrimSpace(fm[1]), ", ")
		r := ranges[len(ranges)-1]
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		l, lerr := strconv.ParseInt(lo, 10, 64)
		h, herr := strconv.ParseInt(hi, 10, 64)
		if lerr != nil || herr != nil || h != last {
			break // this group's last block is in use
		}
		tail = l
		if l != first {
			break // used blocks earlier in this group
		}
	}
	return tail * bs
}

// TestFreeTailNTFSAgainstNtfscluster: in NTFS images made by mkntfs, no
// file (system files included) has a cluster in the free tail FreeTail
// finds, and the cluster just before it belongs to one, as ntfscluster
// reads $MFT; the tail ends at the backup boot sector.
func TestFreeTailNTFSAgainstNtfscluster(t *testing.T) {
	needTool(t, "mkntfs", "ntfscluster")
	dir := t.TempDir()
	for _, c := range []struct {
		size    int64
		cluster string
	}{{32 << 20, "4096"}, {100 << 20, "1024"}, {64 << 20, "65536"}} {
		img := filepath.Join(dir, fmt.Sprintf("n%d.img", c.size))
		f, _ := os.Create(img)
		f.Truncate(c.size)
		f.Close()
		run(t, "mkntfs", "-q", "-F", "-f", "-c", c.cluster, img)
		start, end, err := filesystem.FreeTail(openImage(t, img), c.size)
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := strconv.ParseInt(c.cluster, 10, 64)
		lastCluster := end/cs - 1 // the last whole cluster before the backup boot sector
		if got := run(t, "ntfscluster", "-f", "-c", fmt.Sprintf("%d-%d", start/cs, lastCluster), img); !strings.Contains(got, "0 inodes found") && strings.Contains(got, "Inode ") {
			t.Errorf("%d MiB, %s-byte clusters: ntfscluster finds files in the free tail from cluster %d:\n%s", c.size>>20, c.cluster, start/cs, got)
		}
		if got := run(t, "ntfscluster", "-f", "-c", fmt.Sprintf("%d-%d", start/cs-1, start/cs-1), img); !strings.Contains(got, "Inode ") {
			t.Errorf("%d MiB: cluster %d, just before the free tail, belongs to no file:\n%s", c.size>>20, start/cs-1, got)
		}
		boot := make([]byte, 11)
		f, _ = os.Open(img)
		f.ReadAt(boot, end)
		f.Close()
		if string(boot[3:]) != "NTFS    " {
			t.Errorf("%d MiB: no backup boot sector at the tail's end %d", c.size>>20, end)
		}
		t.Logf("%d MiB, %s-byte clusters: bytes %d to %d free (%.0f%% of the volume)", c.size>>20, c.cluster, start, end, float64(end-start)*100/float64(c.size))
	}
}
