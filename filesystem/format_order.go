package filesystem

// Formatting over a filesystem in an order a power cut cannot break (issue
// 31): in one flush epoch the disk may persist the new boot sector or
// superblock and not the tables it describes, or the tables and not the
// old signature's removal, and a recognised filesystem, old or new, is
// then damaged (the crash explorer found such states for every kind:
// TestCrashStatesFormat). So the old filesystem's signature goes first,
// flushed; the new filesystem is written without its own signature,
// flushed; its signature last, flushed. A crash leaves the old
// filesystem whole, no filesystem at all (and `format` again, without
// --force, finishes the job), or the new one whole.

import (
	"io"
	"strings"

	"github.com/cryptvol/cryptvol/fsprobe"
)

// FormatTarget is what a formatter writes to: a volume's data area, or
// (in FormatOver) that area with the new signature held back.
type FormatTarget interface {
	io.ReaderAt
	io.WriterAt
	Size() int64
	SectorSize() int
	Sync() error
}

// signatureSector is the offset of the 512-byte sector that makes fsprobe
// recognise a filesystem of the kind (a --filesystem name or an fsprobe
// type): ext2/3/4's and HFS+'s superblock magic, everyone else's boot
// sector.
func signatureSector(kind string) int64 {
	if strings.HasPrefix(kind, "ext") || kind == "hfsplus" {
		return 1024
	}
	return 0
}

// DropSignature zeroes the sector that makes fsprobe recognise what v
// holds, if anything, and flushes: one sector, written whole or not at
// all, after which the old filesystem is not recognised any more.
func DropSignature(v FormatTarget) error {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return nil // nothing recognised: nothing to drop
	}
	if _, err := v.WriteAt(make([]byte, 512), signatureSector(r.Type)); err != nil {
		return err
	}
	return v.Sync()
}

// FormatOver has format make a filesystem of kind newType (a
// --filesystem name: "fat", "exfat", "ext4", "ntfs") over v, which may
// hold one, in the order above.
func FormatOver(v FormatTarget, newType string, format func(FormatTarget) error) error {
	if err := DropSignature(v); err != nil {
		return err
	}
	h := &heldSector{FormatTarget: v, off: signatureSector(newType)}
	if err := format(h); err != nil {
		return err
	}
	if err := v.Sync(); err != nil {
		return err
	}
	return h.release()
}

// heldSector passes a formatter's writes on, except those to one 512-byte
// sector, which it keeps (and answers reads of) until release.
type heldSector struct {
	FormatTarget
	off  int64
	data []byte // nil until the sector is written
}

func (h *heldSector) WriteAt(p []byte, off int64) (int, error) {
	end, hend := off+int64(len(p)), h.off+512
	if end <= h.off || off >= hend {
		return h.FormatTarget.WriteAt(p, off)
	}
	if h.data == nil {
		h.data = make([]byte, 512)
		if _, err := h.FormatTarget.ReadAt(h.data, h.off); err != nil && err != io.EOF {
			return 0, err
		}
	}
	from, to := max(off, h.off), min(end, hend)
	copy(h.data[from-h.off:], p[from-off:to-off])
	if off < h.off {
		if _, err := h.FormatTarget.WriteAt(p[:h.off-off], off); err != nil {
			return 0, err
		}
	}
	if end > hend {
		if _, err := h.FormatTarget.WriteAt(p[hend-off:], hend); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (h *heldSector) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.FormatTarget.ReadAt(p, off)
	if h.data != nil {
		end := off + int64(n)
		if from, to := max(off, h.off), min(end, h.off+512); from < to {
			copy(p[from-off:to-off], h.data[from-h.off:to-h.off])
		}
	}
	return n, err
}

// release writes the held sector and flushes.
func (h *heldSector) release() error {
	if h.data == nil {
		return nil
	}
	if _, err := h.FormatTarget.WriteAt(h.data, h.off); err != nil {
		return err
	}
	return h.FormatTarget.Sync()
}
