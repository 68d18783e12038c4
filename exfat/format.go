package exfat

import (
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// FormatOptions chooses what Format creates. The zero value gives what
// `mkfs.exfat DEVICE` of exfatprogs 1.2 gives for a regular file of the
// same size: the cluster size chosen from the size, structures aligned to
// 1 MiB, no label, a random serial number.
type FormatOptions struct {
	// Label is the volume label, up to 11 UTF-16 units (mkfs.exfat -L).
	Label string
	// Serial is the volume serial number; 0 picks a random one.
	Serial uint32
	// ClusterSize in bytes, a power of two from 512 to 32 MiB; 0 chooses
	// like mkfs.exfat: 4 KiB up to 256 MiB, 32 KiB up to 32 GiB, 128 KiB
	// above (mkfs.exfat -c).
	ClusterSize int
	// Align is the boundary the FAT and the cluster heap start on, in
	// bytes, a power of two of at least 512; 0 means 1 MiB, mkfs.exfat's
	// default, which leaves no room on devices under about 3 MiB: give a
	// smaller one there, as with mkfs.exfat -b.
	Align int
}

const (
	formatSectorShift = 9 // mkfs.exfat uses the device's sector size: 512 for a file
	formatSectorSize  = 1 << formatSectorShift
	defaultAlign      = 1 << 20
	upcaseLength      = 5836
	// rootEntries is what mkfs.exfat puts in the root directory: the
	// volume label, the allocation bitmap and the up-case table.
	rootEntries = 3
)

// layout is where Format puts everything, in bytes and clusters.
type layout struct {
	size         int64
	clusterSize  int
	fatOffset    int64
	fatLength    int64
	heapOffset   int64
	clusterCount uint32
	bitmapLen    int64  // bytes of bitmap
	upcaseFirst  uint32 // first cluster of the up-case table
	rootCluster  uint32
	used         uint32 // clusters taken by bitmap, up-case table and root
}

func roundUp(v, to int64) int64 { return (v + to - 1) / to * to }

// mkfsLayout reproduces the computation of mkfs.exfat (exfatprogs 1.2).
func mkfsLayout(size int64, clusterSize, align int) (*layout, error) {
	if clusterSize == 0 {
		switch {
		case size <= 256<<20:
			clusterSize = 4 << 10
		case size <= 32<<30:
			clusterSize = 32 << 10
		default:
			clusterSize = 128 << 10
		}
	}
	if clusterSize < formatSectorSize || clusterSize > 32<<20 || clusterSize&(clusterSize-1) != 0 {
		return nil, fmt.Errorf("exfat: cluster size %d is not a power of two from 512 to 32 MiB", clusterSize)
	}
	if align == 0 {
		align = defaultAlign
	}
	if align < formatSectorSize || align&(align-1) != 0 {
		return nil, fmt.Errorf("exfat: alignment %d is not a power of two of at least 512", align)
	}
	cs, al := int64(clusterSize), int64(align)
	if size < 24*formatSectorSize {
		return nil, fmt.Errorf("%w: %d bytes cannot even hold the boot regions", ErrTooSmall, size)
	}
	l := &layout{size: size, clusterSize: clusterSize}
	l.fatOffset = roundUp(24*formatSectorSize, al)
	// mkfs.exfat sizes the FAT for every cluster the whole device could
	// hold, rounded up to a cluster.
	l.fatLength = roundUp(size/cs*4, cs)
	l.heapOffset = roundUp(l.fatOffset+l.fatLength, al)
	if l.heapOffset >= size {
		return nil, fmt.Errorf("%w: with %d-byte alignment the cluster heap would start at %d, past the end of the %d-byte device (give a smaller alignment)",
			ErrTooSmall, align, l.heapOffset, size)
	}
	count := (size - l.heapOffset) / cs
	if count > maxClusters {
		return nil, fmt.Errorf("%w: %d clusters are more than exFAT allows (choose larger clusters)", ErrFileTooLarge, count)
	}
	l.clusterCount = uint32(count)
	l.bitmapLen = (count + 7) / 8
	bitmapClusters := uint32(roundUp(l.bitmapLen, cs) / cs)
	upcaseClusters := uint32(roundUp(upcaseLength, cs) / cs)
	l.upcaseFirst = 2 + bitmapClusters
	l.rootCluster = l.upcaseFirst + upcaseClusters
	l.used = bitmapClusters + upcaseClusters + 1
	if l.used > l.clusterCount {
		return nil, fmt.Errorf("%w: %d clusters cannot hold the bitmap, the up-case table and the root directory", ErrTooSmall, l.clusterCount)
	}
	return l, nil
}

// labelUnits checks and converts a volume label.
func labelUnits(label string) ([]uint16, error) {
	if !utf8.ValidString(label) {
		return nil, fmt.Errorf("%w: label %q is not valid UTF-8", ErrInvalidName, label)
	}
	u := utf16.Encode([]rune(label))
	if len(u) > 11 {
		return nil, fmt.Errorf("%w: label %q is %d UTF-16 units long, at most 11 fit", ErrInvalidName, label, len(u))
	}
	for _, c := range u {
		if c < 0x20 {
			return nil, fmt.Errorf("%w: label %q has a control character", ErrInvalidName, label)
		}
	}
	return u, nil
}

// bootRegion builds the 12 sectors of a boot region as mkfs.exfat writes
// them.
func (l *layout) bootRegion(serial uint32) []byte {
	ss := formatSectorSize
	r := make([]byte, bootRegionSectors*ss)
	b := r[:ss]
	le := binary.LittleEndian
	copy(b, []byte{0xEB, 0x76, 0x90})
	copy(b[3:], fsName)
	le.PutUint64(b[offVolumeLength:], uint64(l.size>>formatSectorShift))
	le.PutUint32(b[offFATOffset:], uint32(l.fatOffset>>formatSectorShift))
	le.PutUint32(b[offFATLength:], uint32(l.fatLength>>formatSectorShift))
	le.PutUint32(b[offHeapOffset:], uint32(l.heapOffset>>formatSectorShift))
	le.PutUint32(b[offClusterCount:], l.clusterCount)
	le.PutUint32(b[offRootCluster:], l.rootCluster)
	le.PutUint32(b[offSerial:], serial)
	le.PutUint16(b[offRevision:], 0x0100)
	b[offSectorShift] = formatSectorShift
	spc := 0
	for c := l.clusterSize >> formatSectorShift; c > 1; c >>= 1 {
		spc++
	}
	b[offClusterShift] = byte(spc)
	b[offNumFATs] = 1
	b[offDriveSelect] = 0x80
	b[510], b[511] = 0x55, 0xAA
	for s := 1; s <= 8; s++ {
		le.PutUint32(r[(s+1)*ss-4:], 0xAA550000)
	}
	// mkfs.exfat 1.2 fills the OEM parameters sector with 0xFF; the
	// reserved sector after it stays zero.
	for i := 9 * ss; i < 10*ss; i++ {
		r[i] = 0xFF
	}
	sum := bootChecksum(r, ss)
	for i := checksumSector * ss; i < len(r); i += 4 {
		le.PutUint32(r[i:], sum)
	}
	return r
}

// Format writes a new, empty exFAT filesystem over the first size bytes of
// dev, laid out exactly as mkfs.exfat lays it out (TestFormatMatchesMkfs
// compares the boot regions, FAT, bitmap, up-case table and root
// directory for a range of sizes). It is a quick format: the cluster heap
// is left as it is, except for the clusters of the bitmap, the up-case
// table and the root directory. The main boot sector is blanked first and
// written last, so an interrupted Format never leaves a boot sector that
// describes half-written tables.
func Format(dev io.WriterAt, size int64, opts FormatOptions) error {
	label, err := labelUnits(opts.Label)
	if err != nil {
		return err
	}
	l, err := mkfsLayout(size, opts.ClusterSize, opts.Align)
	if err != nil {
		return err
	}
	serial, err := fatcore.Serial(opts.Serial)
	if err != nil {
		return fmt.Errorf("exfat: serial number: %w", err)
	}
	w := func(p []byte, off int64) error {
		n, err := dev.WriteAt(p, off)
		if err == nil && n < len(p) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fmt.Errorf("exfat: format: writing %d bytes at %d: %w", len(p), off, err)
		}
		return nil
	}
	if err := w(make([]byte, formatSectorSize), 0); err != nil {
		return err
	}
	region := l.bootRegion(serial)
	if err := w(region, backupBootSector*formatSectorSize); err != nil {
		return err
	}

	// The FAT: the media and reserved entries, then one chain each for the
	// bitmap, the up-case table and the root directory.
	le := binary.LittleEndian
	cs := int64(l.clusterSize)
	fatHead := make([]byte, 4*(2+l.used))
	le.PutUint32(fatHead[0:], 0xFFFFFFF8)
	le.PutUint32(fatHead[4:], 0xFFFFFFFF)
	chain := func(first, n uint32) {
		for c := first; c < first+n; c++ {
			next := c + 1
			if c == first+n-1 {
				next = eocCluster
			}
			le.PutUint32(fatHead[4*c:], next)
		}
	}
	chain(2, l.upcaseFirst-2)
	chain(l.upcaseFirst, l.rootCluster-l.upcaseFirst)
	chain(l.rootCluster, 1)
	if err := writeZeros(w, l.fatOffset, l.fatLength, fatHead); err != nil {
		return err
	}

	// The bitmap, with the clusters above in use.
	bitmap := make([]byte, roundUp(l.bitmapLen, cs))
	for c := uint32(0); c < l.used; c++ {
		bitmap[c/8] |= 1 << (c % 8)
	}
	if err := w(bitmap, l.heapOffset); err != nil {
		return err
	}
	up := make([]byte, roundUp(upcaseLength, cs))
	copy(up, defaultUpcase)
	if err := w(up, l.heapOffset+int64(l.upcaseFirst-2)*cs); err != nil {
		return err
	}

	// The root directory: label (empty when none), bitmap, up-case table.
	root := make([]byte, cs)
	root[0] = typeVolumeLabel
	root[1] = byte(len(label))
	for i, u := range label {
		le.PutUint16(root[2+2*i:], u)
	}
	e := root[32:64]
	e[0] = typeBitmap
	le.PutUint32(e[20:], 2)
	le.PutUint64(e[24:], uint64(l.bitmapLen))
	e = root[64:96]
	e[0] = typeUpcase
	le.PutUint32(e[4:], upcaseChecksum(defaultUpcase))
	le.PutUint32(e[20:], l.upcaseFirst)
	le.PutUint64(e[24:], upcaseLength)
	if err := w(root, l.heapOffset+int64(l.rootCluster-2)*cs); err != nil {
		return err
	}
	if err := w(region[formatSectorSize:], formatSectorSize); err != nil {
		return err
	}
	return w(region[:formatSectorSize], 0)
}

// writeZeros writes length bytes at off: head first, zeros after it, in
// pieces of at most 1 MiB.
func writeZeros(w func([]byte, int64) error, off, length int64, head []byte) error {
	buf := make([]byte, min(length, 1<<20))
	for done := int64(0); done < length; {
		n := min(int64(len(buf)), length-done)
		clear(buf)
		if done < int64(len(head)) {
			copy(buf, head[done:])
		}
		if err := w(buf[:n], off+done); err != nil {
			return err
		}
		done += n
	}
	return nil
}
