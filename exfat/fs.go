package exfat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fatcore"
	"io"
	"math"
	"sync"
	"time"
)

// Options tune Open.
type Options struct {
	// ReadOnly refuses every change even when the device is writable.
	ReadOnly bool
	// Location is the time zone new timestamps are written in (with its
	// UTC offset recorded beside them) and timestamps without a valid UTC
	// offset are read in; nil means time.Local.
	Location *time.Location
	// Now returns the current time for new timestamps; nil means time.Now.
	Now func() time.Time
	// NoRecovery opens a volume left dirty as it is, without recovering
	// what its last session left half-way (which a writable Open
	// otherwise does, see recover.go), so that Check reports it.
	NoRecovery bool
}

// FS is an open exFAT filesystem. All methods are safe for concurrent use;
// they are serialised by one lock.
//
// Besides the methods listed with it, FS has those of the path layer fat
// and exfat share (internal/fatcore.Paths; go doc does not list them):
// Open, Create and OpenFile (returning *File), ReadFile, WriteFile,
// MkdirAll, IOFS, Stat (returning *FileInfo), ReadDir, Mkdir, Remove,
// RemoveAll, Chtimes, SetCreateTime, SetAttributes (taking an Attr) and
// Rename (errors are *os.LinkError values).
type FS struct {
	paths // Open, Create, OpenFile, ReadFile, WriteFile, MkdirAll, IOFS

	mu sync.Mutex
	// renameTails, while RenameAll runs, collects the second halves of
	// its renames, for one barrier before them all.
	renameTails *[]renameTail
	dev         io.ReaderAt
	w           io.WriterAt // nil when read-only
	g           *geometry
	fat         *fatTable
	bm          *bitmap
	up          upcaseTable
	loc         *time.Location
	now         func() time.Time

	boot       []byte // main boot sector as on disk
	fromBackup bool   // the main boot region was unreadable; the backup is in use
	wasDirty   bool   // VolumeDirty was set when the volume was opened
	dirtyDisk  bool   // VolumeDirty is set on disk now
	bitmapCh   chain  // clusters of the allocation bitmap
	bitmapAt   int    // root slot of the bitmap entry
	upcaseRaw  []byte // the table as stored
	upcaseCh   chain
	upcaseSum  uint32 // TableChecksum of the up-case entry
	upcaseAt   int

	root *dirCache
	dirs map[uint32]*dirCache // directories by first cluster

	nodes    fatcore.Nodes[*node] // open files: handles, uncommitted changes, removed while open
	modified bool
	err      error // first write error: the filesystem is then fail-stop
	// verified: a walk in this session found no shared clusters;
	// needsRepair, once it found some, refuses changes that free clusters.
	verified    bool
	needsRepair error
	recovery    *CheckReport // what the recovery at Open did, if anything
	closed      bool
	zero        []byte
}

// Open opens the exFAT filesystem on the first size bytes of dev. It is
// writable when dev also implements io.WriterAt. Open checks the boot
// region (falling back on the backup one), loads the FAT, the allocation
// bitmap and the up-case table into memory and reads the root directory;
// errors wrap ErrNotExFAT or ErrCorrupt.
func Open(dev io.ReaderAt, size int64) (*FS, error) {
	return OpenWithOptions(dev, size, Options{})
}

