package ext4

import (
	"encoding/binary"
	"fmt"
)

// Journal replay (what the kernel and e2fsck do on mount of a filesystem
// that needs recovery): find the committed transactions from s_start on,
// honour revoke records, copy each logged block to its place, then mark
// the journal empty and clear needs_recovery.

// loggedBlock is one block a committed transaction holds.
type loggedBlock struct {
	target uint64
	at     uint32 // journal block of the copy
	escape bool
	seq    uint32
	csum   uint32 // checksum v3 of the block (0 without checksums)
}

// replayStats counts what a replay did.
type replayStats struct {
	transactions, blocks, revoked int
}

// replayJournal replays the journal of the filesystem on dev.
func replayJournal(dev Device, size int64) (replayStats, error) {
	var st replayStats
	err := replayJournalInto(dev, size, &st)
	return st, err
}

func replayJournalInto(dev Device, size int64, st *replayStats) error {
	f, err := Open(dev, size)
	if err != nil {
		return err
	}
	m, err := loadMeta(f)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if f.compat&compatHasJournal == 0 || f.incompat&incompatRecover == 0 {
		return nil
	}
	// A Writer over the unreplayed filesystem, only to read the journal.
	w := &Writer{FS: f, dev: dev, m: m, tx: map[uint64][]byte{}, replay: st}
	ino := le.Uint32(m.sb[0xE0:])
	if ino == 0 {
		return fmt.Errorf("%w: an external journal", ErrUnsupported)
	}
	raw, err := m.readRawInode(ino)
	if err != nil {
		return err
	}
	fm, err := w.loadMap(ino, raw)
	if err != nil {
		return fmt.Errorf("journal inode: %w", err)
	}
	j := &journal{ino: ino, fm: fm, sb: make([]byte, f.blockSize)}
	w.j = j
	if err := f.readBlock(j.sb, fm.physOf(0)); err != nil {
		return err
	}
	sb := j.sb
	if be.Uint32(sb) != jbdMagic || int64(be.Uint32(sb[0xC:])) != f.blockSize {
		return fmt.Errorf("%w: bad journal superblock", ErrCorrupt)
	}
	j.len, j.first = be.Uint32(sb[0x10:]), be.Uint32(sb[0x14:])
	if j.first == 0 || j.len <= j.first || uint64(j.len)*uint64(f.blockSize) > uint64(rawSize(raw)) {
		return fmt.Errorf("%w: journal of %d blocks from %d", ErrCorrupt, j.len, j.first)
	}
	incompat := uint32(0)
	if be.Uint32(sb[4:]) == jbdSuperV2 {
		incompat = be.Uint32(sb[0x28:])
		if incompat&^jbdIncompatKnown != 0 || be.Uint32(sb[0x24:]) != 0 {
			return fmt.Errorf("%w: replaying a journal with features %#x/%#x", ErrUnsupported, be.Uint32(sb[0x24:]), incompat)
		}
	}
	j.csum = incompat&jbdIncompatCsumV3 != 0
	j.seed = crc32cRaw(^uint32(0), sb[0x30:0x40])
	start := be.Uint32(sb[0x1C:])
	seq := be.Uint32(sb[0x18:])
	if start != 0 {
		if err := w.replayFrom(start, seq); err != nil {
			return err
		}
	}
	// The journal is empty, the filesystem no longer needs recovery.
	if err := w.syncDev(); err != nil {
		return err
	}
	be.PutUint32(j.sb[0x1C:], 0)
	if err := w.writeJournalSuper(); err != nil {
		return err
	}
	if err := w.setRecoverInPlace(false); err != nil {
		return err
	}
	return w.syncDev()
}

