package fat

import (
	"encoding/binary"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fatcore"
	"io"
	"sync"
	"time"
)

// Options tune Open.
type Options struct {
	// ReadOnly refuses every change even when the device is writable.
	ReadOnly bool
	// Location is the time zone FAT's zone-less timestamps are read and
	// written in; nil means time.Local, as mtools and the Linux kernel
	// (with its default mount options) do.
	Location *time.Location
	// Now returns the current time for new timestamps; nil means time.Now.
	Now func() time.Time
	// NoRecovery opens a volume that was not closed cleanly as it is,
	// without recovering what its last session left half-way (which a
	// writable Open otherwise does), so that Check reports it. Until
	// Check(true) has run, changes are then refused.
	NoRecovery bool
}

// FS is an open FAT filesystem. All methods are safe for concurrent use;
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

	mu   sync.Mutex
	dev  io.ReaderAt
	w    io.WriterAt // nil when read-only
	g    *geometry
	fat  *fatTable
	loc  *time.Location
	now  func() time.Time
	root *dirCache
	dirs map[uint32]*dirCache // directories by first cluster

	nodes     fatcore.Nodes[*node] // open files: handles, uncommitted changes, removed while open
	infoStale bool                 // FSInfo on disk is unknown or wrong
	modified  bool                 // something was written since Open
	fsInfoOK  bool                 // the FSInfo sector exists and is valid
	err       error                // first write error: the filesystem is then fail-stop
	closed    bool
	zero      []byte
	// mkdirSlots, set by MakeRoom around its Mkdir, is the slots the new
	// directory is made with (0: one cluster).
	mkdirSlots int

	// Volume state (volstate.go).
	dirtyOnDisk bool         // the dirty flag is set on disk
	bootDirty   bool         // ... in the boot sector's state byte
	noStateFlag bool         // the volume has no dirty flag at all
	unrecovered bool         // opened dirty and not recovered (yet)
	markedBad   bool         // the needs-repair flag is set on disk
	needsRepair error        // non-nil: changes are refused with it
	verified    bool         // a walk in this session found no shared clusters
	repairing   bool         // Check(true) runs: changes allowed despite needsRepair
	recovery    *CheckReport // what the recovery at Open did
}

// Open opens the FAT filesystem on the first size bytes of dev. The
// filesystem is writable when dev also implements io.WriterAt. Open reads
// and checks the boot sector and loads the FAT into memory; errors wrap
// ErrNotFAT or ErrCorrupt.
func Open(dev io.ReaderAt, size int64) (*FS, error) {
	return OpenWithOptions(dev, size, Options{})
}

