package ext4

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// needTool skips the test when an e2fsprogs program is not installed.
func needTool(t testing.TB, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		// Under Wine, LookPath and the /usr/sbin fallback find the host's
		// Linux binaries, which then get Windows paths they cannot open.
		t.Skipf("%s: e2fsprogs are run on a Linux or macOS host only", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return filepath.Join(dir, name)
			}
		}
		t.Skipf("%s not installed (e2fsprogs): skipping", name)
	}
	return p
}

// mkfsImage makes an image of size bytes with mkfs.ext4 and the given
// options, filled from src when it is not "".
func mkfsImage(t testing.TB, size int64, src string, opts ...string) string {
	t.Helper()
	mkfs := needTool(t, "mkfs.ext4")
	img := filepath.Join(t.TempDir(), "fs.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := append([]string{"-q", "-F", "-E", "root_owner=0:0"}, opts...)
	if src != "" {
		args = append(args, "-d", src)
	}
	args = append(args, img)
	cmd := exec.Command(mkfs, args...)
	cmd.Env = append(os.Environ(), "MKE2FS_CONFIG=/etc/mke2fs.conf", "E2FSPROGS_FAKE_TIME=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %v: %v\n%s", args, err, out)
	}
	return img
}

// e2fsck runs e2fsck with args on img and returns its exit code and output.
func e2fsck(t testing.TB, img string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(needTool(t, "e2fsck"), append(args, img)...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// csumCounts counts the checksums verifyChecksums compared, by structure.
type csumCounts map[string]int

func (c csumCounts) String() string {
	var s []string
	for _, k := range []string{"superblock", "group", "block bitmap", "inode bitmap", "inode", "extent block", "dir block", "htree node", "free count"} {
		s = append(s, fmt.Sprintf("%s %d", k, c[k]))
	}
	return strings.Join(s, ", ")
}

// verifyChecksums recomputes every checksum of the filesystem and returns
// the mismatches (one a line) and the counts of what matched.
func verifyChecksums(f *FS) ([]string, csumCounts, error) {
	m, err := loadMeta(f)
	if err != nil {
		return nil, nil, err
	}
	var bad []string
	n := csumCounts{}
	check := func(what string, got, want, mask uint32) {
		if got&mask != want&mask {
			bad = append(bad, fmt.Sprintf("%s: stored %#x, computed %#x", what, got&mask, want&mask))
			return
		}
		n[strings.SplitN(what, " #", 2)[0]]++
	}
	le := binary.LittleEndian
	if m.csum {
		check("superblock", le.Uint32(m.sb[sbChecksum:]), superblockCsum(m.sb), ^uint32(0))
	}
	for g := uint32(0); g < f.groups; g++ {
		if m.csum || m.gdtCsum {
			check(fmt.Sprintf("group #%d", g), uint32(le.Uint16(m.gd(g)[gdChecksum:])), uint32(m.groupCsum(g)), 0xFFFF)
		}
		bb, ib, err := m.readBitmaps(g)
		if err != nil {
			return nil, nil, err
		}
		// The bitmaps (computed ones of uninitialised groups too) must
		// agree with the free counts mkfs stored.
		if free := countZeros(bb, m.groupBlocks(g)); free != m.freeBlocks(g) {
			bad = append(bad, fmt.Sprintf("group %d: %d free blocks in the bitmap (flags %#x), %d in the descriptor", g, free, m.flags(g), m.freeBlocks(g)))
		} else {
			n["free count"]++
		}
		if free := countZeros(ib, uint64(f.inodesPerGroup)); free != m.freeInodes(g) {
			bad = append(bad, fmt.Sprintf("group %d: %d free inodes in the bitmap, %d in the descriptor", g, free, m.freeInodes(g)))
		} else {
			n["free count"]++
		}
		if m.csum {
			if m.flags(g)&bgBlockUninit == 0 {
				check(fmt.Sprintf("block bitmap #%d", g), m.blockBitmapCsum(g), bitmapCsum(m.seed, bb, int(f.blocksPerGroup/8)), m.csumMask())
			}
			if m.flags(g)&bgInodeUninit == 0 {
				check(fmt.Sprintf("inode bitmap #%d", g), m.inodeBitmapCsum(g), bitmapCsum(m.seed, ib, int(f.inodesPerGroup/8)), m.csumMask())
			}
		}
		if !m.csum {
			continue
		}
		used := uint64(f.inodesPerGroup) - m.itableUnused(g)
		for i := uint64(0); i < used; i++ {
			if ib[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			ino := g*f.inodesPerGroup + uint32(i) + 1
			raw, err := m.readRawInode(ino)
			if err != nil {
				return nil, nil, err
			}
			stored, mask := storedInodeCsum(raw)
			check(fmt.Sprintf("inode #%d", ino), stored, inodeCsum(m.seed, ino, raw), mask)
			if err := verifyInodeTrees(f, m, ino, raw, check); err != nil {
				return nil, nil, err
			}
		}
	}
	return bad, n, nil
}

// countZeros counts the clear bits among the first n of b.
func countZeros(b []byte, n uint64) uint64 {
	z := uint64(0)
	for i := uint64(0); i < n; i++ {
		if b[i/8]&(1<<(i%8)) == 0 {
			z++
		}
	}
	return z
}

// verifyInodeTrees checks the extent blocks and directory blocks of one
// inode.
func verifyInodeTrees(f *FS, m *meta, ino uint32, raw []byte, check func(string, uint32, uint32, uint32)) error {
	le := binary.LittleEndian
	iseed := inodeSeed(m.seed, ino, le.Uint32(raw[inoGeneration:]))
	flags := le.Uint32(raw[0x20:])
	if flags&flagExtents != 0 {
		var walk func(node []byte) error
		walk = func(node []byte) error {
			if le.Uint16(node[6:]) == 0 {
				return nil
			}
			for i := 0; i < int(le.Uint16(node[2:])); i++ {
				e := node[12+12*i:]
				child := uint64(le.Uint32(e[4:])) | uint64(le.Uint16(e[8:]))<<32
				b := make([]byte, f.blockSize)
				if err := f.readBlock(b, child); err != nil {
					return err
				}
				check(fmt.Sprintf("extent block #%d of inode %d", child, ino), le.Uint32(b[extentTailOffset(b):]), extentBlockCsum(iseed, b), ^uint32(0))
				if err := walk(b); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(raw[0x28 : 0x28+60]); err != nil {
			return err
		}
	}
	if le.Uint16(raw)&sIFMT != sIFDIR || flags&flagInlineData != 0 {
		return nil
	}
	in, err := f.readInode(ino)
	if err != nil {
		return err
	}
	runs, err := f.blockMap(in)
	if err != nil {
		return err
	}
	b := make([]byte, f.blockSize)
	for _, r := range runs {
		for i := uint64(0); i < r.length; i++ {
			if err := f.readBlock(b, r.phys+i); err != nil {
				return err
			}
			what := fmt.Sprintf("dir block #%d of inode %d", r.logical+i, ino)
			if hasDirTail(b) {
				check(what, le.Uint32(b[len(b)-4:]), dirBlockCsum(iseed, b), ^uint32(0))
				continue
			}
			if flags&flagIndex == 0 {
				check(what+" (no tail)", 0, 1, ^uint32(0))
				continue
			}
			off, ok := dxCountOffset(b, r.logical+i == 0)
			if !ok {
				check(what+" (neither leaf nor htree node)", 0, 1, ^uint32(0))
				continue
			}
			c, at, ok := dxCsum(iseed, b, off)
			if !ok {
				check(what+" (bad dx count)", 0, 1, ^uint32(0))
				continue
			}
			check(fmt.Sprintf("htree node #%d of inode %d", r.logical+i, ino), le.Uint32(b[at:]), c, ^uint32(0))
		}
	}
	return nil
}

// csumSource builds a tree that gives mkfs every checksummed structure:
// directories of several blocks, a sparse file of many extents (an extent
// block), small and empty files, a symlink.
func csumSource(t testing.TB) string {
	src := t.TempDir()
	big := filepath.Join(src, "many")
	os.Mkdir(big, 0o755)
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("a-rather-long-file-name-to-fill-directory-blocks-%04d", i)
		os.WriteFile(filepath.Join(big, name), []byte(name), 0o644)
	}
	os.WriteFile(filepath.Join(src, "empty"), nil, 0o644)
	os.MkdirAll(filepath.Join(src, "d1", "d2", "d3"), 0o755)
	os.WriteFile(filepath.Join(src, "d1", "d2", "d3", "file"), make([]byte, 70000), 0o600)
	os.Symlink("d1/d2", filepath.Join(src, "link"))
	sp, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 12; i++ {
		sp.WriteAt([]byte("island"), i*300000)
	}
	sp.Close()
	return src
}

// TestChecksumsOfMkfsImages recomputes every checksum of images made by
// mkfs.ext4 (then indexed by e2fsck -D, for htree nodes) and compares them
// with what the tools stored.
func TestChecksumsOfMkfsImages(t *testing.T) {
	src := csumSource(t)
	for _, tc := range []struct {
		name string
		size int64
		opts []string
	}{
		{"default", 64 << 20, nil},
		{"1k-blocks", 32 << 20, []string{"-b", "1024"}},
		{"no-64bit", 64 << 20, []string{"-O", "^64bit"}},
		{"csum-seed", 64 << 20, []string{"-O", "metadata_csum_seed"}},
		{"gdt-csum", 64 << 20, []string{"-O", "^metadata_csum,uninit_bg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := mkfsImage(t, tc.size, src, tc.opts...)
			// -D indexes the multi-block directory (an htree root and
			// leaves, each with its checksum).
			if code, out := e2fsck(t, img, "-fyD"); code > 1 {
				t.Fatalf("e2fsck -fyD: exit %d\n%s", code, out)
			}
			dev, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			fi, _ := dev.Stat()
			f, err := Open(dev, fi.Size())
			if err != nil {
				t.Fatal(err)
			}
			bad, n, err := verifyChecksums(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bad {
				t.Error(b)
			}
			t.Logf("matched: %v", n)
			csum := f.roCompat&roCompatMetadataCsum != 0
			for _, k := range []string{"superblock", "group", "block bitmap", "inode bitmap", "inode", "extent block", "dir block", "htree node"} {
				if (csum || k == "group") && n[k] == 0 {
					t.Errorf("no %s checksum was compared", k)
				}
			}
		})
	}
}
