package exfat

import (
	"bytes"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchFuse mounts img with exfat-fuse for a benchmark, or returns "" when
// that cannot be done here.
func benchFuse(b *testing.B, img string) (dir string, unmount func()) {
	if os.Getuid() != 0 {
		return "", nil
	}
	if _, err := exec.LookPath("mount.exfat-fuse"); err != nil {
		return "", nil
	}
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		return "", nil
	}
	loop := string(bytes.TrimSpace(out))
	dir = filepath.Join(b.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	if err := exec.Command("mount.exfat-fuse", loop, dir).Run(); err != nil {
		exec.Command("losetup", "-d", loop).Run()
		return "", nil
	}
	return dir, func() {
		exec.Command("umount", dir).Run()
		exec.Command("losetup", "-d", loop).Run()
	}
}

// BenchmarkSmallFiles writes 1,000 files of 3–10 KB into an exFAT volume
// in an image file and reads them back (through a fresh Open), and does
// the same with a plain directory on the same disk and, where it can be
// mounted, through exfat-fuse on an image made by mkfs.exfat (mount,
// write, unmount, mount, read, unmount). It reports the ratios of the
// times as x-plain-dir and x-exfat-fuse (below 1: faster).
func BenchmarkSmallFiles(b *testing.B) {
	fattest.BenchSmallFiles(b, "exfat", 256<<20, func(img *os.File, size int64) error {
		return Format(img, size, FormatOptions{})
	}, Open, &fattest.HostRef{
		Name: "exfat-fuse",
		Prepare: func(b *testing.B, dir string, size int64) string {
			img := filepath.Join(dir, "fuse.img")
			os.WriteFile(img, nil, 0o644)
			os.Truncate(img, size)
			if exec.Command("mkfs.exfat", img).Run() != nil {
				return ""
			}
			return img
		},
		Mount: benchFuse,
	})
}

// BenchmarkSequential writes and reads one 64 MiB file in 1 MiB calls on
// an in-memory device (the filesystem's own cost) and on an image file,
// with a plain file on the same disk and, where it can be mounted, the
// same file through exfat-fuse as references.
func BenchmarkSequential(b *testing.B) {
	fattest.BenchSequential(b, "exfat.img", func(b *testing.B, dev fattest.Device) fattest.SeqFS[*File] {
		mustFormat(b, dev, fattest.SeqVolumeSize, FormatOptions{})
		return mustOpen(b, dev, fattest.SeqVolumeSize)
	})
	fuseImg := fattest.Preallocated(b, "exfat.img", fattest.SeqVolumeSize).Name()
	if exec.Command("mkfs.exfat", fuseImg).Run() != nil {
		return
	}
	mnt, unmount := benchFuse(b, fuseImg)
	if mnt == "" {
		return
	}
	defer unmount()
	fattest.BenchFile(b, "reference-exfat-fuse", fattest.SeqFS[*os.File](fattest.Dir(mnt)))
}

// TestHotPathAllocs checks that reading, and overwriting inside a file,
// allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	m := newMemDev(t, 8<<20)
	mustFormat(t, m, 8<<20, FormatOptions{})
	fs := mustOpen(t, m, 8<<20)
	fattest.HotPathAllocs[*File](t, fs)
}
