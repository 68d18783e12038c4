package ext4

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// The journal (jbd2, in the inode s_journal_inum). Every operation's
// metadata blocks are written as one transaction: a descriptor block
// listing them, their copies, a commit block; then the journal superblock
// points at it and the filesystem is flagged needs_recovery; then the
// blocks go in place and the journal is marked empty again. A crash at any
// point leaves either the old metadata (transaction not committed: the
// journal is empty or ignored) or a committed transaction the kernel,
// e2fsck or OpenWritable's replay applies. File data is written in place
// before the commit (ordered mode). All journal structures are big-endian.

const (
	jbdMagic      = 0xC03B3998
	jbdDescriptor = 1
	jbdCommit     = 2
	jbdSuperV1    = 3
	jbdSuperV2    = 4
	jbdRevoke     = 5

	jbdFlagEscape   = 1
	jbdFlagSameUUID = 2
	jbdFlagLastTag  = 8

	jbdIncompatRevoke   = 0x1
	jbdIncompat64bit    = 0x2
	jbdIncompatAsync    = 0x4
	jbdIncompatCsumV2   = 0x8
	jbdIncompatCsumV3   = 0x10
	jbdIncompatKnown    = jbdIncompatRevoke | jbdIncompat64bit | jbdIncompatAsync | jbdIncompatCsumV3
	jbdChecksumCRC32C   = 4
	jsbChecksumOffset   = 0xFC
	jsbSize             = 1024
	commitChecksumStart = 0x10
)

var be = binary.BigEndian

// errCrashed is what commit returns when a test stops it after the
// transaction is committed, before the checkpoint (Writer.crashAfterCommit).
var errCrashed = fmt.Errorf("ext4: stopped after the commit (test crash)")

type journal struct {
	ino   uint32
	fm    *fileMap
	sb    []byte // journal superblock (its first block)
	first uint32 // first log block
	len   uint32 // blocks in the journal
	csum  bool   // checksum v3
	seed  uint32 // crc32c of the journal UUID
}

// loadJournal reads the journal superblock. A journal whose log is not
// empty (s_start != 0) needs recovery; OpenWritable has already refused
// the filesystem flag, this catches a journal left dirty without it.
func (w *Writer) loadJournal() (*journal, error) {
	if w.compat&compatHasJournal == 0 {
		return nil, nil
	}
	ino := binary.LittleEndian.Uint32(w.m.sb[0xE0:])
	if ino == 0 {
		return nil, fmt.Errorf("%w: an external journal", ErrUnsupported)
	}
	raw, err := w.m.readRawInode(ino)
	if err != nil {
		return nil, err
	}
	fm, err := w.loadMap(ino, raw)
	if err != nil {
		return nil, fmt.Errorf("journal inode: %w", err)
	}
	j := &journal{ino: ino, fm: fm, sb: make([]byte, w.blockSize)}
	blk := fm.physOf(0)
	if blk == 0 {
		return nil, fmt.Errorf("%w: the journal has no superblock", ErrCorrupt)
	}
	if err := w.readBlock(j.sb, blk); err != nil {
		return nil, err
	}
	sb := j.sb
	if be.Uint32(sb) != jbdMagic || (be.Uint32(sb[4:]) != jbdSuperV1 && be.Uint32(sb[4:]) != jbdSuperV2) {
		return nil, fmt.Errorf("%w: bad journal superblock", ErrCorrupt)
	}
	if int64(be.Uint32(sb[0xC:])) != w.blockSize {
		return nil, fmt.Errorf("%w: journal block size %d", ErrUnsupported, be.Uint32(sb[0xC:]))
	}
	j.len, j.first = be.Uint32(sb[0x10:]), be.Uint32(sb[0x14:])
	if j.first == 0 || j.len <= j.first+8 || uint64(j.len)*uint64(w.blockSize) > uint64(rawSize(raw)) {
		return nil, fmt.Errorf("%w: journal of %d blocks from %d", ErrCorrupt, j.len, j.first)
	}
	if be.Uint32(sb[4:]) == jbdSuperV2 {
		if c := be.Uint32(sb[0x24:]); c != 0 {
			return nil, fmt.Errorf("%w: journal compatible features %#x (checksum v1)", ErrUnsupported, c)
		}
		if in := be.Uint32(sb[0x28:]); in&^jbdIncompatKnown != 0 {
			return nil, fmt.Errorf("%w: journal features %#x (checksum v2 or fast commit)", ErrUnsupported, in)
		}
		if be.Uint32(sb[0x40:]) > 1 {
			return nil, fmt.Errorf("%w: a journal shared by %d filesystems", ErrUnsupported, be.Uint32(sb[0x40:]))
		}
	}
	if be.Uint32(sb[0x1C:]) != 0 {
		return nil, ErrNeedsRecovery
	}
	// As the kernel does when it mounts: checksums v3 with metadata_csum,
	// 64-bit block numbers with 64bit.
	if be.Uint32(sb[4:]) == jbdSuperV2 {
		in := be.Uint32(sb[0x28:])
		if w.m.csum {
			in |= jbdIncompatCsumV3
			sb[0x50] = jbdChecksumCRC32C
		}
		if w.incompat&incompat64bit != 0 {
			in |= jbdIncompat64bit
		}
		be.PutUint32(sb[0x28:], in)
		j.csum = in&jbdIncompatCsumV3 != 0
	}
	j.seed = crc32cRaw(^uint32(0), sb[0x30:0x40])
	return j, nil
}

