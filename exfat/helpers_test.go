package exfat

import (
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

type memDev = fattest.MemDev

func newSparseDev(t testing.TB, size int64) *fattest.SparseDev { return fattest.NewSparseDev(t, size) }

func image(t testing.TB, size int64) (string, *os.File) { return fattest.Image(t, "exfat.img", size) }

// saveImage writes a memDev to a file for the external tools.
func saveImage(t testing.TB, m *memDev) string { return fattest.SaveImage(t, "exfat.img", m.Data) }

// needTools skips the test when an external oracle is missing.
func needTools(t testing.TB, tools ...string) {
	fattest.NeedTools(t, "exfatprogs and exfat-fuse are the test oracles; apt-get install exfatprogs exfat-fuse", tools...)
}

var newMemDev, runTool, pattern, mustWrite, mustRead = fattest.NewMemDev, fattest.RunTool, fattest.Pattern, fattest.MustWrite, fattest.MustRead

// fsckClean runs fsck.exfat -n and fails the test unless it exits 0.
func fsckClean(t testing.TB, img string) { fattest.FsckClean(t, "fsck.exfat", img) }

func mustFormat(t testing.TB, dev interface {
	WriteAt([]byte, int64) (int, error)
}, size int64, opts FormatOptions) {
	t.Helper()
	if err := Format(dev, size, opts); err != nil {
		t.Fatalf("Format(%d): %v", size, err)
	}
}

func mustOpen(t testing.TB, dev interface {
	ReadAt([]byte, int64) (int, error)
}, size int64) *FS {
	t.Helper()
	fs, err := Open(dev, size)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return fs
}