// OpenWithOptions is Open with options.
func OpenWithOptions(dev io.ReaderAt, size int64, opts Options) (*FS, error) {
	if dev == nil {
		return nil, errors.New("exfat: nil device")
	}
	if size < 24*512 {
		return nil, fmt.Errorf("%w: device of %d bytes is smaller than the boot regions", ErrNotExFAT, size)
	}
	regionLen := min(int64(2*bootRegionSectors*4096), size)
	raw := make([]byte, regionLen)
	if err := fatcore.ReadFull(dev, raw, 0); err != nil {
		return nil, fmt.Errorf("exfat: reading boot region: %w", err)
	}
	fs := &FS{
		dev:   dev,
		loc:   opts.Location,
		now:   opts.Now,
		dirs:  make(map[uint32]*dirCache),
		nodes: fatcore.NewNodes[*node](),
	}
	fs.paths = fatcore.NewPaths(fs.files())
	g, err := parseBootRegion(raw, size)
	if err != nil {
		// The backup region is 12 sectors further on, for whichever sector
		// size the volume has.
		for shift := uint(9); shift <= 12 && g == nil; shift++ {
			off := int64(bootRegionSectors) << shift
			if off+int64(bootRegionSectors)<<shift > regionLen {
				break
			}
			if bg, berr := parseBootRegion(raw[off:], size); berr == nil && bg.sectorShift == shift {
				g = bg
				fs.fromBackup = true
				raw = raw[off:]
			}
		}
		if g == nil {
			return nil, err
		}
	}
	fs.g = g
	fs.boot = append([]byte(nil), raw[:g.sectorSize]...)
	fs.wasDirty = g.flags&flagVolumeDirty != 0
	fs.dirtyDisk = fs.wasDirty
	if fs.loc == nil {
		fs.loc = time.Local
	}
	if fs.now == nil {
		fs.now = time.Now
	}
	if w, ok := dev.(io.WriterAt); ok && !opts.ReadOnly {
		fs.w = w
	}
	// The FAT and the bitmap are held in memory (4 bytes and 1 bit per
	// cluster).
	if fatBytes := (uint64(g.clusterCount) + 2) * 4; fatBytes > math.MaxInt/2 {
		return nil, fmt.Errorf("%w: a FAT of %d clusters (%d bytes) does not fit in memory here", ErrUnsupported, g.clusterCount, fatBytes)
	}
	fatRaw := make([]byte, (int64(g.clusterCount)+2)*4)
	if err := fs.readAt(fatRaw, g.activeFATOffset()); err != nil {
		return nil, fmt.Errorf("exfat: reading FAT: %w", err)
	}
	fs.fat = newFATTable(fatRaw, g.clusterCount, g.sectorSize)
	if err := fs.loadRoot(); err != nil {
		return nil, err
	}
	if fs.w != nil && fs.wasDirty && !opts.NoRecovery {
		if err := fs.recoverInterrupted(); err != nil {
			return nil, fmt.Errorf("exfat: recovering after an interrupted session: %w", err)
		}
	}
	return fs, nil
}

