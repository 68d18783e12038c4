package fat

import (
	"github.com/cryptvol/cryptvol/internal/fattest"
	"testing"
)

// fuzzDevSize is the device every fuzz input is laid over: the input
// replaces its first bytes (boot sector, FATs, root directory, the first
// clusters), the rest stays zero.
const fuzzDevSize = 4 << 20

// fuzzSeed formats a small volume of the given type, puts a few files and
// directories on it and returns its first 64 KiB.
func fuzzSeed(t testing.TB, typ Type, cluster int) []byte {
	m := newMemDev(t, fuzzDevSize)
	if err := Format(m, fuzzDevSize, FormatOptions{Type: typ, ClusterSize: cluster, Label: "FUZZ"}); err != nil {
		t.Fatal(err)
	}
	fs := mustOpen(t, m, fuzzDevSize)
	fs.MkdirAll("/a dir/Подкаталог")
	mustWrite(t, fs, "/short.txt", []byte("short"))
	mustWrite(t, fs, "/a dir/long name 😀.bin", pattern(1, 3000))
	mustWrite(t, fs, "/a dir/Подкаталог/x", pattern(2, 700))
	fs.Close()
	return m.Data[:64<<10]
}

// FuzzOpen feeds mutated boot sectors, FATs and directories to Open and
// then walks, reads, checks and writes whatever it accepts. Nothing may
// panic, every Open error must wrap ErrNotFAT or ErrCorrupt, and no I/O
// may leave the device (memDev fails the test). Without -fuzz it runs the
// seeds below as an ordinary test. Fuzz with
//
//	go test -run XXX -fuzz FuzzOpen -fuzzminimizetime 3s ./fat/
//
// (the inputs are 64 KiB, so the default minimisation time makes the
// fuzzer look stuck for a minute at a time).
func FuzzOpen(f *testing.F) {
	f.Add(fuzzSeed(f, FAT12, 0))
	f.Add(fuzzSeed(f, FAT16, 512))
	f.Add(fuzzSeed(f, FAT32, 512))
	f.Add([]byte{0xEB, 0x3C, 0x90})
	f.Fuzz(func(t *testing.T, data []byte) {
		fattest.FuzzOpen[*File, *FileInfo, *CheckReport, Statfs](t, fuzzDevSize, data, Open, ErrNotFAT, ErrCorrupt)
	})
}
