package volume

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/cryptvol/cryptvol/sector"
)

// ModeState is a driver's own description of how a data area is encrypted,
// from which its Reopener builds the sector mode again: the cipher chain
// and mode in the driver's spelling (tcrypt: "xts:AES-Twofish", LUKS:
// "aes-xts-plain64"), the sector size and the data-area keys. Key is
// secret.
type ModeState struct {
	Spec       string
	SectorSize int
	Key        []byte
}

// A Reopener is a driver that can rebuild the sector mode of a volume it
// unlocked from the ModeState it put in Unlocked.State, so that the volume
// can be opened again from a Snapshot without its credentials.
type Reopener interface {
	ReopenMode(s ModeState) (sector.Mode, error)
}

// ErrNoSnapshot: the volume's driver cannot describe its keys for a later
// reopen (Volume.Snapshot).
var ErrNoSnapshot = errors.New("this kind of volume cannot be kept unlocked")

// ErrNotSameVolume: a snapshot was taken of another file than the one it is
// reopened on: another file at that path, a copy, or the same file with a
// changed header.
var ErrNotSameVolume = errors.New("the file is not the volume that was unlocked (replaced, copied, or its header changed)")

// FileID identifies a file on its machine: device and inode on Unix,
// volume serial number and file index on Windows.
type FileID struct {
	Dev, Ino uint64
}

// Identity binds a snapshot to one file: its FileID, its size and a
// SHA-256 of its header areas (what lies before and after the data area,
// up to 128 KiB on each side: a TrueCrypt/VeraCrypt header group with the
// hidden header, a LUKS header; for a data area in segments, the start of
// every stretch of the device no data segment maps: BitLocker's boot
// sector and metadata blocks). Writing files into the volume leaves it
// as it is; a copy of the file (another inode), another file put in its
// place, or a new password (a rewritten header) changes it.
type Identity struct {
	File       FileID
	Size       int64
	HeaderHash [sha256.Size]byte
}

// headerSpan is how far from each end of the data area the header hash
// reaches.
const headerSpan = 128 << 10

// identityOf computes the identity of the file behind dev for a data area
// at dataOffset, or, when segs is set, in those segments.
func identityOf(dev Device, dataOffset, dataSize int64, segs []Segment) (Identity, error) {
	fd, ok := dev.(*FileDevice)
	if !ok {
		return Identity{}, fmt.Errorf("%w: the volume is not on a file", ErrNoSnapshot)
	}
	id, err := fileID(fd.File)
	if err != nil {
		return Identity{}, err
	}
	size := dev.Size()
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
	var ranges [][2]int64
	if len(segs) == 0 {
		head := min(dataOffset, headerSpan, size)
		tail := max(dataOffset+dataSize, size-headerSpan, head)
		ranges = [][2]int64{{0, head}, {tail, size}}
	} else {
		for _, g := range unmapped(segs, size) {
			ranges = append(ranges, [2]int64{g[0], min(g[1], g[0]+headerSpan)})
		}
	}
	for _, r := range ranges {
		if r[1] <= r[0] {
			continue
		}
		if _, err := io.Copy(h, io.NewSectionReader(dev, r[0], r[1]-r[0])); err != nil {
			return Identity{}, fmt.Errorf("reading the header areas: %w", err)
		}
	}
	out := Identity{File: id, Size: size}
	h.Sum(out.HeaderHash[:0])
	return out, nil
}

// unmapped returns the stretches of a size-byte device that no data
// (non-zero) segment of segs reads or writes, in order: where a format
// that keeps its metadata inside the data area has its headers.
func unmapped(segs []Segment, size int64) [][2]int64 {
	var used [][2]int64
	for _, s := range segs {
		if !s.Zero {
			used = append(used, [2]int64{s.DevOffset, s.DevOffset + s.Size})
		}
	}
	sort.Slice(used, func(i, j int) bool { return used[i][0] < used[j][0] })
	var out [][2]int64
	at := int64(0)
	for _, u := range used {
		if u[0] > at {
			out = append(out, [2]int64{at, min(u[0], size)})
		}
		at = max(at, u[1])
	}
	if at < size {
		out = append(out, [2]int64{at, size})
	}
	return out
}

// FileIDOf returns the FileID of the file at path, without reading it: the
// key under which an unlocked volume is kept.
func FileIDOf(path string) (FileID, error) {
	f, err := openFileID(path)
	if err != nil {
		return FileID{}, err
	}
	defer f.Close()
	return fileID(f)
}