// loadRoot reads the root directory and the bitmap and up-case table it
// points to.
func (fs *FS) loadRoot() error {
	g := fs.g
	ch, _, err := fs.loadChain(g.rootCluster, -1, false)
	if err != nil {
		return fmt.Errorf("root directory: %w", err)
	}
	if int64(ch.N)<<g.clusterShift > maxDirBytes {
		return corruptf("root directory chain of %d clusters is longer than 256 MiB", ch.N)
	}
	d := &dirCache{fs: fs, ch: ch}
	if err := fs.readDirData(d); err != nil {
		return fmt.Errorf("root directory: %w", err)
	}
	// The up-case table must be known before file entries can be indexed,
	// so the system entries are found first.
	fs.bitmapAt, fs.upcaseAt = -1, -1
	le := binary.LittleEndian
	for i := 0; i < d.slots(); i++ {
		p := d.data[i*entrySize : (i+1)*entrySize]
		if p[0] == typeEnd {
			break
		}
		switch p[0] {
		case typeBitmap:
			// With two FATs there are two bitmaps; bit 0 of BitmapFlags
			// says which FAT each goes with.
			if fs.bitmapAt < 0 && int(p[1]&1) == g.activeFATIndex() {
				fs.bitmapAt = i
			}
		case typeUpcase:
			if fs.upcaseAt < 0 {
				fs.upcaseAt = i
			}
		}
	}
	if fs.bitmapAt < 0 {
		return corruptf("root directory has no allocation bitmap entry")
	}
	if fs.upcaseAt < 0 {
		return corruptf("root directory has no up-case table entry")
	}
	bp := d.data[fs.bitmapAt*entrySize:]
	bmLen := le.Uint64(bp[24:])
	if bmLen < (uint64(g.clusterCount)+7)/8 || bmLen > uint64(g.clusterCount)/8+uint64(g.clusterSize) {
		return corruptf("allocation bitmap of %d bytes for %d clusters", bmLen, g.clusterCount)
	}
	cs := int64(g.clusterSize)
	if fs.bitmapCh, _, err = fs.loadChain(le.Uint32(bp[20:]), (int64(bmLen)+cs-1)/cs, false); err != nil {
		return fmt.Errorf("allocation bitmap: %w", err)
	}
	bmRaw := make([]byte, bmLen)
	if err := fs.readChain(fs.bitmapCh, bmRaw, 0); err != nil {
		return fmt.Errorf("allocation bitmap: %w", err)
	}
	fs.bm = newBitmap(bmRaw, g.clusterCount, g.sectorSize)
	up := d.data[fs.upcaseAt*entrySize:]
	upLen := le.Uint64(up[24:])
	if upLen == 0 || upLen > 128<<10 {
		return corruptf("up-case table of %d bytes", upLen)
	}
	if fs.upcaseCh, _, err = fs.loadChain(le.Uint32(up[20:]), (int64(upLen)+cs-1)/cs, false); err != nil {
		return fmt.Errorf("up-case table: %w", err)
	}
	fs.upcaseRaw = make([]byte, upLen)
	if err := fs.readChain(fs.upcaseCh, fs.upcaseRaw, 0); err != nil {
		return fmt.Errorf("up-case table: %w", err)
	}
	fs.upcaseSum = le.Uint32(up[4:])
	if got := upcaseChecksum(fs.upcaseRaw); got != fs.upcaseSum {
		return corruptf("up-case table checksum is %#08x, its entry says %#08x", got, fs.upcaseSum)
	}
	fs.up = expandUpcase(fs.upcaseRaw)
	d.parse()
	fs.root = d
	fs.dirs[g.rootCluster] = d
	return nil
}

func (g *geometry) activeFATIndex() int {
	if g.numFATs == 2 && g.flags&flagActiveFAT != 0 {
		return 1
	}
	return 0
}

// readChain reads len(p) bytes at byte offset off of a chain.
func (fs *FS) readChain(ch chain, p []byte, off int64) error {
	return ch.Pieces(p, off, int64(fs.g.clusterSize), fs.g.clusterOffset, fs.readAt)
}

// writeChain writes p at byte offset off of a chain.
func (fs *FS) writeChain(ch chain, p []byte, off int64) error {
	return ch.Pieces(p, off, int64(fs.g.clusterSize), fs.g.clusterOffset, fs.writeAt)
}

func (fs *FS) readDirData(d *dirCache) error {
	d.data = make([]byte, int64(d.ch.N)<<fs.g.clusterShift)
	return fs.readChain(d.ch, d.data, 0)
}

// readAt reads p at off, refusing anything outside the volume.
func (fs *FS) readAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > fs.g.volumeBytes {
		return corruptf("read of %d bytes at %d is outside the volume (%d bytes)", len(p), off, fs.g.volumeBytes)
	}
	return fatcore.ReadFull(fs.dev, p, off)
}

// writeAt writes p at off. The first write after Open or Sync is preceded
// by setting VolumeDirty in the main boot sector (section 3.1.13.2), which
// Sync clears once everything is on disk. After a failed write every later
// one fails too: the in-memory state no longer matches the disk.
func (fs *FS) writeAt(p []byte, off int64) error {
	if err := fs.writable(); err != nil {
		return err
	}
	fs.modified = true
	if !fs.dirtyDisk {
		if err := fs.writeFlags(fs.g.flags|flagVolumeDirty, fs.g.percentInUse); err != nil {
			return err
		}
		fs.dirtyDisk = true
	}
	return fs.rawWrite(p, off)
}

