package exfat

import (
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os/exec"
	"testing"
)

var lookPath = exec.LookPath

// fuzzDevSize is the device every fuzz input is laid over: the input
// replaces its first bytes (boot regions, FAT, bitmap, up-case table, root
// directory, the first clusters), the rest stays zero.
const fuzzDevSize = 1 << 20

// fuzzSeed formats a small volume, puts files and directories on it (one
// fragmented) and returns the bytes up to the end of what it used.
func fuzzSeed(t testing.TB, cluster int) []byte {
	m := newMemDev(t, fuzzDevSize)
	if err := Format(m, fuzzDevSize, FormatOptions{ClusterSize: cluster, Align: 512, Label: "FUZZ"}); err != nil {
		t.Fatal(err)
	}
	fs := mustOpen(t, m, fuzzDevSize)
	fs.MkdirAll("/a dir/Подкаталог")
	mustWrite(t, fs, "/short.txt", []byte("short"))
	f, _ := fs.Create("/a dir/long name 😀.bin")
	f.Write(pattern(1, 3000))
	mustWrite(t, fs, "/a dir/Подкаталог/x", pattern(2, 700))
	f.Write(pattern(1, 3000))
	f.Close()
	fs.Close()
	end := len(m.Data)
	for end > 0 && m.Data[end-1] == 0 {
		end--
	}
	return m.Data[:end]
}

// FuzzOpen feeds mutated boot regions, FATs, bitmaps, up-case tables and
// directories to Open and then walks, reads, checks and writes whatever
// it accepts. Nothing may panic, every Open error must wrap ErrNotExFAT or
// ErrCorrupt, and no I/O may leave the device (memDev fails the test).
// Without -fuzz it runs the seeds as an ordinary test. Fuzz with
//
//	go test -run XXX -fuzz FuzzOpen -fuzzminimizetime 3s ./exfat/
func FuzzOpen(f *testing.F) {
	f.Add(fuzzSeed(f, 512))
	f.Add(fuzzSeed(f, 4096))
	f.Add([]byte("\xEB\x76\x90EXFAT   "))
	f.Fuzz(func(t *testing.T, data []byte) {
		fattest.FuzzOpen[*File, *FileInfo, *CheckReport, Statfs](t, fuzzDevSize, data, Open, ErrNotExFAT, ErrCorrupt, ErrUnsupported)
	})
}
