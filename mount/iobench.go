package mount

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
	"unsafe"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// IOBenchOptions describe one raw-versus-encrypted I/O measurement.
type IOBenchOptions struct {
	// Target is a file path (created, and removed afterwards) or a block
	// device (overwritten from its start).
	Target string
	// Size is how many bytes each pass writes and reads back, BlockSize
	// the size of each write(2) and read(2).
	Size      int64
	BlockSize int
	// Encryption is the VeraCrypt cipher or cascade of the test volume.
	Encryption string
	// Via is "mount" (a FUSE mount of the volume's FAT filesystem, the
	// way users see it) or "api" (the fat package in this process).
	Via string
	// Runs is how many times the raw and the encrypted pass are repeated,
	// alternately (default 3); the fastest of each counts, so that a disk
	// shared with other work is measured at its best for both.
	Runs int
	// Progress, if set, is told each phase as it starts.
	Progress func(phase string)
}

// IOSpeed is one pass's result, in bytes per second.
type IOSpeed struct {
	WriteBPS float64 `json:"write_bps"`
	ReadBPS  float64 `json:"read_bps"`
}

// IOBenchResult is the measurement: the same target written and read raw
// and through an encrypted volume, and the overhead of encryption in
// percent (negative: slower than raw).
type IOBenchResult struct {
	Target        string  `json:"target"`
	TargetKind    string  `json:"target_kind"` // "file" or "device"
	Size          int64   `json:"size"`
	BlockSize     int     `json:"block_size"`
	Via           string  `json:"via"`
	Format        string  `json:"format"`
	Encryption    string  `json:"encryption"`
	Mode          string  `json:"mode"`
	Filesystem    string  `json:"filesystem"`
	Runs          int     `json:"runs"`
	Raw           IOSpeed `json:"raw"`
	Encrypted     IOSpeed `json:"encrypted"`
	WriteOverhead float64 `json:"write_overhead_percent"`
	ReadOverhead  float64 `json:"read_overhead_percent"`
}

// ErrBenchOptions explains options (or a target) the benchmark refuses.
var ErrBenchOptions = errors.New("invalid I/O benchmark options")

// BenchIO writes o.Size bytes in o.BlockSize writes followed by fsync, then
// reads them back after dropping them from the page cache, first straight
// to the target and then through a new VeraCrypt volume (quick-created on
// the same target) holding a FAT filesystem, mounted or through the API;
// o.Runs times, alternately. A file target is created with its blocks
// allocated, so that, like a block device, both passes overwrite the same
// blocks of the disk.
func BenchIO(ctx context.Context, o IOBenchOptions) (IOBenchResult, error) {
	r := IOBenchResult{Target: o.Target, Size: o.Size, BlockSize: o.BlockSize, Via: o.Via, Format: "veracrypt", Mode: "xts"}
	if o.BlockSize < 512 || o.BlockSize%512 != 0 || o.Size < int64(o.BlockSize) {
		return r, fmt.Errorf("%w: block size %d (want a multiple of 512) and size %d (want at least one block)", ErrBenchOptions, o.BlockSize, o.Size)
	}
	o.Size -= o.Size % int64(o.BlockSize)
	r.Size = o.Size
	if o.Encryption == "" {
		o.Encryption = "AES"
	}
	r.Encryption = o.Encryption
	if c, err := ciphers.LookupChain(o.Encryption); err != nil || c.Legacy {
		return r, fmt.Errorf("%w: unknown or legacy encryption %q", ErrBenchOptions, o.Encryption)
	}
	if o.Via != "mount" && o.Via != "api" {
		return r, fmt.Errorf("%w: via %q (want mount or api)", ErrBenchOptions, o.Via)
	}
	if o.Via == "mount" {
		if err := Available(); err != nil {
			return r, err
		}
	}
	progress := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	device, err := isBlockDevice(o.Target)
	if err != nil {
		return r, err
	}
	r.TargetKind = "file"
	if device {
		r.TargetKind = "device"
	} else {
		// A file target is allocated first, as a partition (the seed
		// measurement wrote to one) or a normally created container is:
		// both passes then measure the disk, not the host filesystem's
		// block allocation.
		defer os.Remove(o.Target)
		if err := allocateTarget(o.Target, benchContainerSize(o.Size)); err != nil {
			return r, err
		}
	}
	// Data to write: a random pool read at shifting offsets, so that no
	// two blocks are equal (a deduplicating store cannot shortcut them)
	// and nothing is generated while the clock runs.
	pool := alignedBuffer(o.BlockSize + 1<<20)
	rand.Read(pool)
	blocks := &blockSource{pool: pool, bs: o.BlockSize}

	if o.Runs <= 0 {
		o.Runs = 3
	}
	r.Runs = o.Runs
	for run := 1; run <= o.Runs; run++ {
		progress(fmt.Sprintf("run %d/%d, raw", run, o.Runs))
		raw, err := rawPass(ctx, o, device, blocks)
		if err != nil {
			return r, fmt.Errorf("raw pass: %w", err)
		}
		progress(fmt.Sprintf("run %d/%d, encrypted", run, o.Runs))
		enc, fsName, err := encryptedPass(ctx, o, device, blocks)
		if err != nil {
			return r, fmt.Errorf("encrypted pass: %w", err)
		}
		r.Filesystem = fsName
		r.Raw.keepBest(raw)
		r.Encrypted.keepBest(enc)
	}
	r.WriteOverhead = overhead(r.Encrypted.WriteBPS, r.Raw.WriteBPS)
	r.ReadOverhead = overhead(r.Encrypted.ReadBPS, r.Raw.ReadBPS)
	return r, nil
}