// writeFlags rewrites the main boot sector's VolumeFlags and PercentInUse,
// the two fields the boot checksum leaves out.
func (fs *FS) writeFlags(flags uint16, percent byte) error {
	b := fs.boot
	binary.LittleEndian.PutUint16(b[offVolumeFlags:], flags)
	b[offPercentInUse] = percent
	if err := fs.rawWrite(b, 0); err != nil {
		return err
	}
	fs.g.flags, fs.g.percentInUse = flags, percent
	return nil
}

func (fs *FS) rawWrite(p []byte, off int64) error {
	if fs.err != nil {
		return fs.err
	}
	if off < 0 || off+int64(len(p)) > fs.g.volumeBytes {
		return corruptf("write of %d bytes at %d is outside the volume (%d bytes)", len(p), off, fs.g.volumeBytes)
	}
	if err := fatcore.WriteFull(fs.w, p, off); err != nil {
		fs.err = fmt.Errorf("exfat: write of %d bytes at %d failed, no further changes will be made: %w", len(p), off, err)
		return fs.err
	}
	return nil
}

func (fs *FS) writable() error {
	if fs.closed {
		return errClosed
	}
	if fs.w == nil {
		return ErrReadOnly
	}
	if fs.fromBackup {
		return fmt.Errorf("%w: the main boot region is damaged (Check(true) restores it from the backup)", ErrReadOnly)
	}
	if fs.err == nil && fs.needsRepair != nil {
		return fs.needsRepair // cross-links found: see ensureUnshared
	}
	return fs.err
}

// flushFAT writes the dirty FAT sectors (to both FATs of a TexFAT volume
// only the active one is kept: the other is left as it is).
func (fs *FS) flushFAT() error {
	if fs.fat.dirty.n == 0 {
		return nil
	}
	if err := fs.writable(); err != nil {
		return err
	}
	return fs.fat.dirty.flush(fs.fat.raw, fs.g.activeFATOffset(), fs.writeAt)
}

// flushBitmap writes the dirty sectors of the allocation bitmap.
func (fs *FS) flushBitmap() error {
	if fs.bm.dirty.n == 0 {
		return nil
	}
	if err := fs.writable(); err != nil {
		return err
	}
	return fs.bm.dirty.flush(fs.bm.raw, 0, func(p []byte, off int64) error {
		return fs.writeChain(fs.bitmapCh, p, off)
	})
}

// writeChainFAT links ch's clusters in the FAT (in memory), ending it.
func (fs *FS) writeChainFAT(ch chain) {
	for _, r := range ch.Runs {
		for c := r.First; c < r.First+r.Count-1; c++ {
			fs.fat.set(c, c+1)
		}
	}
	for i := 0; i+1 < len(ch.Runs); i++ {
		r := ch.Runs[i]
		fs.fat.set(r.First+r.Count-1, ch.Runs[i+1].First)
	}
	if l := ch.Last(); l != 0 {
		fs.fat.set(l, eocCluster)
	}
}

// allocate takes n clusters, preferring one run at near.
func (fs *FS) allocate(n, near uint32) ([]run, error) {
	if fs.bm.free < n {
		return nil, fmt.Errorf("%w: need %d clusters, %d free", ErrNoSpace, n, fs.bm.free)
	}
	return fs.bm.allocate(n, near), nil
}

// freeChain frees a chain's clusters in the bitmap (in memory).
func (fs *FS) freeChain(ch chain) {
	for _, r := range ch.Runs {
		fs.bm.setRange(r.First, r.Count, false)
	}
}

// zeros returns a buffer of zeros of at least a cluster and 1 MiB.
func (fs *FS) zeros() []byte {
	if fs.zero == nil {
		fs.zero = make([]byte, max(fs.g.clusterSize, 1<<20))
	}
	return fs.zero
}

func (fs *FS) zeroCluster() []byte { return fs.zeros()[:fs.g.clusterSize] }

