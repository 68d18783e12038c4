package ntfs

import (
	"fmt"
	"io"
)

// FreeTail returns the run of free space at the end of the filesystem, in
// bytes from the start of the device: start is just past the last cluster
// $Bitmap marks in use, end is where the backup boot sector lies (the
// sector past the counted ones, which NTFS keeps at its very end). No
// file, directory or system file ($MFT, $MFTMirr, $LogFile, ...) occupies
// [start, end): a hidden volume may live there, as long as nothing more
// is written to this filesystem. mkntfs puts $MFTMirr and $LogFile in the
// middle of the volume, so a fresh NTFS has about half of it free at the
// end, as VeraCrypt's documentation says of NTFS outer volumes.
func (f *FS) FreeTail() (start, end int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := f.file(recBitmap)
	if err != nil {
		return 0, 0, fmt.Errorf("$Bitmap: %w", err)
	}
	s, err := f.newStream(file.attrs, atData, "", recBitmap)
	if err != nil {
		return 0, 0, fmt.Errorf("$Bitmap: %w", err)
	}
	if s.size*8 < f.totalClusters {
		return 0, 0, fmt.Errorf("%w: $Bitmap of %d bytes for %d clusters", ErrCorrupt, s.size, f.totalClusters)
	}
	last := int64(-1) // the last cluster in use
	buf := make([]byte, 64<<10)
	for off := int64(0); off*8 < f.totalClusters; off += int64(len(buf)) {
		want := min(int64(len(buf)), (f.totalClusters-off*8+7)/8)
		n, err := s.readAt(buf[:want], off)
		if int64(n) < want {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, 0, fmt.Errorf("$Bitmap at byte %d: %w", off, err)
		}
		// The last set bit of this chunk (bits past the last cluster, which
		// the bitmap pads to 8 bytes, do not count).
		for c := min((off+want)*8, f.totalClusters) - 1; c >= off*8; c-- {
			if c%8 == 7 && buf[c/8-off] == 0 {
				c -= 7 // a whole free byte
				continue
			}
			if buf[c/8-off]&(1<<(c%8)) != 0 {
				last = c
				break
			}
		}
	}
	if last < 0 {
		return 0, 0, fmt.Errorf("%w: $Bitmap marks no cluster in use", ErrCorrupt)
	}
	return (last + 1) * f.clusterSize, f.backupBoot, nil
}
