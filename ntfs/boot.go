package ntfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Sentinel errors; every error the package returns wraps one of these or
// an io/fs sentinel.
var (
	// ErrNotNTFS means the boot sector is not an NTFS boot sector.
	ErrNotNTFS = errors.New("ntfs: not an NTFS filesystem")
	// ErrCorrupt means an on-disk structure is inconsistent or points
	// outside the filesystem.
	ErrCorrupt = errors.New("ntfs: corrupt filesystem")
	// ErrUnsupported means a file uses a feature this reader does not
	// implement.
	ErrUnsupported = errors.New("ntfs: unsupported feature")
)

// Well-known MFT record numbers.
const (
	recMFT       = 0
	recVolume    = 3
	recRoot      = 5
	recBitmap    = 6
	firstUserRec = 16
)

// FS is an open NTFS filesystem.
type FS struct {
	dev  io.ReaderAt
	size int64

	sectorSize    int64
	clusterSize   int64
	recordSize    int64
	indexSize     int64 // default index block size (each index root says its own)
	totalClusters int64
	backupBoot    int64 // byte offset of the backup boot sector (past the counted sectors)
	serial        uint64

	mft   *stream // $MFT's unnamed $DATA
	label string

	mu      sync.Mutex
	records map[uint64]*mftFile
	dirs    map[uint64]*dirCache
	free    int64 // free clusters, -1 until counted
}

// Open reads the boot sector, the $MFT's own record and $Volume.
func Open(dev io.ReaderAt, size int64) (*FS, error) {
	b := make([]byte, 512)
	if n, err := dev.ReadAt(b, 0); n < len(b) {
		if err == nil || err == io.EOF {
			return nil, ErrNotNTFS
		}
		return nil, err
	}
	if string(b[3:11]) != "NTFS    " {
		return nil, ErrNotNTFS
	}
	le := binary.LittleEndian
	f := &FS{dev: dev, size: size, records: map[uint64]*mftFile{}, dirs: map[uint64]*dirCache{}, free: -1}
	f.sectorSize = int64(le.Uint16(b[0x0B:]))
	spc := int64(b[0x0D])
	if spc > 0x80 { // 2^(256-n), for clusters of 64 KiB and more
		if 256-spc > 20 {
			return nil, fmt.Errorf("%w: sectors per cluster byte %#x", ErrCorrupt, spc)
		}
		spc = 1 << (256 - spc)
	}
	f.clusterSize = f.sectorSize * spc
	if f.sectorSize < 256 || f.sectorSize > 4096 || f.sectorSize&(f.sectorSize-1) != 0 ||
		spc == 0 || spc&(spc-1) != 0 || f.clusterSize > 2<<20 {
		return nil, fmt.Errorf("%w: sector size %d, %d sectors per cluster", ErrCorrupt, f.sectorSize, spc)
	}
	unit := func(v int8) int64 { // clusters, or 2^-v bytes when negative
		if v < 0 {
			// -v in int: negating int8 -128 gives -128 again, a
			// negative shift (a fuzzed boot sector found it).
			if n := -int(v); n <= 20 {
				return 1 << n
			}
			return 0
		}
		return int64(v) * f.clusterSize
	}
	f.recordSize = unit(int8(b[0x40]))
	f.indexSize = unit(int8(b[0x44]))
	if f.recordSize < 256 || f.recordSize > 65536 || f.recordSize&(f.recordSize-1) != 0 {
		return nil, fmt.Errorf("%w: MFT record size %d", ErrCorrupt, f.recordSize)
	}
	totalSectors := le.Uint64(b[0x28:])
	if totalSectors > uint64(size/f.sectorSize)+1 {
		// The backup boot sector lives in the sector past the count,
		// so the count may be one short of the device, never more.
		return nil, fmt.Errorf("%w: %d sectors on a %d-byte device", ErrCorrupt, totalSectors, size)
	}
	f.totalClusters = int64(totalSectors) / spc
	f.backupBoot = int64(totalSectors) * f.sectorSize
	f.serial = le.Uint64(b[0x48:])
	mftLCN := le.Uint64(b[0x30:])
	if mftLCN == 0 || mftLCN >= uint64(f.totalClusters) {
		return nil, fmt.Errorf("%w: $MFT at cluster %d", ErrCorrupt, mftLCN)
	}
	if err := f.loadMFT(int64(mftLCN) * f.clusterSize); err != nil {
		return nil, err
	}
	if err := f.loadVolume(); err != nil {
		return nil, err
	}
	return f, nil
}

