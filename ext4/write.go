package ext4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Device is what a Writer needs of the storage under the filesystem.
type Device interface {
	io.ReaderAt
	io.WriterAt
}

// Errors of the writer.
var (
	// ErrNoSpace means the blocks or inodes a change needs are not free;
	// nothing of the change was written.
	ErrNoSpace = errors.New("ext4: no space left on the filesystem")
	// ErrNameTooLong means a name is longer than 255 bytes.
	ErrNameTooLong = errors.New("ext4: name longer than 255 bytes")
	// ErrTooSmall: Format was given too few bytes for a filesystem.
	ErrTooSmall = errors.New("too small for an ext4 filesystem")
	// ErrNotEmpty means a directory to remove or replace has entries.
	ErrNotEmpty = errors.New("ext4: directory not empty")
	// ErrNeedsRecovery means the journal holds transactions not yet
	// applied (the filesystem was not unmounted cleanly) and they could
	// not be replayed here; writing around them would corrupt it. Run
	// e2fsck, or mount the filesystem once, first.
	ErrNeedsRecovery = errors.New("ext4: the journal needs recovery (run e2fsck or mount the filesystem once first)")
)

var errNoSpace = ErrNoSpace

// Writer is an ext2/3/4 filesystem open for writing. It reads as FS does
// (its methods are FS's) and changes the filesystem in place: every
// operation writes its blocks, then the bitmaps, descriptors and
// superblock, before it returns.
type Writer struct {
	*FS
	dev Device
	m   *meta
	a   *alloc
	gen uint32 // next inode generation number
	// Now is the clock of the timestamps (time.Now; tests set their own).
	Now func() time.Time
	// opTime is the one instant an operation stamps everything with.
	opTime time.Time
	// tx holds the metadata blocks the operation changed, until commit.
	tx map[uint64][]byte
	j  *journal // nil without a journal
	// dirHint is, per directory, the first block addEntry looks at.
	dirHint map[uint32]uint64
	// crashAfterCommit makes commit stop once the transaction is in the
	// journal (tests of replay).
	crashAfterCommit bool
	replay           *replayStats // what the replay at open did
	// wbFrom and wbTo are the device range of streamed file data not
	// yet handed to the device's writeback (wroteData).
	wbFrom, wbTo int64
	close        bool
}

// blockWriter is where alloc flushes to.
type blockWriter interface {
	writeBlock(blk uint64, b []byte) error
	writeAt(p []byte, off int64) error
}

// Read-only compatible features a writer must understand to keep them
// valid; any other set one makes the filesystem read-only here.
const (
	roCompatLargeFile     = 0x2
	roCompatBtreeDir      = 0x4
	roCompatVerity        = 0x8000
	roCompatOrphanPresent = 0x10000

	roCompatWritable = roCompatSparseSuper | roCompatLargeFile | roCompatBtreeDir | roCompatHugeFile |
		roCompatGdtCsum | roCompatDirNlink | roCompatExtraIsize | roCompatMetadataCsum | roCompatVerity

	incompatWritable = incompatFiletype | incompatExtents | incompat64bit | incompatFlexBG |
		incompatCsumSeed | incompatLargeDir | incompatInlineData | incompatEncrypt
)