// OpenWithOptions is Open with options.
func OpenWithOptions(dev io.ReaderAt, size int64, opts Options) (*FS, error) {
	if dev == nil {
		return nil, fmt.Errorf("fat: nil device")
	}
	boot := make([]byte, 512)
	if size < 512 {
		return nil, fmt.Errorf("%w: device of %d bytes is smaller than a boot sector", ErrNotFAT, size)
	}
	if err := fatcore.ReadFull(dev, boot, 0); err != nil {
		return nil, fmt.Errorf("fat: reading boot sector: %w", err)
	}
	g, err := parseBootSector(boot, size)
	if err != nil {
		return nil, err
	}
	fs := &FS{
		dev:   dev,
		g:     g,
		loc:   opts.Location,
		now:   opts.Now,
		dirs:  make(map[uint32]*dirCache),
		nodes: fatcore.NewNodes[*node](),
	}
	fs.paths = fatcore.NewPaths(fs.files())
	if fs.loc == nil {
		fs.loc = time.Local
	}
	if fs.now == nil {
		fs.now = time.Now
	}
	if w, ok := dev.(io.WriterAt); ok && !opts.ReadOnly {
		fs.w = w
	}
	copyIdx := 0
	if !g.mirrored {
		copyIdx = g.activeFAT
	}
	raw := make([]byte, g.fatSectors*int64(g.bytesPerSector))
	if err := fs.readAt(raw, g.fatCopyOffset(copyIdx)); err != nil {
		return nil, fmt.Errorf("fat: reading FAT: %w", err)
	}
	fs.fat = newFATTable(g, raw)
	if g.typ == FAT32 {
		fs.readFSInfo()
	}
	root, err := fs.loadRoot()
	if err != nil {
		return nil, err
	}
	fs.root = root
	fs.readState(boot)
	if fs.w != nil {
		if err := fs.startSession(opts.NoRecovery); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// readAt reads p at off, refusing anything outside the filesystem.
func (fs *FS) readAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > fs.g.fsBytes {
		return corruptf("read of %d bytes at %d is outside the filesystem (%d bytes)", len(p), off, fs.g.fsBytes)
	}
	return fatcore.ReadFull(fs.dev, p, off)
}

// writeAt writes p at off. Writes outside the filesystem are refused, and
// after the first failed write every later one fails too: the in-memory
// state no longer matches the disk, so the filesystem stops changing it.
//
// The first write after Open (or after the volume was last marked clean)
// is preceded by setting the volume's dirty flag, so that the next Open
// knows to recover whatever a crash interrupts; and, on FAT32, by marking
// the FSInfo free count unknown, so that a crash never leaves a stale count
// behind (fsck.fat and every driver accept and recompute an unknown
// count); Sync writes the true count back.
func (fs *FS) writeAt(p []byte, off int64) error {
	if err := fs.canWrite(); err != nil {
		return err
	}
	fs.modified = true
	if !fs.dirtyOnDisk {
		if err := fs.markVolumeDirty(); err != nil {
			return err
		}
	}
	if fs.g.typ == FAT32 && fs.fsInfoOK && !fs.infoStale {
		fs.infoStale = true
		if err := fs.writeFSInfo(0xFFFFFFFF); err != nil {
			return err
		}
	}
	return fs.rawWrite(p, off)
}

func (fs *FS) rawWrite(p []byte, off int64) error {
	if fs.err != nil {
		return fs.err
	}
	if off < 0 || off+int64(len(p)) > fs.g.fsBytes {
		return corruptf("write of %d bytes at %d is outside the filesystem (%d bytes)", len(p), off, fs.g.fsBytes)
	}
	if err := fatcore.WriteFull(fs.w, p, off); err != nil {
		fs.err = fmt.Errorf("fat: write of %d bytes at %d failed, no further changes will be made: %w", len(p), off, err)
		return fs.err
	}
	return nil
}

// fatCopies returns the offsets of the FAT copies that are kept up to date.
func (fs *FS) fatCopies() []int64 {
	g := fs.g
	if !g.mirrored {
		return []int64{g.fatCopyOffset(g.activeFAT)}
	}
	c := make([]int64, g.numFATs)
	for i := range c {
		c[i] = g.fatCopyOffset(i)
	}
	return c
}

// flushFAT writes the dirty FAT sectors to every copy.
func (fs *FS) flushFAT() error {
	if fs.fat.ndirty == 0 {
		fs.fat.endQuarantine()
		return nil
	}
	if err := fs.canWrite(); err != nil {
		return err
	}
	return fs.fat.flush(fs.fatCopies(), fs.writeAt)
}

// allocate takes n clusters as one chain, flushing the FAT first if only
// quarantined clusters stand between the request and success.
func (fs *FS) allocate(n uint32, near uint32) ([]run, error) {
	if fs.fat.available() < n && fs.fat.free >= n {
		if err := fs.flushFAT(); err != nil {
			return nil, err
		}
	}
	if fs.fat.available() < n {
		return nil, fmt.Errorf("%w: need %d clusters, %d free", ErrNoSpace, n, fs.fat.available())
	}
	return fs.fat.allocate(n, near, nil)
}

func (fs *FS) zeroCluster() []byte {
	if fs.zero == nil {
		fs.zero = make([]byte, fs.g.clusterSize)
	}
	return fs.zero
}

// writable checks that a change may start: the filesystem is open,
// writable, has not failed, and is not known to need repair.
func (fs *FS) writable() error {
	if err := fs.canWrite(); err != nil {
		return err
	}
	if fs.needsRepair != nil && !fs.repairing {
		return fs.needsRepair
	}
	return nil
}

// canWrite checks that writing is possible at all: what committing work
// already done needs (Close of a file written before the volume was found
// to need repair still records its size).
func (fs *FS) canWrite() error {
	if fs.closed {
		return errClosed
	}
	if fs.w == nil {
		return ErrReadOnly
	}
	return fs.err
}

// readFSInfo checks the FAT32 FSInfo sector and takes its next-free hint.
func (fs *FS) readFSInfo() {
	g := fs.g
	if g.fsInfoSector == 0 {
		return
	}
	b := make([]byte, 512)
	if err := fs.readAt(b, int64(g.fsInfoSector)*int64(g.bytesPerSector)); err != nil {
		return
	}
	if string(b[0:4]) != "RRaA" || string(b[484:488]) != "rrAa" {
		return
	}
	fs.fsInfoOK = true
	if next := binary.LittleEndian.Uint32(b[492:]); fs.fat.valid(next) {
		fs.fat.next = next
	}
	if free := binary.LittleEndian.Uint32(b[488:]); free != fs.fat.free {
		fs.infoStale = true // wrong or unknown on disk: Sync will fix it
	}
}

// writeFSInfo rewrites the free count and next-free hint, keeping the rest
// of the sector.
func (fs *FS) writeFSInfo(free uint32) error {
	g := fs.g
	off := int64(g.fsInfoSector) * int64(g.bytesPerSector)
	b := make([]byte, 512)
	if err := fs.readAt(b, off); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[488:], free)
	binary.LittleEndian.PutUint32(b[492:], fs.fat.next)
	return fs.rawWrite(b, off)
}

