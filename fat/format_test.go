package fat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// mkfsCase is one mkfs.fat invocation to reproduce.
type mkfsCase struct {
	size    int64
	typ     Type
	cluster int // bytes, 0 = auto
}

func (c mkfsCase) String() string {
	return fmt.Sprintf("%d-%v-%d", c.size, c.typ, c.cluster)
}

// The sizes the acceptance criteria name, floppy sizes, sizes at the
// FAT12/FAT16/FAT32 boundaries, odd sizes, and forced types and clusters.
var mkfsCases = []mkfsCase{
	{300 << 10, 0, 0}, {10 << 20, 0, 0}, {100 << 20, 0, 0}, {1 << 30, 0, 0},
	{360 << 10, 0, 0}, {720 << 10, 0, 0}, {1200 << 10, 0, 0}, {1440 << 10, 0, 0}, {2880 << 10, 0, 0},
	{64 << 10, 0, 0}, {4 << 20, 0, 0}, {4<<20 + 512, 0, 0}, {8<<20 + 3*512 + 100, 0, 0},
	{16 << 20, 0, 0}, {33 << 20, 0, 0}, {260 << 20, 0, 0}, {511 << 20, 0, 0}, {512 << 20, 0, 0},
	{2 << 30, 0, 0}, {9 << 30, 0, 0},
	{1 << 20, FAT12, 0}, {100 << 20, FAT16, 0}, {100 << 20, FAT32, 0}, {40 << 20, FAT32, 0},
	{1 << 30, FAT16, 0}, {10 << 20, FAT16, 512}, {100 << 20, 0, 8192}, {1 << 30, FAT32, 512},
	{1 << 30, FAT32, 32768},
}

// TestFormatMatchesMkfs formats each case with Format and with mkfs.fat
// 4.2 and compares the boot sectors (everything but the OEM name and the
// boot code), the start of the FATs, the FSInfo sector and the root
// directory's label entry (without its time).
func TestFormatMatchesMkfs(t *testing.T) {
	needTools(t, "mkfs.fat", "fsck.fat")
	for _, c := range mkfsCases {
		t.Run(c.String(), func(t *testing.T) {
			refPath, _ := image(t, c.size)
			args := []string{"-i", "DEADBEEF", "-n", "TESTVOL"}
			if c.typ != TypeAuto {
				args = append(args, "-F", strconv.Itoa(int(c.typ)))
			}
			if c.cluster != 0 {
				args = append(args, "-s", strconv.Itoa(c.cluster/512))
			}
			out, mkfsErr := runTool(t, nil, "mkfs.fat", append(args, refPath)...)

			m := newSparseDev(t, c.size)
			err := Format(m, c.size, FormatOptions{Label: "TESTVOL", Serial: 0xDEADBEEF, Type: c.typ, ClusterSize: c.cluster})
			if mkfsErr != nil {
				if err == nil {
					t.Fatalf("mkfs.fat refused (%v: %s) but Format succeeded", mkfsErr, out)
				}
				if !errors.Is(err, ErrTooSmall) {
					t.Errorf("Format error %v does not wrap ErrTooSmall", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Format: %v (mkfs.fat succeeded)", err)
			}
			rf, err := os.Open(refPath)
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			// Enough of both images to cover the reserved area, the FATs'
			// first sectors and the root directory's first cluster.
			span := int64(16 << 20)
			if span > c.size {
				span = c.size
			}
			ref := make([]byte, span)
			got := make([]byte, span)
			if _, err := rf.ReadAt(ref, 0); err != nil {
				t.Fatal(err)
			}
			m.ReadAt(got, 0)
			fat32 := binary.LittleEndian.Uint16(ref[22:]) == 0
			bpbEnd := 62 // through the FAT12/16 file system type
			if fat32 {
				bpbEnd = 90
			}
			if !bytes.Equal(got[11:bpbEnd], ref[11:bpbEnd]) {
				t.Errorf("BPB differs:\n got %x\nwant %x", got[11:bpbEnd], ref[11:bpbEnd])
			}
			if !bytes.Equal(got[0:2], ref[0:2]) || got[510] != 0x55 || got[511] != 0xAA {
				t.Errorf("jump %x / signature %x, want jump %x", got[0:2], got[510:512], ref[0:2])
			}
			g, err := parseBootSector(ref, c.size)
			if err != nil {
				t.Fatalf("parsing mkfs.fat's boot sector: %v", err)
			}
			for i := 0; i < g.numFATs; i++ {
				o := g.fatCopyOffset(i)
				if !bytes.Equal(got[o:o+512], ref[o:o+512]) {
					t.Errorf("FAT %d first sector differs", i)
				}
			}
			if fat32 {
				for _, s := range []int64{int64(g.fsInfoSector), int64(g.backupBoot + g.fsInfoSector)} {
					o := s * 512
					if !bytes.Equal(got[o:o+512], ref[o:o+512]) {
						t.Errorf("FSInfo sector %d differs:\n got %x\nwant %x", s, got[o+480:o+512], ref[o+480:o+512])
					}
				}
				o := int64(g.backupBoot) * 512
				if !bytes.Equal(got[o+11:o+90], ref[o+11:o+90]) {
					t.Errorf("backup boot sector differs")
				}
			}
			root := g.rootDirOffset
			if fat32 {
				root = g.clusterOffset(g.rootCluster)
			}
			if !bytes.Equal(got[root:root+12], ref[root:root+12]) {
				t.Errorf("label entry differs: %x want %x", got[root:root+12], ref[root:root+12])
			}
			if c.size == 300<<10 || c.size == 10<<20 || c.size == 100<<20 || c.size == 1<<30 {
				fsckClean(t, m.Save(t, "fat.img"))
			}
			t.Logf("%v, %d-byte clusters, %d clusters", g.typ, g.clusterSize, g.clusterCount)
		})
	}
}

// TestFormatRejects checks Format's refusals.
func TestFormatRejects(t *testing.T) {
	m := newMemDev(t, 1<<20)
	for _, c := range []struct {
		size int64
		opts FormatOptions
	}{
		{1 << 20, FormatOptions{Label: "this label is far too long"}},
		{1 << 20, FormatOptions{Label: "BAD*LABEL"}},
		{1 << 20, FormatOptions{Label: " LEADING"}},
		{1 << 20, FormatOptions{ClusterSize: 3000}},
		{1 << 20, FormatOptions{Type: 24}},
		{20 << 10, FormatOptions{}},
		{1 << 20, FormatOptions{Type: FAT16}},
	} {
		if err := Format(m, c.size, c.opts); err == nil {
			t.Errorf("Format(%d, %+v) succeeded", c.size, c.opts)
		}
	}
}