func (s *IOSpeed) keepBest(t IOSpeed) {
	s.WriteBPS = max(s.WriteBPS, t.WriteBPS)
	s.ReadBPS = max(s.ReadBPS, t.ReadBPS)
}

func overhead(enc, raw float64) float64 {
	if raw == 0 {
		return 0
	}
	return (enc - raw) / raw * 100
}

func isBlockDevice(p string) (bool, error) {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		return true, nil
	case fi.Mode().IsRegular():
		return false, nil
	}
	return false, fmt.Errorf("%w: %s is neither a regular file nor a block device", ErrBenchOptions, p)
}

// alignedBuffer returns n bytes starting on a 4 KiB boundary.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+4096)
	skip := int(4096-uintptr(unsafe.Pointer(&b[0]))%4096) % 4096
	return b[skip : skip+n : skip+n]
}

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
// *os.File, a file in a FUSE mount, or a *fat.File.
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
func rawPass(ctx context.Context, o IOBenchOptions, device bool, blocks *blockSource) (IOSpeed, error) {
	var s IOSpeed
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
	dropCache(r)
	s.ReadBPS, err = timedRead(ctx, r, o.Size, blocks)
	return s, err
}

// allocateTarget creates the file target with size bytes allocated.
func allocateTarget(p string, size int64) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = allocate(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
func encryptedPass(ctx context.Context, o IOBenchOptions, device bool, blocks *blockSource) (IOSpeed, string, error) {
	var s IOSpeed
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
		return s, "", fmt.Errorf("%w: the target has %d bytes; the encrypted pass needs %d", ErrBenchOptions, end, csize)
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
	if err := fat.Format(v, v.Size(), fat.FormatOptions{Label: "IOBENCH"}); err != nil {
		return s, "", err
	}
	fsName := "FAT"
	if ffs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: true}); err == nil {
		fsName = ffs.Type().String()
		ffs.Close()
	}
	if o.Via == "api" {
		s, err = apiPass(ctx, o, v, f, blocks)
	} else {
		s, err = mountPass(ctx, o, v, f, blocks)
	}
	return s, fsName, err
}

// apiPass goes through the fat package in this process.
func apiPass(ctx context.Context, o IOBenchOptions, v *volume.Volume, container *os.File, blocks *blockSource) (IOSpeed, error) {
	var s IOSpeed
	ffs, err := fat.Open(v, v.Size())
	if err != nil {
		return s, err
	}
	defer ffs.Close()
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
	dropCache(container)
	if f, err = ffs.Open("/bench.bin"); err != nil {
		return s, err
	}
	defer f.Close()
	s.ReadBPS, err = timedRead(ctx, f, o.Size, blocks)
	return s, err
}

// mountPass mounts the volume's files in a temporary directory and uses
// them with ordinary system calls, as any program would.
func mountPass(ctx context.Context, o IOBenchOptions, v *volume.Volume, container *os.File, blocks *blockSource) (IOSpeed, error) {
	var s IOSpeed
	dir, err := os.MkdirTemp("", "cryptvol-iobench-")
	if err != nil {
		return s, err
	}
	defer os.Remove(dir)
	m, err := MountFiles(dir, v, Options{FsName: "cryptvol-iobench", Container: o.Target})
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
	dropCache(container)
	if f, err = os.Open(p); err != nil {
		return s, err
	}
	dropCache(f)
	s.ReadBPS, err = timedRead(ctx, f, o.Size, blocks)
	f.Close()
	return s, err
}