// openDir returns the cached directory for entry e of parent, loading it.
func (fs *FS) openDir(parent *dirCache, e *entry) (*dirCache, error) {
	if d, ok := fs.dirs[e.start]; ok {
		for a := parent; a != nil; a = a.parent {
			if a == d {
				return nil, corruptf("directory %s/%s points back to %s (cluster %d)", parent.path(), e.name, d.path(), e.start)
			}
		}
		d.parent, d.self = parent, e
		return d, nil
	}
	d := &dirCache{fs: fs, parent: parent, self: e}
	cs := int64(fs.g.clusterSize)
	ch, _, err := fs.loadChain(e.start, (int64(e.size)+cs-1)/cs, e.noFatChain())
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", d.path(), err)
	}
	d.ch = ch
	if err := fs.readDirData(d); err != nil {
		return nil, fmt.Errorf("directory %s: %w", d.path(), err)
	}
	d.parse()
	fs.dirs[e.start] = d
	return d, nil
}

// dirTree is how the shared path code walks this package's directories.
func (fs *FS) dirTree() fatcore.Dirs[*dirCache, *entry] {
	return fatcore.Dirs[*dirCache, *entry]{Root: fs.root, Lookup: (*dirCache).lookup, IsDir: (*entry).isDir, Open: fs.openDir, NotDir: ErrNotDir}
}

// resolve returns the parent directory of name and its entry (nil when the
// last component does not exist, or when name is the root).
func (fs *FS) resolve(name string) (parent *dirCache, e *entry, base string, err error) {
	return fs.dirTree().Resolve(name)
}

// Serial returns the volume serial number.
func (fs *FS) Serial() uint32 { return fs.g.serial }

// Label returns the volume label ("" when there is none).
func (fs *FS) Label() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.root.label
}

// ClusterSize returns the cluster size in bytes.
func (fs *FS) ClusterSize() int { return fs.g.clusterSize }

// Dirty reports whether the volume's VolumeDirty flag was set when it was
// opened: it was not cleanly unmounted (or a crash interrupted a change),
// and Check should be run.
func (fs *FS) Dirty() bool { return fs.wasDirty }

// Statfs describes the space on the volume.
type Statfs = fatcore.Statfs

// Statfs returns the volume's size and free space.
func (fs *FS) Statfs() Statfs {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.NewStatfs(fs.g.clusterSize, fs.g.clusterCount, fs.bm.free)
}

// Sync commits every open file's pending changes, writes the FAT and the
// bitmap, clears VolumeDirty (unless it was set when the volume was
// opened: only Check clears that) with PercentInUse brought up to date,
// and syncs the device if it has a Sync method.
func (fs *FS) Sync() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.sync()
}

func (fs *FS) sync() error {
	if fs.closed {
		return errClosed
	}
	if fs.w == nil {
		return nil
	}
	for n := range fs.nodes.DirtyNodes() {
		if err := fs.commit(n); err != nil {
			return err
		}
	}
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if fs.err != nil {
		return fs.err
	}
	if err := fs.markClean(); err != nil {
		return err
	}
	if err := fatcore.SyncDevice(fs.w); err != nil {
		return fmt.Errorf("exfat: syncing device: %w", err)
	}
	return nil
}

// markClean clears VolumeDirty if this session set it, and no file has
// changes still in memory.
func (fs *FS) markClean() error {
	if !fs.dirtyDisk || fs.wasDirty || fs.nodes.AnyDirty() {
		return nil
	}
	// Everything else must be on stable storage before the flag says so.
	if err := fatcore.SyncDevice(fs.w); err != nil {
		return fmt.Errorf("exfat: syncing device: %w", err)
	}
	if err := fs.writeFlags(fs.g.flags&^flagVolumeDirty, fs.percentInUse()); err != nil {
		return err
	}
	fs.dirtyDisk = false
	return nil
}

func (fs *FS) percentInUse() byte {
	c := uint64(fs.g.clusterCount)
	return byte((c - uint64(fs.bm.free)) * 100 / c)
}

// Close syncs and closes the filesystem. Open files are committed; using
// them afterwards returns an error. The device is not closed.
func (fs *FS) Close() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return errClosed
	}
	err := fs.sync()
	fs.closed = true
	return err
}

// Device is what a resize reads and writes (a volume.Volume, an
// *os.File); when it can Sync, each step is flushed before the next.
type Device = fatcore.Device