// Snapshot is what reopening an unlocked volume without its credentials
// needs: which driver, its ModeState (with the data-area keys), where the
// data area is, the header facts, and the identity of the file it belongs
// to. It never holds the password. It is secret: keep it only where no one
// else can read it (the kernel keyring, a per-user agent), never on disk,
// and Wipe it when done.
type Snapshot struct {
	Driver                         string
	Mode                           ModeState
	DataOffset, DataSize           int64
	FirstSector                    uint64
	ReadOnly                       bool
	ProtectedOffset, ProtectedSize int64
	// Segments is the data area's layout when the driver gave one
	// (Unlocked.Segments), nil otherwise.
	Segments  []Segment
	Info      Info
	MasterKey []byte
	Identity  Identity
}

// Wipe zeroes the keys.
func (s *Snapshot) Wipe() {
	clear(s.Mode.Key)
	clear(s.MasterKey)
}

// Snapshot describes the open volume for Reopen. It fails with
// ErrNoSnapshot for volumes whose driver cannot rebuild its mode, and for
// volumes that are not on a file.
func (v *Volume) Snapshot() (*Snapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, errors.New("volume: snapshot of a closed volume")
	}
	if _, ok := v.driver.(Reopener); !ok || v.u.State == nil {
		return nil, ErrNoSnapshot
	}
	id, err := identityOf(v.dev, v.u.DataOffset, v.u.DataSize, v.u.Segments)
	if err != nil {
		return nil, err
	}
	st := *v.u.State
	st.Key = bytes.Clone(st.Key)
	return &Snapshot{
		Driver:          v.driver.Name(),
		Mode:            st,
		DataOffset:      v.u.DataOffset,
		DataSize:        v.u.DataSize,
		FirstSector:     v.u.FirstSector,
		ReadOnly:        v.u.ReadOnly,
		ProtectedOffset: v.u.ProtectedOffset,
		ProtectedSize:   v.u.ProtectedSize,
		Segments:        append([]Segment(nil), v.u.Segments...),
		Info:            v.u.Info,
		MasterKey:       bytes.Clone(v.u.MasterKey),
		Identity:        id,
	}, nil
}

