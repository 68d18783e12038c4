package exfat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
)

type mkfsCase struct {
	size    int64
	cluster int // bytes, 0 = mkfs.exfat's choice
	align   int // bytes, 0 = mkfs.exfat's default
}

func (c mkfsCase) String() string { return fmt.Sprintf("%d-c%d-b%d", c.size, c.cluster, c.align) }

// The sizes the acceptance names (1 MiB needs a smaller alignment, as it
// does with mkfs.exfat), the cluster size boundaries, odd sizes, and forced
// cluster sizes and alignments. Sizes above 1 GiB are sparse files.
var mkfsCases = []mkfsCase{
	{1 << 20, 0, 4096}, {1 << 20, 512, 512}, {1 << 20, 0, 0}, {2 << 20, 0, 0}, {3 << 20, 0, 0},
	{8 << 20, 0, 0}, {100 << 20, 0, 0}, {1 << 30, 0, 0}, {3 << 30, 0, 0}, {33 << 30, 0, 0},
	{256 << 20, 0, 0}, {256<<20 + 512, 0, 0}, {32 << 30, 0, 0}, {32<<30 + 1<<20, 0, 0},
	{8<<20 + 3*512 + 100, 0, 0}, {100 << 20, 512, 0}, {100 << 20, 1 << 20, 0}, {100 << 20, 0, 64 << 10},
	{1 << 30, 4096, 0}, {5 << 20, 128 << 10, 0}, {2 << 30, 0, 0}, {16 << 20, 0, 0}, {64 << 20, 0, 0},
	// The alignments create and format fall back to below 3 MiB (the largest
	// that fits), as mkfs.exfat -b gives them.
	{1 << 20, 0, 256 << 10}, {1835008, 0, 512 << 10}, {2 << 20, 0, 512 << 10},
}

// TestFormatMatchesMkfs formats each case with Format and with mkfs.exfat
// (given the same label, and the serial number mkfs.exfat chose) and
// compares everything mkfs.exfat writes: both boot regions (boot sector,
// extended boot sectors, OEM parameters, reserved and checksum sectors),
// the whole FAT, the allocation bitmap, the up-case table and the root
// directory — every byte from the start of the device to the end of the
// root directory's cluster.
func TestFormatMatchesMkfs(t *testing.T) {
	needTools(t, "mkfs.exfat", "fsck.exfat")
	for _, c := range mkfsCases {
		t.Run(c.String(), func(t *testing.T) {
			refPath, _ := image(t, c.size)
			args := []string{"-L", "TESTVOL"}
			if c.cluster != 0 {
				args = append(args, "-c", strconv.Itoa(c.cluster))
			}
			if c.align != 0 {
				args = append(args, "-b", strconv.Itoa(c.align))
			}
			out, mkfsErr := runTool(t, nil, "mkfs.exfat", append(args, refPath)...)
			m := newSparseDev(t, c.size)
			var serial uint32
			rf, err := os.Open(refPath)
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			head := make([]byte, 512)
			rf.ReadAt(head, 0)
			serial = binary.LittleEndian.Uint32(head[offSerial:])
			if serial == 0 {
				serial = 0xDEADBEEF
			}
			err = Format(m, c.size, FormatOptions{Label: "TESTVOL", Serial: serial, ClusterSize: c.cluster, Align: c.align})
			if mkfsErr != nil {
				if err == nil {
					t.Fatalf("mkfs.exfat refused (%v: %s) but Format succeeded", mkfsErr, out)
				}
				if !errors.Is(err, ErrTooSmall) {
					t.Errorf("Format error %v does not wrap ErrTooSmall", err)
				}
				t.Logf("both refuse: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Format: %v (mkfs.exfat succeeded: %s)", err, out)
			}
			g, err := parseBootRegion(readSpan(t, rf, 0, 24*512), c.size)
			if err != nil {
				t.Fatalf("parsing mkfs.exfat's boot region: %v", err)
			}
			l, err := mkfsLayout(c.size, c.cluster, c.align)
			if err != nil {
				t.Fatal(err)
			}
			span := g.clusterOffset(l.rootCluster) + int64(g.clusterSize)
			ref := readSpan(t, rf, 0, span)
			got := make([]byte, span)
			m.ReadAt(got, 0)
			for _, part := range []struct {
				name     string
				from, to int64
			}{
				{"main boot region", 0, 12 * 512},
				{"backup boot region", 12 * 512, 24 * 512},
				{"FAT", g.fatOffset, g.fatOffset + g.fatLength},
				{"allocation bitmap", g.heapOffset, g.clusterOffset(l.upcaseFirst)},
				{"up-case table", g.clusterOffset(l.upcaseFirst), g.clusterOffset(l.rootCluster)},
				{"root directory", g.clusterOffset(l.rootCluster), span},
				{"everything up to the end of the root directory", 0, span},
			} {
				if a, b := got[part.from:part.to], ref[part.from:part.to]; !bytes.Equal(a, b) {
					i := 0
					for a[i] == b[i] {
						i++
					}
					t.Errorf("%s differs first at byte %d of it (device offset %d): got %#02x, mkfs.exfat %#02x",
						part.name, i, part.from+int64(i), a[i], b[i])
				}
			}
			if c.size <= 1<<30 || c.size == 33<<30 {
				fsckClean(t, m.Save(t, "exfat.img"))
			}
			t.Logf("%d-byte clusters, %d clusters, FAT at %d (%d bytes), heap at %d", g.clusterSize, g.clusterCount, g.fatOffset, g.fatLength, g.heapOffset)
		})
	}
}

func readSpan(t *testing.T, f *os.File, off, n int64) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUpcaseTable checks the built-in table against the checksum the
// specification gives for it and its meaning: ASCII and Latin-1 letters
// map to their capitals, everything that has no upper case maps to itself.
func TestUpcaseTable(t *testing.T) {
	if got := upcaseChecksum(defaultUpcase); got != defaultUpcaseChecksum || len(defaultUpcase) != upcaseLength {
		t.Fatalf("table of %d bytes, checksum %#08x; want %d bytes, %#08x", len(defaultUpcase), got, upcaseLength, uint32(defaultUpcaseChecksum))
	}
	u := expandUpcase(defaultUpcase)
	for _, c := range []struct{ in, out rune }{{'a', 'A'}, {'z', 'Z'}, {'A', 'A'}, {'0', '0'}, {'é', 'É'}, {'ÿ', 'Ÿ'}, {'я', 'Я'}, {'ω', 'Ω'}, {'日', '日'}, {'ß', 'ß'}} {
		if got := rune(u.upper(uint16(c.in))); got != c.out {
			t.Errorf("upper(%q) = %q, want %q", c.in, got, c.out)
		}
	}
}

// TestFormatRejects checks Format's refusals.
func TestFormatRejects(t *testing.T) {
	m := newMemDev(t, 8<<20)
	for _, c := range []struct {
		size int64
		opts FormatOptions
	}{
		{8 << 20, FormatOptions{Label: "this label is far too long"}},
		{8 << 20, FormatOptions{Label: "bad\x01"}},
		{8 << 20, FormatOptions{ClusterSize: 3000}},
		{8 << 20, FormatOptions{ClusterSize: 256}},
		{8 << 20, FormatOptions{Align: 100}},
		{2 << 20, FormatOptions{}},
		{10 << 10, FormatOptions{Align: 512}},
	} {
		if err := Format(m, c.size, c.opts); err == nil {
			t.Errorf("Format(%d, %+v) succeeded", c.size, c.opts)
		}
	}
}
