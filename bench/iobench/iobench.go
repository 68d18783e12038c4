// Package iobench is the engine of `cryptvol benchmark io`: what
// encryption costs on a disk, measured by writing and reading the same
// blocks of a file or block device raw and through a new VeraCrypt volume
// holding a FAT filesystem, used through a FUSE mount (package mount) or
// in process (package fat). iobench.sh in this directory adds dd and
// gocryptfs on the same disk.
package iobench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/diskio"
	"github.com/cryptvol/cryptvol/internal/stats"
	"github.com/cryptvol/cryptvol/mount"
)

// Options describe one raw-versus-encrypted I/O measurement.
type Options struct {
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
	// way users see it), "api" (the fat package in this process) or
	// "webdav" (served as 'cryptvol serve --webdav' serves it, moved by
	// an HTTP client on loopback) or "nfs" (served as 'cryptvol serve
	// --nfs' serves it, moved by an NFSv3 client on loopback); with
	// webdav and nfs the FUSE mount is measured in the same run beside
	// it, where FUSE is available.
	Via string
	// Runs is how many times the raw and the encrypted pass are repeated,
	// alternately (default 3); each figure is the median of its runs,
	// with their min–max, so that a disk shared with other work shows as
	// a wide range rather than as a difference between raw and encrypted.
	Runs int
	// Progress, if set, is told each phase as it starts.
	Progress func(phase string)
}

// Speed is one pass's result, in bytes per second: WriteBPS and ReadBPS
// are medians over the runs (before issue 28: the fastest run), the Min
// and Max fields their range (0 in the JSON of older versions).
type Speed struct {
	WriteBPS    float64 `json:"write_bps"`
	ReadBPS     float64 `json:"read_bps"`
	WriteMinBPS float64 `json:"write_min_bps"`
	WriteMaxBPS float64 `json:"write_max_bps"`
	ReadMinBPS  float64 `json:"read_min_bps"`
	ReadMaxBPS  float64 `json:"read_max_bps"`
}

// speeds collects one pass's runs.
type speeds struct{ write, read []float64 }

func (s *speeds) add(t Speed) {
	s.write = append(s.write, t.WriteBPS)
	s.read = append(s.read, t.ReadBPS)
}

// summary is the median of the runs with their range.
func (s *speeds) summary() Speed {
	var r Speed
	r.WriteBPS, r.WriteMinBPS, r.WriteMaxBPS = stats.MedianRange(s.write)
	r.ReadBPS, r.ReadMinBPS, r.ReadMaxBPS = stats.MedianRange(s.read)
	return r
}

// Result is the measurement: the same target written and read raw
// and through an encrypted volume, and the overhead of encryption in
// percent (negative: slower than raw).
type Result struct {
	Target     string `json:"target"`
	TargetKind string `json:"target_kind"` // "file" or "device"
	Size       int64  `json:"size"`
	BlockSize  int    `json:"block_size"`
	Via        string `json:"via"`
	Format     string `json:"format"`
	Encryption string `json:"encryption"`
	Mode       string `json:"mode"`
	Filesystem string `json:"filesystem"`
	Runs       int    `json:"runs"`
	Raw        Speed  `json:"raw"`
	Encrypted  Speed  `json:"encrypted"`
	// Mount is the FUSE mount measured beside a WebDAV or NFS pass (nil
	// otherwise, or where FUSE is not available).
	Mount         *Speed  `json:"mount,omitempty"`
	WriteOverhead float64 `json:"write_overhead_percent"`
	ReadOverhead  float64 `json:"read_overhead_percent"`
}

// ErrOptions explains options (or a target) the benchmark refuses.
var ErrOptions = errors.New("invalid I/O benchmark options")

// BenchIO writes o.Size bytes in o.BlockSize writes followed by fsync, then
// reads them back after dropping them from the page cache, first straight
// to the target and then through a new VeraCrypt volume (quick-created on
// the same target) holding a FAT filesystem, mounted or through the API;
// o.Runs times, alternately. A file target is created with its blocks
// allocated, so that, like a block device, both passes overwrite the same
// blocks of the disk.
func Run(ctx context.Context, o Options) (Result, error) {
	r := Result{Target: o.Target, Size: o.Size, BlockSize: o.BlockSize, Via: o.Via, Format: "veracrypt", Mode: "xts"}
	if o.BlockSize < 512 || o.BlockSize%512 != 0 || o.Size < int64(o.BlockSize) {
		return r, fmt.Errorf("%w: block size %d (want a multiple of 512) and size %d (want at least one block)", ErrOptions, o.BlockSize, o.Size)
	}
	o.Size -= o.Size % int64(o.BlockSize)
	r.Size = o.Size
	if o.Encryption == "" {
		o.Encryption = "AES"
	}
	r.Encryption = o.Encryption
	if c, err := ciphers.LookupChain(o.Encryption); err != nil || c.Legacy {
		return r, fmt.Errorf("%w: unknown or legacy encryption %q", ErrOptions, o.Encryption)
	}
	if o.Via != "mount" && o.Via != "api" && o.Via != "webdav" && o.Via != "nfs" {
		return r, fmt.Errorf("%w: via %q (want mount, api, webdav or nfs)", ErrOptions, o.Via)
	}
	if o.Via == "mount" {
		if err := mount.Available(); err != nil {
			return r, err
		}
	}
	besideMount := (o.Via == "webdav" || o.Via == "nfs") && mount.Available() == nil
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
		if err := diskio.CreateAllocated(o.Target, benchContainerSize(o.Size)); err != nil {
			return r, err
		}
	}
	// Data to write: a random pool read at shifting offsets, so that no
	// two blocks are equal (a deduplicating store cannot shortcut them)
	// and nothing is generated while the clock runs.
	pool := diskio.AlignedBuffer(o.BlockSize + 1<<20)
	rand.Read(pool)
	blocks := &blockSource{pool: pool, bs: o.BlockSize}

	if o.Runs <= 0 {
		o.Runs = 3
	}
	r.Runs = o.Runs
	var raws, encs, mounts speeds
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
		raws.add(raw)
		encs.add(enc)
		if besideMount {
			progress(fmt.Sprintf("run %d/%d, FUSE mount", run, o.Runs))
			mo := o
			mo.Via = "mount"
			m, _, err := encryptedPass(ctx, mo, device, blocks)
			if err != nil {
				return r, fmt.Errorf("mount pass: %w", err)
			}
			mounts.add(m)
		}
	}
	r.Raw, r.Encrypted = raws.summary(), encs.summary()
	if len(mounts.write) > 0 {
		m := mounts.summary()
		r.Mount = &m
	}
	r.WriteOverhead = overhead(r.Encrypted.WriteBPS, r.Raw.WriteBPS)
	r.ReadOverhead = overhead(r.Encrypted.ReadBPS, r.Raw.ReadBPS)
	return r, nil
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
	return false, fmt.Errorf("%w: %s is neither a regular file nor a block device", ErrOptions, p)
}