// OpenWritable opens the filesystem on dev for reading and writing. A
// filesystem whose journal needs recovery is replayed first, as the kernel
// does on mount (ErrNeedsRecovery when the journal cannot be replayed
// here). It refuses (ErrUnsupported) features it cannot keep valid: bigalloc, meta_bg,
// quota, MMP, casefold, ea_inode, 64 KiB blocks, an orphan file with
// orphans in it. Inodes on the orphan list (files removed while open, or
// being truncated, when the system stopped) are released or truncated
// first, as the kernel does on mount.
func OpenWritable(dev Device, size int64) (*Writer, error) {
	f, err := Open(dev, size)
	if err != nil {
		return nil, err
	}
	if f.incompat&incompatRecover != 0 {
		// Replay the journal first (never write around it), then start
		// again from what it left.
		if _, err := replayJournal(dev, size); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNeedsRecovery, err)
		}
		if f, err = Open(dev, size); err != nil {
			return nil, err
		}
		if f.incompat&incompatRecover != 0 {
			return nil, ErrNeedsRecovery
		}
	}
	if bad := f.roCompat &^ roCompatWritable; bad != 0 {
		return nil, fmt.Errorf("%w: writing with read-only compatible features %#x (bigalloc, quota, project or others)", ErrUnsupported, bad)
	}
	if bad := f.incompat &^ incompatWritable; bad != 0 {
		return nil, fmt.Errorf("%w: writing with incompatible features %#x (meta_bg, MMP, ea_inode, casefold or others)", ErrUnsupported, bad)
	}
	if f.blockSize > 32768 {
		return nil, fmt.Errorf("%w: writing with %d-byte blocks", ErrUnsupported, f.blockSize)
	}
	m, err := loadMeta(f)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if st := le.Uint16(m.sb[0x3A:]); st&1 == 0 || st&2 != 0 {
		return nil, fmt.Errorf("%w: the filesystem is not clean (state %#x: mounted, or errors found); run e2fsck first", ErrUnsupported, st)
	}
	if m.csum && m.sb[0x175] != 1 {
		return nil, fmt.Errorf("%w: checksum type %d", ErrUnsupported, m.sb[0x175])
	}
	a, err := loadAlloc(m)
	if err != nil {
		return nil, err
	}
	w := &Writer{FS: f, dev: dev, m: m, a: a, gen: uint32(time.Now().UnixNano()), Now: time.Now,
		tx: map[uint64][]byte{}, dirHint: map[uint32]uint64{}}
	f.dev = txOverlay{w}
	a.tx = w.tx
	if w.j, err = w.loadJournal(); err != nil {
		return nil, err
	}
	if le.Uint32(m.sb[0xE8:]) != 0 {
		if err := w.processOrphans(); err != nil {
			return nil, fmt.Errorf("orphan list: %w", err)
		}
	}
	return w, nil
}

// writeAt writes metadata: into the pending transaction, block by block
// (committed through the journal by commit).
func (w *Writer) writeAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > w.size {
		return fmt.Errorf("%w: write at %d outside the filesystem", ErrCorrupt, off)
	}
	bs := w.blockSize
	for len(p) > 0 {
		blk := uint64(off / bs)
		in := off % bs
		n := min(int64(len(p)), bs-in)
		b, err := w.txBlock(blk)
		if err != nil {
			return err
		}
		copy(b[in:], p[:n])
		if c, ok := w.blocks[blk]; ok {
			copy(c[in:], p[:n])
		}
		p, off = p[n:], off+n
	}
	return nil
}

// txBlock is the pending copy of metadata block blk, made on first use.
func (w *Writer) txBlock(blk uint64) ([]byte, error) {
	if b, ok := w.tx[blk]; ok {
		return b, nil
	}
	b := make([]byte, w.blockSize)
	if err := w.readAt(b, int64(blk)*w.blockSize, blk); err != nil {
		return nil, err
	}
	w.tx[blk] = b
	return b, nil
}

// dataWriteAt writes file data straight to the device (ordered mode: the
// data is in place before the metadata that points at it commits).
func (w *Writer) dataWriteAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > w.size {
		return fmt.Errorf("%w: write at %d outside the filesystem", ErrCorrupt, off)
	}
	_, err := w.dev.WriteAt(p, off)
	return err
}

// writeBlock writes a metadata block.
func (w *Writer) writeBlock(blk uint64, b []byte) error {
	return w.writeAt(b[:w.blockSize], int64(blk)*w.blockSize)
}

// txOverlay is the device as the reader sees it while a transaction is
// pending: the pending metadata blocks over the device's.
type txOverlay struct{ w *Writer }

func (o txOverlay) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.w.dev.ReadAt(p, off)
	if len(o.w.tx) == 0 {
		return n, err
	}
	bs := o.w.blockSize
	for b := off / bs; b*bs < off+int64(n); b++ {
		if t, ok := o.w.tx[uint64(b)]; ok {
			lo, hi := max(off, b*bs), min(off+int64(n), (b+1)*bs)
			copy(p[lo-off:hi-off], t[lo-b*bs:hi-b*bs])
		}
	}
	return n, err
}

// flush writes the allocation state and commits the operation.
// Operations are grouped into one transaction until Sync or Close, or
// until it holds a quarter of the journal (as the kernel groups them by
// time): one commit per operation would cost four device syncs each.
func (w *Writer) flush() error {
	if err := w.a.flush(w); err != nil {
		return err
	}
	if len(w.tx) >= w.txLimit() {
		return w.commit()
	}
	return nil
}

func (w *Writer) txLimit() int {
	if w.j != nil {
		return int(w.j.len-w.j.first) / 4
	}
	return 1024
}

// writeInode stores a raw inode record with its checksum.
func (w *Writer) writeInode(ino uint32, raw []byte) error {
	if w.m.csum {
		setInodeCsum(w.m.seed, ino, raw)
	}
	blk, off := w.m.inodeLocation(ino)
	if c, ok := w.blocks[blk]; ok {
		copy(c[off:], raw)
	}
	return w.writeAt(raw, int64(blk)*w.blockSize+off)
}

