package ext4

import (
	"encoding/binary"
	"fmt"
)

// processOrphans finishes what the orphan list records (s_last_orphan,
// chained through i_dtime): an inode with no links left was removed while
// open and is released; one with links was being truncated and loses the
// blocks past its size. Then the list is empty, in one transaction.
func (w *Writer) processOrphans() error {
	w.lock()
	defer w.mu.Unlock()
	le := binary.LittleEndian
	ino := le.Uint32(w.m.sb[0xE8:])
	for n := uint32(0); ino != 0; n++ {
		if n > w.inodesCount || ino < w.a.firstIno() || ino > w.inodesCount {
			return fmt.Errorf("%w: orphan list reaches inode %d", ErrCorrupt, ino)
		}
		raw, err := w.m.readRawInode(ino)
		if err != nil {
			return err
		}
		next := le.Uint32(raw[0x14:])
		if rawLinks(raw) == 0 {
			if err := w.releaseInode(ino, raw); err != nil {
				return err
			}
		} else {
			fm, err := w.loadMap(ino, raw)
			if err != nil {
				return err
			}
			if err := w.truncate(ino, raw, fm, rawSize(raw)); err != nil {
				return err
			}
			le.PutUint32(raw[0x14:], 0)
			if err := w.writeInode(ino, raw); err != nil {
				return err
			}
		}
		ino = next
	}
	le.PutUint32(w.m.sb[0xE8:], 0)
	w.a.dirty[0] = true // the superblock goes out with the next flush
	if err := w.a.flush(w); err != nil {
		return err
	}
	return w.commit()
}
