package main

// format over a filesystem in an order a power cut cannot break (issue
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
	"context"
	"io"
	"strings"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// formatTarget is what a formatter writes to: the volume, or the volume
// with the signature held back.
type formatTarget interface {
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

// dropSignature zeroes the sector that makes fsprobe recognise what v
// holds, if anything, and flushes: one sector, written whole or not at
// all, after which the old filesystem is not recognised any more.
func dropSignature(v *volume.Volume) error {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return nil // nothing recognised: nothing to drop
	}
	if _, err := v.WriteAt(make([]byte, 512), signatureSector(r.Type)); err != nil {
		return err
	}
	return v.Sync()
}

// formatOver formats v, which may hold a filesystem, in the order above.
func formatOver(ctx context.Context, a *app, v *volume.Volume, spec *formatSpec) error {
	if err := dropSignature(v); err != nil {
		return err
	}
	h := &heldSector{formatTarget: v, off: signatureSector(spec.fs)}
	if err := formatters[spec.fs].format(ctx, a, h, spec); err != nil {
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
	formatTarget
	off  int64
	data []byte // nil until the sector is written
}

func (h *heldSector) WriteAt(p []byte, off int64) (int, error) {
	end, hend := off+int64(len(p)), h.off+512
	if end <= h.off || off >= hend {
		return h.formatTarget.WriteAt(p, off)
	}
	if h.data == nil {
		h.data = make([]byte, 512)
		if _, err := h.formatTarget.ReadAt(h.data, h.off); err != nil && err != io.EOF {
			return 0, err
		}
	}
	from, to := max(off, h.off), min(end, hend)
	copy(h.data[from-h.off:], p[from-off:to-off])
	if off < h.off {
		if _, err := h.formatTarget.WriteAt(p[:h.off-off], off); err != nil {
			return 0, err
		}
	}
	if end > hend {
		if _, err := h.formatTarget.WriteAt(p[hend-off:], hend); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (h *heldSector) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.formatTarget.ReadAt(p, off)
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
	if _, err := h.formatTarget.WriteAt(h.data, h.off); err != nil {
		return err
	}
	return h.formatTarget.Sync()
}