// iseed is the checksum seed of inode ino's blocks.
func (w *Writer) iseed(ino uint32, raw []byte) uint32 {
	return inodeSeed(w.m.seed, ino, binary.LittleEndian.Uint32(raw[inoGeneration:]))
}

// Sync commits the pending transaction (the operations since the last
// commit) and syncs the device when it can: what was done before Sync
// survives a crash after it.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.a.flush(w); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	return w.syncDev()
}

// syncDev syncs the device when it can (an *os.File can).
func (w *Writer) syncDev() error {
	if s, ok := w.dev.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// Close flushes and releases the filesystem; the device is the caller's.
func (w *Writer) Close() error {
	err := w.Sync()
	w.FS.Close()
	return err
}

// setTime stores t in a timestamp: 32 seconds bits at secOff, and in the
// extra field (when the inode has it) two epoch bits and nanoseconds.
func setTime(raw []byte, secOff, extraOff int, t time.Time) {
	le := binary.LittleEndian
	sec := t.Unix()
	le.PutUint32(raw[secOff:], uint32(sec))
	if extraOff != 0 && len(raw) > 128 && 128+int(le.Uint16(raw[inoExtraIsize:])) >= extraOff+4 {
		le.PutUint32(raw[extraOff:], uint32((sec-int64(int32(sec)))>>32)&3|uint32(t.Nanosecond())<<2)
	}
}

// Inode field accessors on raw records.
func rawSize(raw []byte) int64 {
	le := binary.LittleEndian
	return int64(uint64(le.Uint32(raw[4:])) | uint64(le.Uint32(raw[0x6C:]))<<32)
}

func setRawSize(raw []byte, size int64) {
	le := binary.LittleEndian
	le.PutUint32(raw[4:], uint32(size))
	le.PutUint32(raw[0x6C:], uint32(uint64(size)>>32))
}

func rawLinks(raw []byte) uint16        { return binary.LittleEndian.Uint16(raw[0x1A:]) }
func setRawLinks(raw []byte, n uint16)  { binary.LittleEndian.PutUint16(raw[0x1A:], n) }
func rawFlags(raw []byte) uint32        { return binary.LittleEndian.Uint32(raw[0x20:]) }
func setRawFlags(raw []byte, fl uint32) { binary.LittleEndian.PutUint32(raw[0x20:], fl) }
func rawMode(raw []byte) uint16         { return binary.LittleEndian.Uint16(raw) }

func rawFileACL(raw []byte) uint64 {
	le := binary.LittleEndian
	return uint64(le.Uint32(raw[0x68:])) | uint64(le.Uint16(raw[0x76:]))<<32
}

// newInode builds the record of a fresh inode.
func (w *Writer) newInode(mode uint16, uid, gid uint32, links uint16) []byte {
	raw := make([]byte, w.inodeSize)
	le := binary.LittleEndian
	le.PutUint16(raw[0:], mode)
	le.PutUint16(raw[2:], uint16(uid))
	le.PutUint16(raw[0x78:], uint16(uid>>16))
	le.PutUint16(raw[0x18:], uint16(gid))
	le.PutUint16(raw[0x7A:], uint16(gid>>16))
	setRawLinks(raw, links)
	if w.inodeSize > 128 {
		extra := int(le.Uint16(w.m.sb[0x15E:])) // s_want_extra_isize
		if extra < 32 {
			extra = 32
		}
		extra = min(extra, int(w.inodeSize)-128)
		le.PutUint16(raw[inoExtraIsize:], uint16(extra))
	}
	w.gen++
	le.PutUint32(raw[inoGeneration:], w.gen)
	now := w.opTime
	setTime(raw, 0x8, 0x8C, now)
	setTime(raw, 0xC, 0x84, now)
	setTime(raw, 0x10, 0x88, now)
	setTime(raw, 0x90, 0x94, now)
	if w.incompat&incompatExtents != 0 && mode&sIFMT != sIFLNK {
		setRawFlags(raw, flagExtents)
		initExtentRoot(raw[0x28 : 0x28+60])
	}
	return raw
}

// initExtentRoot writes an empty extent tree header into i_block.
func initExtentRoot(b []byte) {
	clear(b)
	le := binary.LittleEndian
	le.PutUint16(b[0:], 0xF30A)
	le.PutUint16(b[4:], 4)
}

// lock takes the filesystem for one operation and reads the clock once
// for it.
func (w *Writer) lock() {
	w.mu.Lock()
	w.opTime = w.Now()
}
