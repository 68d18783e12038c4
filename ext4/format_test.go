package ext4

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dumpe2fsHeader returns the fields of dumpe2fs -h that describe what a
// filesystem is (not when or with which UUID it was made).
func dumpe2fsHeader(t *testing.T, img string) map[string]string {
	t.Helper()
	out, err := exec.Command(needTool(t, "dumpe2fs"), "-h", img).Output()
	if err != nil {
		t.Fatalf("dumpe2fs -h %s: %v", img, err)
	}
	keep := []string{"Filesystem features", "Filesystem flags", "Default mount options", "Filesystem state",
		"Errors behavior", "Inode count", "Block count", "Reserved block count", "Free blocks", "Free inodes",
		"First block", "Block size", "Fragment size", "Group descriptor size", "Reserved GDT blocks",
		"Blocks per group", "Inodes per group", "Inode blocks per group", "Flex block group size",
		"Maximum mount count", "Check interval", "First inode", "Inode size", "Required extra isize",
		"Desired extra isize", "Journal inode", "Default directory hash", "Journal backup", "Checksum type",
		"Journal features", "Total journal size", "Total journal blocks", "Max transaction length",
		"Journal sequence", "Journal start", "Filesystem revision #", "Reserved blocks uid", "Reserved blocks gid"}
	fields := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, want := range keep {
			if k == want {
				fields[k] = strings.TrimSpace(v)
			}
		}
	}
	return fields
}

// TestFormatMatchesMkfs formats images of sizes from 1 MiB to 2 GiB and
// compares them with what mkfs.ext4 makes for the same size (dumpe2fs -h:
// features, counts, free blocks and inodes, journal), then checks them
// with e2fsck -fn and the kernel, and writes into them.
func TestFormatMatchesMkfs(t *testing.T) {
	sizes := []int64{1 << 20, 3 << 20, 8 << 20, 64 << 20, 300 << 20, 600 << 20, 1 << 30, 2 << 30}
	if !*longRun {
		sizes = []int64{1 << 20, 8 << 20, 64 << 20, 600 << 20, 2 << 30}
	}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("%dM", size>>20), func(t *testing.T) {
			ref := mkfsImage(t, size, "")
			img := filepath.Join(t.TempDir(), "ours.img")
			f, err := os.Create(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			if err := Format(f, size, FormatOptions{Label: "cryptvol"}); err != nil {
				t.Fatal(err)
			}
			f.Close()
			want, got := dumpe2fsHeader(t, ref), dumpe2fsHeader(t, img)
			if len(want) < 25 {
				t.Fatalf("only %d dumpe2fs fields read: %v", len(want), want)
			}
			t.Logf("%d fields equal; features %s; %s blocks of %s, %s inodes, %s free blocks, journal %q",
				len(want), got["Filesystem features"], got["Block count"], got["Block size"], got["Inode count"], got["Free blocks"], got["Total journal size"])
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %q, mkfs.ext4 %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: %q, mkfs.ext4 has none", k, v)
				}
			}
			fsckClean(t, img)
			kernelSees(t, img, "ext4", map[string][]byte{})
			// It takes writes.
			_, w := openImage(t, img)
			if err := w.Mkdir("d"); err != nil {
				t.Fatal(err)
			}
			wf, err := w.Create("d/f")
			if err != nil {
				t.Fatal(err)
			}
			data := []byte(strings.Repeat("formatted ", 20000))
			if _, err := wf.Write(data); err != nil && size > 1<<20 {
				t.Fatal(err)
			}
			w.Close()
			fsckClean(t, img)
			if size > 1<<20 {
				kernelSees(t, img, "ext4", map[string][]byte{"d/f": data})
				kernelWrites(t, img)
			}
		})
	}
}

// kernelWrites mounts img read-write, lets the kernel write a tree into
// it (its allocator then works on the layout Format made: flex groups,
// uninitialised groups, the journal), and checks e2fsck -fn after.
func kernelWrites(t *testing.T, img string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("kernel write skipped: not root")
		return
	}
	mnt := t.TempDir()
	if out, err := exec.Command("timeout", "60", "mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Logf("kernel write skipped: mount: %v: %s", err, out)
		return
	}
	for i := 0; i < 40; i++ {
		dir := filepath.Join(mnt, fmt.Sprint("k", i%5))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), make([]byte, 2000*i), 0o644); err != nil {
			t.Errorf("kernel write: %v", err)
			break
		}
	}
	if out, err := exec.Command("timeout", "60", "umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v: %s", err, out)
	}
	fsckClean(t, img)
}