func (j *journal) is64() bool { return be.Uint32(j.sb[0x28:])&jbdIncompat64bit != 0 }

// tagSize is the size of one descriptor tag.
func (j *journal) tagSize() int {
	switch {
	case j.csum:
		return 16
	case j.is64():
		return 12
	}
	return 8
}

func (w *Writer) writeJournalBlock(l uint32, b []byte) error {
	blk := w.j.fm.physOf(uint64(l))
	if blk == 0 {
		return fmt.Errorf("%w: journal block %d is a hole", ErrCorrupt, l)
	}
	return w.dataWriteAt(b, int64(blk)*w.blockSize)
}

// writeJournalSuper stores the journal superblock with its checksum.
func (w *Writer) writeJournalSuper() error {
	j := w.j
	if j.csum {
		be.PutUint32(j.sb[jsbChecksumOffset:], 0)
		be.PutUint32(j.sb[jsbChecksumOffset:], crc32cRaw(^uint32(0), j.sb[:jsbSize]))
	}
	return w.writeJournalBlock(0, j.sb)
}

// setRecoverInPlace sets or clears needs_recovery in the primary
// superblock as it is on the device (the rest of it changes only with
// the transaction's copy).
func (w *Writer) setRecoverInPlace(recover bool) error {
	sb := make([]byte, 1024)
	if _, err := w.dev.ReadAt(sb, 1024); err != nil {
		return err
	}
	le := binary.LittleEndian
	in := le.Uint32(sb[0x60:]) &^ incompatRecover
	if recover {
		in |= incompatRecover
	}
	le.PutUint32(sb[0x60:], in)
	if w.m.csum {
		le.PutUint32(sb[sbChecksum:], superblockCsum(sb))
	}
	return w.dataWriteAt(sb, 1024)
}

// commit writes the pending metadata: through the journal when there is
// one and the transaction fits, else straight in place.
func (w *Writer) commit() error {
	if len(w.tx) == 0 {
		return nil
	}
	blocks := make([]uint64, 0, len(w.tx))
	for b := range w.tx {
		blocks = append(blocks, b)
	}
	sort.Slice(blocks, func(i, k int) bool { return blocks[i] < blocks[k] })
	if w.j != nil {
		// The logged and checkpointed superblock keeps needs_recovery
		// set (as the kernel's does) until the journal is empty again.
		if b, ok := w.tx[uint64(1024/w.blockSize)]; ok {
			sb := b[1024%w.blockSize:][:1024]
			le := binary.LittleEndian
			le.PutUint32(sb[0x60:], le.Uint32(sb[0x60:])|incompatRecover)
			if w.m.csum {
				le.PutUint32(sb[sbChecksum:], superblockCsum(sb))
			}
		}
		if err := w.journalTx(blocks); err != nil {
			return err
		}
		if w.crashAfterCommit {
			return errCrashed
		}
	}
	for _, b := range blocks {
		if err := w.dataWriteAt(w.tx[b], int64(b)*w.blockSize); err != nil {
			return err
		}
	}
	clear(w.tx)
	if w.j == nil {
		clear(w.a.quarantine)
		return nil
	}
	// Checkpointed: the journal is empty again.
	if err := w.syncDev(); err != nil {
		return err
	}
	j := w.j
	be.PutUint32(j.sb[0x18:], be.Uint32(j.sb[0x18:])+1)
	be.PutUint32(j.sb[0x1C:], 0)
	if err := w.writeJournalSuper(); err != nil {
		return err
	}
	// The journal is empty on the device before the flag goes: the flag
	// clear with a live journal would make e2fsck ask.
	if err := w.syncDev(); err != nil {
		return err
	}
	if err := w.setRecoverInPlace(false); err != nil {
		return err
	}
	if err := w.syncDev(); err != nil {
		return err
	}
	clear(w.a.quarantine)
	return nil
}

