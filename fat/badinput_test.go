package fat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// badImage formats a FAT32 volume with one directory holding one
// multi-cluster file and returns the device, the geometry and the file's
// first cluster.
func badImage(t *testing.T) (*memDev, *geometry, uint32, uint32) {
	const size = 40 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Type: FAT32, ClusterSize: 512})
	fs := mustOpen(t, m, size)
	if err := fs.Mkdir("/dir"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/dir/file.bin", pattern(1, 20000))
	mustWrite(t, fs, "/ok.txt", []byte("fine"))
	_, e, _, _ := fs.resolve("/dir/file.bin")
	_, d, _, _ := fs.resolve("/dir")
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := parseBootSector(m.Data, size)
	if err != nil {
		t.Fatal(err)
	}
	return m, g, e.start, d.start
}

// setFAT writes a FAT32 entry into every FAT copy.
func setFAT(m *memDev, g *geometry, c, v uint32) {
	for i := 0; i < g.numFATs; i++ {
		binary.LittleEndian.PutUint32(m.Data[g.fatCopyOffset(i)+int64(4*c):], v)
	}
}

func expectCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	fattest.ExpectCorrupt(t, ErrCorrupt, what, err)
}

func badEntries(r *CheckReport) int { return len(r.BadEntries) }

func TestLoopingChain(t *testing.T) {
	m, g, start, _ := badImage(t)
	setFAT(m, g, start+10, start) // the 11th cluster points back to the first
	fs := mustOpen(t, m, int64(len(m.Data)))
	fattest.RefusesDamagedFile(t, fs, "/dir/file.bin", ErrCorrupt, badEntries)
}

func TestChainOutOfRange(t *testing.T) {
	m, g, start, _ := badImage(t)
	setFAT(m, g, start+3, 0x0FFFFFF0)
	fs := mustOpen(t, m, int64(len(m.Data)))
	_, err := fs.ReadFile("/dir/file.bin")
	expectCorrupt(t, "read", err)
	setFAT(m, g, start+3, 0) // a free cluster in the middle
	fs = mustOpen(t, m, int64(len(m.Data)))
	_, err = fs.ReadFile("/dir/file.bin")
	expectCorrupt(t, "read through a free cluster", err)
}

func TestSizeLargerThanChain(t *testing.T) {
	m, g, _, dirStart := badImage(t)
	// Find the file's 8.3 slot in /dir and claim 10 MB.
	off := g.clusterOffset(dirStart)
	for i := int64(0); i < int64(g.clusterSize); i += 32 {
		if bytes.HasPrefix(m.Data[off+i:], []byte("FILE    BIN")) {
			binary.LittleEndian.PutUint32(m.Data[off+i+28:], 10<<20)
		}
	}
	fs := mustOpen(t, m, int64(len(m.Data)))
	_, err := fs.ReadFile("/dir/file.bin")
	expectCorrupt(t, "read", err)
	r, err := fs.Check(false)
	if err != nil || len(r.BadEntries) == 0 {
		t.Errorf("Check: %v %s", err, r)
	}
}

func TestGarbageDirectory(t *testing.T) {
	m, g, _, dirStart := badImage(t)
	r := rand.New(rand.NewPCG(7, 7))
	off := g.clusterOffset(dirStart)
	for i := int64(0); i < int64(g.clusterSize); i++ {
		m.Data[off+i] = byte(r.Uint32()) | 1 // never a 0x00 end marker
	}
	fs := mustOpen(t, m, int64(len(m.Data)))
	fattest.RefusesDamagedDir(t, fs, "/dir", ErrCorrupt, badEntries)
}