// loadRoot reads the root directory.
func (fs *FS) loadRoot() (*dirCache, error) {
	g := fs.g
	d := &dirCache{fs: fs}
	if g.typ != FAT32 {
		d.fixed = true
		d.data = make([]byte, g.rootDirBytes)
		if err := fs.readAt(d.data, g.rootDirOffset); err != nil {
			return nil, fmt.Errorf("fat: reading root directory: %w", err)
		}
		d.parse()
		return d, nil
	}
	if err := fs.loadDirData(d, g.rootCluster); err != nil {
		return nil, fmt.Errorf("root directory: %w", err)
	}
	d.parse()
	fs.dirs[g.rootCluster] = d
	return d, nil
}

// loadDirData reads the clusters of the directory starting at cluster c.
func (fs *FS) loadDirData(d *dirCache, c uint32) error {
	ch, err := fs.fat.loadChain(c)
	if err != nil {
		return err
	}
	if int64(ch.N)*int64(fs.g.clusterSize) > maxDirSlots*32 {
		return corruptf("directory chain at cluster %d is %d clusters long, more than a directory can be", c, ch.N)
	}
	d.ch = ch
	d.data = make([]byte, int(ch.N)*fs.g.clusterSize)
	for _, r := range ch.Runs {
		off := int(r.Pos) * fs.g.clusterSize
		if err := fs.readAt(d.data[off:off+int(r.Count)*fs.g.clusterSize], fs.g.clusterOffset(r.First)); err != nil {
			return err
		}
	}
	return nil
}

// openDir returns the cached directory for entry e of parent, loading it.
func (fs *FS) openDir(parent *dirCache, e *entry) (*dirCache, error) {
	if e.damageKind == damageData {
		return nil, corruptf("directory %s/%s: %s", parent.path(), e.name, e.damage)
	}
	if d, ok := fs.dirs[e.start]; ok {
		// On a damaged volume an entry can point back at a directory above
		// it; following it would make the tree a loop.
		for a := parent; a != nil; a = a.parent {
			if a == d {
				return nil, corruptf("directory %s/%s points back to %s (cluster %d)", parent.path(), e.name, d.path(), e.start)
			}
		}
		d.parent, d.self = parent, e
		return d, nil
	}
	d := &dirCache{fs: fs, parent: parent, self: e}
	if err := fs.loadDirData(d, e.start); err != nil {
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

// Type returns FAT12, FAT16 or FAT32.
func (fs *FS) Type() Type { return fs.g.typ }

// Serial returns the volume serial number (0 if the boot sector has none).
func (fs *FS) Serial() uint32 { return fs.g.serial }

// Label returns the volume label: the root directory's label entry if
// there is one, else the boot sector's, with "NO NAME" meaning none.
func (fs *FS) Label() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	l := fs.root.label
	if l == "" {
		l = fs.g.label
	}
	if l == "NO NAME" {
		return ""
	}
	return l
}

// ClusterSize returns the cluster size in bytes.
func (fs *FS) ClusterSize() int { return fs.g.clusterSize }

// Statfs describes the space on the volume.
type Statfs = fatcore.Statfs

// Statfs returns the volume's size and free space.
func (fs *FS) Statfs() Statfs {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.NewStatfs(fs.g.clusterSize, fs.g.clusterCount, fs.fat.free)
}

// Sync commits every open file's pending changes, writes the FAT and the
// FAT32 free-cluster hints, and syncs the device if it has a Sync method.
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
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if fs.err != nil {
		return fs.err
	}
	// The FSInfo count is rewritten only when this session changed
	// something: a Check of a crashed volume must not "correct" it to a
	// count that includes lost clusters.
	if fs.g.typ == FAT32 && fs.fsInfoOK && fs.infoStale && fs.modified {
		if err := fs.writeFSInfo(fs.fat.free); err != nil {
			return err
		}
		fs.infoStale = false
	}
	if !fs.nodes.Busy() {
		if err := fs.markVolumeClean(); err != nil {
			return err
		}
	}
	if err := fatcore.SyncDevice(fs.w); err != nil {
		return fmt.Errorf("fat: syncing device: %w", err)
	}
	return nil
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
	if err == nil && fs.w != nil && fs.nodes.Busy() {
		// The handles die with the filesystem: removed files give their
		// clusters back, and the volume is then consistent.
		for n := range fs.nodes.Orphans() {
			for _, c := range []uint32{n.ch.First(), n.oldStart} {
				if c != 0 {
					fs.freeChain(c)
				}
			}
			fs.nodes.Forget(n)
		}
		if err = fs.flushFAT(); err == nil {
			err = fs.markVolumeClean()
		}
	}
	fs.closed = true
	return err
}

// Device is what a resize reads and writes (a volume.Volume, an
// *os.File); when it can Sync, each step is flushed before the next.
type Device = fatcore.Device