// journalTx logs blocks as one committed transaction and marks the
// journal as needing recovery. A transaction larger than the journal is
// not logged (its blocks then go in place unprotected); it would take a
// write of thousands of metadata blocks in one call.
func (w *Writer) journalTx(blocks []uint64) error {
	j := w.j
	bs := int(w.blockSize)
	tail := 0
	if j.csum {
		tail = 4
	}
	perDesc := (bs - 12 - tail - 16) / j.tagSize()
	nDesc := (len(blocks) + perDesc - 1) / perDesc
	if uint32(nDesc+len(blocks)+1) > j.len-j.first {
		return nil
	}
	seq := be.Uint32(j.sb[0x18:])
	pos := j.first
	var seqb [4]byte
	be.PutUint32(seqb[:], seq)
	for i := 0; i < len(blocks); i += perDesc {
		chunk := blocks[i:min(len(blocks), i+perDesc)]
		d := make([]byte, bs)
		be.PutUint32(d, jbdMagic)
		be.PutUint32(d[4:], jbdDescriptor)
		be.PutUint32(d[8:], seq)
		p := 12
		dataPos := pos + 1
		for k, blk := range chunk {
			data := w.tx[blk]
			flags := uint32(0)
			if be.Uint32(data) == jbdMagic {
				// Escaped: the logged copy starts with zeros instead.
				flags |= jbdFlagEscape
				data = append([]byte{0, 0, 0, 0}, data[4:]...)
			}
			if k > 0 {
				flags |= jbdFlagSameUUID
			}
			if k == len(chunk)-1 {
				flags |= jbdFlagLastTag
			}
			t := d[p:]
			be.PutUint32(t, uint32(blk))
			switch {
			case j.csum:
				be.PutUint32(t[4:], flags)
				be.PutUint32(t[8:], uint32(blk>>32))
				be.PutUint32(t[12:], crc32cRaw(crc32cRaw(j.seed, seqb[:]), w.tx[blk]))
			default:
				be.PutUint16(t[6:], uint16(flags))
				if j.is64() {
					be.PutUint32(t[8:], uint32(blk>>32))
				}
			}
			p += j.tagSize()
			if k == 0 {
				copy(d[p:], j.sb[0x30:0x40])
				p += 16
			}
			if err := w.writeJournalBlock(dataPos+uint32(k), data); err != nil {
				return err
			}
		}
		if j.csum {
			be.PutUint32(d[bs-4:], crc32cRaw(j.seed, d))
		}
		if err := w.writeJournalBlock(pos, d); err != nil {
			return err
		}
		pos = dataPos + uint32(len(chunk))
	}
	c := make([]byte, bs)
	be.PutUint32(c, jbdMagic)
	be.PutUint32(c[4:], jbdCommit)
	be.PutUint32(c[8:], seq)
	be.PutUint64(c[0x30:], uint64(w.opTime.Unix()))
	be.PutUint32(c[0x38:], uint32(w.opTime.Nanosecond()))
	if j.csum {
		be.PutUint32(c[commitChecksumStart:], crc32cRaw(j.seed, c))
	}
	// The data and the logged blocks are on the device before the commit
	// block, the commit before the journal is declared live.
	if err := w.syncDev(); err != nil {
		return err
	}
	if err := w.writeJournalBlock(pos, c); err != nil {
		return err
	}
	if err := w.syncDev(); err != nil {
		return err
	}
	// needs_recovery before the journal start: a journal with data but
	// the flag clear makes e2fsck ask; the flag with an empty journal is
	// simply cleared.
	if err := w.setRecoverInPlace(true); err != nil {
		return err
	}
	if err := w.syncDev(); err != nil {
		return err
	}
	be.PutUint32(j.sb[0x1C:], j.first)
	if err := w.writeJournalSuper(); err != nil {
		return err
	}
	return w.syncDev()
}
