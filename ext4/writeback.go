package ext4

// A large file is written in place long before the commit that syncs it.
// Left to the host, its pages then stay dirty in the page cache until that
// sync, which writes them all while the caller waits (about 40% of a 1 GiB
// put into a volume). A device that can start writeback early (a
// volume.Volume on a file: sync_file_range) is asked to, every
// writebackStep bytes of contiguous data, so the disk works while the
// copy goes on. Nothing of the ordering changes: commit still syncs the
// device before the metadata that points at the data is committed.

const (
	// writebackStep is how much contiguous data is handed over at once:
	// enough for large requests, little enough to keep the disk busy.
	writebackStep = 8 << 20
	// writebackMin is the smallest write counted: small files are left
	// to the host (a call per file would cost more than it saves).
	writebackMin = 64 << 10
)

type writebackStarter interface {
	StartWriteback(off, n int64) error
}

// wroteData notes that n bytes of file data were written at device
// offset off, and starts the writeback of what came before once
// writebackStep bytes are pending or the run breaks.
func (w *Writer) wroteData(off, n int64) {
	wb, ok := w.dev.(writebackStarter)
	if !ok || n < writebackMin {
		return
	}
	if off != w.wbTo {
		w.startWriteback(wb)
		w.wbFrom = off
	}
	w.wbTo = off + n
	if w.wbTo-w.wbFrom >= writebackStep {
		w.startWriteback(wb)
	}
}

// startWriteback hands the pending range to the device. Its error is
// dropped: it is a hint, and a failing device fails the sync after it.
func (w *Writer) startWriteback(wb writebackStarter) {
	if w.wbTo > w.wbFrom {
		wb.StartWriteback(w.wbFrom, w.wbTo-w.wbFrom)
	}
	w.wbFrom = w.wbTo
}
