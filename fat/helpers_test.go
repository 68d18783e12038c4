package fat

import (
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

type memDev = fattest.MemDev

func newSparseDev(t testing.TB, size int64) *fattest.SparseDev { return fattest.NewSparseDev(t, size) }

func image(t testing.TB, size int64) (string, *os.File) { return fattest.Image(t, "fat.img", size) }

// saveImage writes a memDev to a file for the external tools.
func saveImage(t testing.TB, m *memDev) string { return fattest.SaveImage(t, "fat.img", m.Data) }

// needTools skips the test when an external oracle is missing.
func needTools(t testing.TB, tools ...string) {
	fattest.NeedTools(t, "dosfstools and mtools are the test oracles", tools...)
}

var newMemDev, runTool, pattern, mustWrite, mustRead = fattest.NewMemDev, fattest.RunTool, fattest.Pattern, fattest.MustWrite, fattest.MustRead

// fsckClean runs fsck.fat -n and fails the test unless it exits 0.
func fsckClean(t testing.TB, img string) { fattest.FsckClean(t, "fsck.fat", img) }

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