// Reopen opens the volume at path from a snapshot, after checking that the
// file is the one the snapshot was taken of (ErrNotSameVolume otherwise).
// No key is derived: it takes as long as opening the file. o.ReadOnly and
// o.Warn apply; the search options do not. The snapshot stays the caller's
// (to Wipe).
func Reopen(ctx context.Context, path string, s *Snapshot, o Options) (*Volume, error) {
	var d Driver
	for _, x := range Drivers() {
		if x.Name() == s.Driver {
			d = x
		}
	}
	r, ok := d.(Reopener)
	if !ok {
		return nil, fmt.Errorf("%w: no driver %q to reopen it", ErrNoSnapshot, s.Driver)
	}
	dev, err := OpenDevice(path, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	return reopenOn(ctx, r, d, dev, s, o)
}

// ReopenFile is Reopen on a file already open (and locked) by another
// process that handed it over, e.g. inherited across exec: the lock held
// on that open file is the lock of this volume too, so none is taken
// again (the volume's lock is already held; a second flock on a new open
// of the file would conflict with it). f is the Volume's from here on:
// closing the Volume closes it.
func ReopenFile(ctx context.Context, f *os.File, s *Snapshot, o Options) (*Volume, error) {
	var d Driver
	for _, x := range Drivers() {
		if x.Name() == s.Driver {
			d = x
		}
	}
	r, ok := d.(Reopener)
	if !ok {
		f.Close()
		return nil, fmt.Errorf("%w: no driver %q to reopen it", ErrNoSnapshot, s.Driver)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, err
	}
	return reopenOn(ctx, r, d, &FileDevice{File: f, size: size}, s, o)
}

// File is the open container file under the volume (nil for a volume on
// another kind of device), for handing it to a process that reopens the
// volume with ReopenFile. It stays the Volume's.
func (v *Volume) File() *os.File {
	if fd, ok := v.dev.(*FileDevice); ok {
		return fd.File
	}
	return nil
}

func reopenOn(ctx context.Context, r Reopener, d Driver, dev *FileDevice, s *Snapshot, o Options) (*Volume, error) {
	id, err := identityOf(dev, s.DataOffset, s.DataSize, s.Segments)
	if err == nil && !sameIdentity(id, s.Identity) {
		err = ErrNotSameVolume
	}
	if err == nil {
		err = ctx.Err()
	}
	var m sector.Mode
	if err == nil {
		m, err = r.ReopenMode(s.Mode)
	}
	if err != nil {
		dev.Close()
		return nil, err
	}
	u := &Unlocked{
		Mode:            m,
		DataOffset:      s.DataOffset,
		DataSize:        s.DataSize,
		FirstSector:     s.FirstSector,
		Info:            s.Info,
		ReadOnly:        s.ReadOnly,
		ProtectedOffset: s.ProtectedOffset,
		ProtectedSize:   s.ProtectedSize,
		Segments:        append([]Segment(nil), s.Segments...),
		MasterKey:       bytes.Clone(s.MasterKey),
	}
	v, err := newVolume(dev, u, o)
	if err != nil {
		clear(u.MasterKey)
		dev.Close()
		return nil, err
	}
	v.driver = d
	v.closers = append(v.closers, dev.Close)
	return v, nil
}

func sameIdentity(a, b Identity) bool {
	return a.File == b.File && a.Size == b.Size && subtle.ConstantTimeCompare(a.HeaderHash[:], b.HeaderHash[:]) == 1
}

// snapshotMagic starts an encoded snapshot (format version 2: version 1
// and the data area's segments after it). Version 1, which a running
// agent of an older build may hold, is still read.
var (
	snapshotMagic   = []byte("cryptvol-snapshot-2\n")
	snapshotMagicV1 = []byte("cryptvol-snapshot-1\n")
)

// MarshalBinary encodes the snapshot: a magic line, then length-prefixed
// fields; the non-secret header facts as JSON. The result is as secret as
// the snapshot: wipe it when done.
func (s *Snapshot) MarshalBinary() ([]byte, error) {
	info, err := json.Marshal(s.Info)
	if err != nil {
		return nil, err
	}
	var b []byte
	b = append(b, snapshotMagic...)
	putBytes := func(p []byte) {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	putInt := func(v uint64) { b = binary.AppendUvarint(b, v) }
	putBytes([]byte(s.Driver))
	putBytes([]byte(s.Mode.Spec))
	putInt(uint64(s.Mode.SectorSize))
	putBytes(s.Mode.Key)
	putInt(uint64(s.DataOffset))
	putInt(uint64(s.DataSize))
	putInt(s.FirstSector)
	ro := uint64(0)
	if s.ReadOnly {
		ro = 1
	}
	putInt(ro)
	putInt(uint64(s.ProtectedOffset))
	putInt(uint64(s.ProtectedSize))
	putBytes(info)
	putBytes(s.MasterKey)
	putInt(s.Identity.File.Dev)
	putInt(s.Identity.File.Ino)
	putInt(uint64(s.Identity.Size))
	putBytes(s.Identity.HeaderHash[:])
	putInt(uint64(len(s.Segments)))
	for _, g := range s.Segments {
		putInt(uint64(g.Offset))
		putInt(uint64(g.Size))
		zero := uint64(0)
		if g.Zero {
			zero = 1
		}
		putInt(zero)
		putInt(uint64(g.DevOffset))
		putInt(g.FirstSector)
		putBytes([]byte(g.Name))
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary made. The keys are copied out
// of b, which the caller may wipe afterwards.
func (s *Snapshot) UnmarshalBinary(b []byte) error {
	bad := errors.New("volume: not an encoded snapshot")
	v2 := bytes.HasPrefix(b, snapshotMagic)
	if !v2 && !bytes.HasPrefix(b, snapshotMagicV1) {
		return bad
	}
	b = b[len(snapshotMagic):]
	var failed bool
	getInt := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			failed = true
			return 0
		}
		b = b[n:]
		return v
	}
	getBytes := func() []byte {
		n := getInt()
		if failed || n > uint64(len(b)) {
			failed = true
			return nil
		}
		p := bytes.Clone(b[:n])
		b = b[n:]
		return p
	}
	var t Snapshot
	t.Driver = string(getBytes())
	t.Mode.Spec = string(getBytes())
	t.Mode.SectorSize = int(getInt())
	t.Mode.Key = getBytes()
	t.DataOffset = int64(getInt())
	t.DataSize = int64(getInt())
	t.FirstSector = getInt()
	t.ReadOnly = getInt() == 1
	t.ProtectedOffset = int64(getInt())
	t.ProtectedSize = int64(getInt())
	info := getBytes()
	t.MasterKey = getBytes()
	t.Identity.File.Dev = getInt()
	t.Identity.File.Ino = getInt()
	t.Identity.Size = int64(getInt())
	hh := getBytes()
	if v2 {
		n := getInt()
		for i := uint64(0); i < n && !failed; i++ {
			var g Segment
			g.Offset = int64(getInt())
			g.Size = int64(getInt())
			g.Zero = getInt() == 1
			g.DevOffset = int64(getInt())
			g.FirstSector = getInt()
			g.Name = string(getBytes())
			t.Segments = append(t.Segments, g)
		}
	}
	if failed || len(b) != 0 || len(hh) != sha256.Size {
		t.Wipe()
		return bad
	}
	copy(t.Identity.HeaderHash[:], hh)
	if err := json.Unmarshal(info, &t.Info); err != nil {
		t.Wipe()
		return bad
	}
	*s = t
	return nil
}