func (w *Writer) replayFrom(start, seq uint32) error {
	j := w.j
	bs := int(w.blockSize)
	wrap := func(p uint32) uint32 {
		if p >= j.len {
			return j.first + (p-j.first)%(j.len-j.first)
		}
		return p
	}
	read := func(p uint32) ([]byte, error) {
		b := make([]byte, bs)
		blk := j.fm.physOf(uint64(p))
		if blk == 0 {
			return nil, fmt.Errorf("%w: journal block %d is a hole", ErrCorrupt, p)
		}
		return b, w.readBlock(b, blk)
	}
	tail := 0
	if j.csum {
		tail = 4
	}
	var committed, pending []loggedBlock
	revoked := map[uint64]uint32{} // block -> latest committed revoking sequence
	pendingRevoke := map[uint64]bool{}
	pos := start
scan:
	for steps := uint32(0); steps < j.len; steps++ {
		b, err := read(pos)
		if err != nil {
			return err
		}
		if be.Uint32(b) != jbdMagic || be.Uint32(b[8:]) != seq {
			break
		}
		switch be.Uint32(b[4:]) {
		case jbdDescriptor:
			if j.csum {
				c := be.Uint32(b[bs-4:])
				be.PutUint32(b[bs-4:], 0)
				if crc32cRaw(j.seed, b) != c {
					break scan // a torn descriptor or commit: the log ends
				}
			}
			p := 12
			next := pos
			for p+j.tagSize() <= bs-tail {
				t := b[p:]
				target := uint64(be.Uint32(t))
				var flags uint32
				var csum uint32
				if j.csum {
					flags = be.Uint32(t[4:])
					csum = be.Uint32(t[12:])
				} else {
					flags = uint32(be.Uint16(t[6:]))
				}
				if j.is64() {
					target |= uint64(be.Uint32(t[8:])) << 32
				}
				p += j.tagSize()
				if flags&jbdFlagSameUUID == 0 {
					p += 16
				}
				next = wrap(next + 1)
				pending = append(pending, loggedBlock{target: target, at: next, escape: flags&jbdFlagEscape != 0, seq: seq, csum: csum})
				if flags&jbdFlagLastTag != 0 {
					break
				}
			}
			pos = next
		case jbdRevoke:
			n := int(be.Uint32(b[12:]))
			rs := 4
			if j.is64() {
				rs = 8
			}
			if n > bs-tail {
				n = bs - tail
			}
			for p := 16; p+rs <= n; p += rs {
				if rs == 8 {
					pendingRevoke[be.Uint64(b[p:])] = true
				} else {
					pendingRevoke[uint64(be.Uint32(b[p:]))] = true
				}
			}
		case jbdCommit:
			if j.csum {
				c := be.Uint32(b[commitChecksumStart:])
				be.PutUint32(b[commitChecksumStart:], 0)
				if crc32cRaw(j.seed, b) != c {
					break scan // a torn descriptor or commit: the log ends
				}
			}
			committed = append(committed, pending...)
			w.replay.transactions++
			for r := range pendingRevoke {
				revoked[r] = seq
			}
			pending, pendingRevoke = nil, map[uint64]bool{}
			seq++
		default:
			break scan
		}
		pos = wrap(pos + 1)
	}
	be.PutUint32(j.sb[0x18:], seq)
	return w.endOfLog(committed, revoked)
}

// endOfLog copies the committed blocks in place, skipping those a revoke
// record of the same or a later transaction cancels.
func (w *Writer) endOfLog(committed []loggedBlock, revoked map[uint64]uint32) error {
	j := w.j
	var seqb [4]byte
	last := be.Uint32(j.sb[0x18:])
	for _, lb := range committed {
		if r, ok := revoked[lb.target]; ok && int32(r-lb.seq) >= 0 {
			w.replay.revoked++
			continue
		}
		w.replay.blocks++
		if lb.target >= w.blocksCount {
			return fmt.Errorf("%w: the journal logs block %d, outside the filesystem", ErrCorrupt, lb.target)
		}
		b := make([]byte, w.blockSize)
		blk := j.fm.physOf(uint64(lb.at))
		if blk == 0 {
			return fmt.Errorf("%w: journal block %d is a hole", ErrCorrupt, lb.at)
		}
		if err := w.readBlock(b, blk); err != nil {
			return err
		}
		if lb.escape {
			be.PutUint32(b, jbdMagic)
		}
		if j.csum {
			be.PutUint32(seqb[:], lb.seq)
			if crc32cRaw(crc32cRaw(j.seed, seqb[:]), b) != lb.csum {
				return fmt.Errorf("%w: journal copy of block %d (transaction %d) fails its checksum", ErrCorrupt, lb.target, lb.seq)
			}
		}
		if err := w.dataWriteAt(b, int64(lb.target)*w.blockSize); err != nil {
			return err
		}
		if lb.seq >= last {
			last = lb.seq + 1
		}
	}
	be.PutUint32(j.sb[0x18:], last)
	return nil
}