// readAt reads exactly len(p) bytes at off inside the filesystem.
func (f *FS) readAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > f.size || off+int64(len(p)) < off {
		return fmt.Errorf("%w: read of %d bytes at %d outside the filesystem", ErrCorrupt, len(p), off)
	}
	n, err := f.dev.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// loadMFT reads $MFT's record from the boot sector's location and builds
// the map of the MFT itself, following its attribute list if the MFT is
// so fragmented that its runs need more than one record.
func (f *FS) loadMFT(off int64) error {
	buf := make([]byte, f.recordSize)
	if err := f.readAt(buf, off); err != nil {
		return fmt.Errorf("$MFT record: %w", err)
	}
	rec, err := f.parseRecord(buf, recMFT)
	if err != nil {
		return fmt.Errorf("$MFT record: %w", err)
	}
	// Bootstrap: the runs in record 0 map at least the records that hold
	// the rest of the $MFT's runs.
	f.mft, err = f.newStream(rec.attrs, atData, "", recMFT)
	if err != nil {
		return fmt.Errorf("$MFT: %w", err)
	}
	if rec.hasList {
		file, err := f.completeFile(rec)
		if err != nil {
			return fmt.Errorf("$MFT: %w", err)
		}
		if f.mft, err = f.newStream(file.attrs, atData, "", recMFT); err != nil {
			return fmt.Errorf("$MFT: %w", err)
		}
	}
	if f.mft.resident != nil || f.mft.size < 16*f.recordSize {
		return fmt.Errorf("%w: $MFT of %d bytes", ErrCorrupt, f.mft.size)
	}
	return nil
}

// loadVolume reads the label from $Volume.
func (f *FS) loadVolume() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := f.file(recVolume)
	if err != nil {
		return fmt.Errorf("$Volume: %w", err)
	}
	for _, a := range file.attrs {
		if a.typ == atVolumeName && a.resident {
			f.label = utf16String(a.value)
		}
	}
	return nil
}

// Label is the volume label.
func (f *FS) Label() string { return f.label }

// Serial is the volume serial number (blkid prints it as 16 hex digits,
// Windows' "vol" its low 32 bits).
func (f *FS) Serial() uint64 { return f.serial }

// ClusterSize is the allocation unit in bytes.
func (f *FS) ClusterSize() int { return int(f.clusterSize) }

// Statfs is the size and use of the filesystem.
type Statfs struct {
	ClusterSize                 int
	TotalClusters, FreeClusters int64
	TotalBytes, FreeBytes       int64
}

// Statfs counts the free clusters in $Bitmap (once; the result is kept).
// On a damaged $Bitmap the free count is 0.
func (f *FS) Statfs() Statfs {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free < 0 {
		f.free = f.countFree()
	}
	return Statfs{
		ClusterSize: int(f.clusterSize), TotalClusters: f.totalClusters, FreeClusters: f.free,
		TotalBytes: f.totalClusters * f.clusterSize, FreeBytes: f.free * f.clusterSize,
	}
}

func (f *FS) countFree() int64 {
	file, err := f.file(recBitmap)
	if err != nil {
		return 0
	}
	s, err := f.newStream(file.attrs, atData, "", recBitmap)
	if err != nil {
		return 0
	}
	var used int64
	buf := make([]byte, 64<<10)
	for off := int64(0); off*8 < f.totalClusters; off += int64(len(buf)) {
		n, err := s.readAt(buf, off)
		if n == 0 || err != nil && err != io.EOF {
			return 0
		}
		bits := min(int64(n)*8, f.totalClusters-off*8)
		for i := int64(0); i < bits/8; i++ {
			used += int64(popcount[buf[i]])
		}
		for i := bits / 8 * 8; i < bits; i++ {
			used += int64(buf[i/8] >> (i % 8) & 1)
		}
	}
	return max(f.totalClusters-used, 0)
}

var popcount = func() (t [256]uint8) {
	for i := range t {
		for b := i; b != 0; b &= b - 1 {
			t[i]++
		}
	}
	return
}()

// Close releases the caches. The device is the caller's to close.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records, f.dirs = map[uint64]*mftFile{}, map[uint64]*dirCache{}
	return nil
}