func TestBadBootSectors(t *testing.T) {
	const size = 4 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{})
	good := bytes.Clone(m.Data[:512])
	for _, c := range []struct {
		name  string
		patch func(b []byte)
	}{
		{"zero sector", func(b []byte) { clear(b) }},
		{"no jump", func(b []byte) { b[0] = 0 }},
		{"sector size 100", func(b []byte) { binary.LittleEndian.PutUint16(b[11:], 100) }},
		{"3 sectors per cluster", func(b []byte) { b[13] = 3 }},
		{"0 sectors per cluster", func(b []byte) { b[13] = 0 }},
		{"no reserved sectors", func(b []byte) { binary.LittleEndian.PutUint16(b[14:], 0) }},
		{"no FATs", func(b []byte) { b[16] = 0 }},
		{"huge FAT", func(b []byte) { binary.LittleEndian.PutUint16(b[22:], 0xFFFF) }},
		{"larger than the device", func(b []byte) {
			binary.LittleEndian.PutUint16(b[19:], 2*binary.LittleEndian.Uint16(b[19:]))
		}},
		{"zero sectors", func(b []byte) { binary.LittleEndian.PutUint16(b[19:], 0) }},
		{"bad media", func(b []byte) { b[21] = 0x12 }},
		{"FAT32 root outside", func(b []byte) {
			binary.LittleEndian.PutUint16(b[22:], 0)
			binary.LittleEndian.PutUint32(b[36:], 8)
			binary.LittleEndian.PutUint16(b[17:], 0)
			b[42], b[43] = 0, 0
			binary.LittleEndian.PutUint32(b[44:], 0x0FFFFFF0)
		}},
	} {
		b := bytes.Clone(m.Data)
		copy(b, good)
		c.patch(b)
		_, err := Open(&memDev{T: t, Data: b}, size)
		if !errors.Is(err, ErrNotFAT) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrNotFAT or ErrCorrupt", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, err := Open(&memDev{T: t, Data: make([]byte, 100)}, 100); !errors.Is(err, ErrNotFAT) {
		t.Errorf("tiny device: %v", err)
	}
	// Random boot sectors over a small formatted volume.
	const small = 256 << 10
	sm := newMemDev(t, small)
	mustFormat(t, sm, small, FormatOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := bytes.Clone(sm.Data)
		for j := 0; j < 512; j++ {
			b[j] = byte(r.Uint32())
		}
		b[0] = 0xEB
		if i%2 == 0 {
			binary.LittleEndian.PutUint16(b[11:], 512)
			b[13] = byte(1 << (i % 8))
		}
		if fs, err := Open(&memDev{T: t, Data: b}, small); err == nil {
			exercise(t, fs)
		} else if !errors.Is(err, ErrNotFAT) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("random boot sector: %v", err)
		}
	}
}

// exercise walks, reads, checks and writes whatever Open accepted
// (fattest.Exercise).
func exercise(t testing.TB, fs *FS) {
	fattest.Exercise[*File, *FileInfo, *CheckReport, Statfs](t, fs)
}

// TestDirectoryLoop points a subdirectory's entry back at its parent.
func TestDirectoryLoop(t *testing.T) {
	m, g, _, dirStart := badImage(t)
	fs := mustOpen(t, m, int64(len(m.Data)))
	if err := fs.Mkdir("/dir/sub"); err != nil {
		t.Fatal(err)
	}
	fs.Close()
	off := g.clusterOffset(dirStart)
	for i := int64(0); i < int64(g.clusterSize); i += 32 {
		if bytes.HasPrefix(m.Data[off+i:], []byte("SUB        ")) {
			binary.LittleEndian.PutUint16(m.Data[off+i+26:], uint16(dirStart))
			binary.LittleEndian.PutUint16(m.Data[off+i+20:], uint16(dirStart>>16))
		}
	}
	fs = mustOpen(t, m, int64(len(m.Data)))
	_, err := fs.ReadDir("/dir/sub")
	expectCorrupt(t, "readdir of a loop", err)
	_, err = fs.ReadDir("/dir/sub/sub/sub")
	expectCorrupt(t, "deeper", err)
	r, err := fs.Check(false)
	if err != nil || len(r.CrossLinks) == 0 {
		t.Errorf("Check: %v\n%s", err, r)
	}
}
