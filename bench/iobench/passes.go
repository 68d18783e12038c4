package iobench

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/diskio"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// blockSource hands out the blocks a pass writes.
type blockSource struct {
	pool []byte
	bs   int
}

// block returns the i-th block to write. Blocks start on page
// boundaries, as the buffers of dd and cp do: a buffer that straddles one
// more page than it must is split into two requests by FUSE direct I/O.
func (b *blockSource) block(i int64) []byte {
	off := int(i*4096) % (len(b.pool) - b.bs)
	return b.pool[off : off+b.bs]
}

// writer and reader are what a pass writes to and reads from: an
// *os.File, a file in a FUSE mount, or a file of the filesystem layer.
type writer interface {
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
}

// timedWrite writes size bytes in blocks and syncs; it returns bytes/s.
func timedWrite(ctx context.Context, w writer, size int64, blocks *blockSource) (float64, error) {
	start := time.Now()
	bs := int64(blocks.bs)
	for i := int64(0); i*bs < size; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if _, err := w.WriteAt(blocks.block(i), i*bs); err != nil {
			return 0, err
		}
	}
	if err := w.Sync(); err != nil {
		return 0, err
	}
	return float64(size) / time.Since(start).Seconds(), nil
}

// timedRead reads size bytes in blocks; it returns bytes/s and checks the
// first and last blocks against what was written.
func timedRead(ctx context.Context, r io.ReaderAt, size int64, blocks *blockSource) (float64, error) {
	bs := int64(blocks.bs)
	buf := make([]byte, bs)
	first := make([]byte, bs)
	start := time.Now()
	var i int64
	for ; i*bs < size; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		n, err := r.ReadAt(buf, i*bs)
		if n < len(buf) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if i == 0 {
			copy(first, buf)
		}
	}
	bps := float64(size) / time.Since(start).Seconds()
	if !bytes.Equal(first, blocks.block(0)) || !bytes.Equal(buf, blocks.block(i-1)) {
		return 0, errors.New("read back different data from what was written")
	}
	return bps, nil
}

// rawPass writes and reads the target directly: written through a
// write-only descriptor over what is there, as dd writes to a partition,
// read through a new one.
func rawPass(ctx context.Context, o Options, device bool, blocks *blockSource) (Speed, error) {
	var s Speed
	w, err := os.OpenFile(o.Target, os.O_WRONLY, 0)
	if err != nil {
		return s, err
	}
	s.WriteBPS, err = timedWrite(ctx, w, o.Size, blocks)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s, err
	}
	r, err := os.Open(o.Target)
	if err != nil {
		return s, err
	}
	defer r.Close()
	diskio.DropCache(r)
	s.ReadBPS, err = timedRead(ctx, r, o.Size, blocks)
	return s, err
}

// benchContainerSize leaves room for the volume headers and the FAT.
func benchContainerSize(size int64) int64 {
	c := size + size/32 + 8<<20
	return (c + 1<<20 - 1) &^ (1<<20 - 1)
}

// windowDevice is the first size bytes of a file or block device.
type windowDevice struct {
	*os.File
	size int64
}

func (d *windowDevice) Size() int64 { return d.size }

func (d *windowDevice) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > d.size {
		return 0, fmt.Errorf("write beyond the benchmark's container")
	}
	return d.File.WriteAt(p, off)
}

// encryptedPass creates a volume on the target and writes and reads one
// file through it.
func encryptedPass(ctx context.Context, o Options, device bool, blocks *blockSource) (Speed, string, error) {
	var s Speed
	csize := benchContainerSize(o.Size)
	f, err := os.OpenFile(o.Target, os.O_RDWR, 0)
	if err != nil {
		return s, "", err
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return s, "", err
	}
	if end < csize {
		return s, "", fmt.Errorf("%w: the target has %d bytes; the encrypted pass needs %d", ErrOptions, end, csize)
	}
	dev := &windowDevice{File: f, size: csize}
	pw := make([]byte, 32)
	rand.Read(pw)
	cr, err := tcrypt.Create(ctx, dev, volume.Credentials{Password: pw, PIM: 1}, tcrypt.CreateOptions{Encryption: o.Encryption, Quick: true})
	clear(pw)
	if err != nil {
		return s, "", err
	}
	v, err := volume.New(dev, cr.Unlocked, volume.Options{})
	if err != nil {
		return s, "", err
	}
	defer v.Close()
	if _, err := filesystem.Format(v, v.Size(), filesystem.FormatOptions{Type: "fat", Label: "IOBENCH"}); err != nil {
		return s, "", err
	}
	fsName := "FAT"
	if fsys, err := filesystem.OpenAs("vfat", v, v.Size(), filesystem.Options{}); err == nil {
		fsName = fsys.Version()
		fsys.Close()
	}
	switch o.Via {
	case "api":
		s, err = apiPass(ctx, o, v, f, blocks)
	case "webdav":
		s, err = webdavPass(ctx, o, v, f, blocks)
	default:
		s, err = mountPass(ctx, o, v, f, blocks)
	}
	return s, fsName, err
}

// apiPass goes through the filesystem layer in this process.
func apiPass(ctx context.Context, o Options, v *volume.Volume, container *os.File, blocks *blockSource) (Speed, error) {
	var s Speed
	fsys, err := filesystem.OpenAs("vfat", v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		return s, err
	}
	defer fsys.Close()
	ffs, ok := fsys.(filesystem.Writer)
	if !ok {
		return s, filesystem.ErrReadOnly
	}
	f, err := ffs.Create("/bench.bin")
	if err != nil {
		return s, err
	}
	if s.WriteBPS, err = timedWrite(ctx, f, o.Size, blocks); err != nil {
		f.Close()
		return s, err
	}
	if err := f.Close(); err != nil {
		return s, err
	}
	diskio.DropCache(container)
	r, err := ffs.Open("/bench.bin")
	if err != nil {
		return s, err
	}
	defer r.Close()
	s.ReadBPS, err = timedRead(ctx, r, o.Size, blocks)
	return s, err
}

// mountPass mounts the volume's files in a temporary directory and uses
// them with ordinary system calls, as any program would.
func mountPass(ctx context.Context, o Options, v *volume.Volume, container *os.File, blocks *blockSource) (Speed, error) {
	var s Speed
	dir, err := os.MkdirTemp("", "cryptvol-iobench-")
	if err != nil {
		return s, err
	}
	defer os.Remove(dir)
	m, err := mount.MountFiles(dir, v, mount.Options{FsName: "cryptvol-iobench", Container: o.Target})
	if err != nil {
		return s, err
	}
	defer func() {
		if m.Unmount() != nil {
			m.Shutdown()
		}
	}()
	p := filepath.Join(dir, "bench.bin")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return s, err
	}
	s.WriteBPS, err = timedWrite(ctx, f, o.Size, blocks)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s, err
	}
	diskio.DropCache(container)
	if f, err = os.Open(p); err != nil {
		return s, err
	}
	diskio.DropCache(f)
	s.ReadBPS, err = timedRead(ctx, f, o.Size, blocks)
	f.Close()
	return s, err
}
