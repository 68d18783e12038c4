package tcrypt

import (
	"encoding/binary"

	"github.com/cryptvol/cryptvol/volume"
)

// partition is a byte range of a disk image.
type partition struct{ start, size int64 }

// readPartitions returns the partitions listed by the disk image's MBR or,
// behind a protective MBR, its GPT. System encryption leaves sector 0 (and
// the GPT) in the clear, so they can be read before unlocking.
func readPartitions(dev volume.Device) []partition {
	mbr := make([]byte, 512)
	if n, _ := dev.ReadAt(mbr, 0); n < 512 || mbr[510] != 0x55 || mbr[511] != 0xAA {
		return nil
	}
	var parts []partition
	protective := false
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i : 462+16*i]
		typ := e[4]
		lba := int64(binary.LittleEndian.Uint32(e[8:]))
		n := int64(binary.LittleEndian.Uint32(e[12:]))
		if typ == 0xEE {
			protective = true
		}
		if typ != 0 && typ != 0xEE && n > 0 {
			parts = append(parts, partition{lba * 512, n * 512})
		}
	}
	if protective {
		return readGPT(dev)
	}
	return parts
}

func readGPT(dev volume.Device) []partition {
	h := make([]byte, 512)
	if n, _ := dev.ReadAt(h, 512); n < 512 || string(h[:8]) != "EFI PART" {
		return nil
	}
	entriesLBA := int64(binary.LittleEndian.Uint64(h[72:]))
	count := int64(binary.LittleEndian.Uint32(h[80:]))
	esize := int64(binary.LittleEndian.Uint32(h[84:]))
	if esize < 128 || esize > 4096 || count > 1024 {
		return nil
	}
	tbl := make([]byte, count*esize)
	if n, _ := dev.ReadAt(tbl, entriesLBA*512); int64(n) < count*esize {
		return nil
	}
	var parts []partition
	for i := int64(0); i < count; i++ {
		e := tbl[i*esize : (i+1)*esize]
		first := int64(binary.LittleEndian.Uint64(e[32:]))
		last := int64(binary.LittleEndian.Uint64(e[40:]))
		if first == 0 || last < first {
			continue
		}
		parts = append(parts, partition{first * 512, (last - first + 1) * 512})
	}
	return parts
}

// systemPartition narrows a system-encrypted area to the partition inside
// it. With whole-drive encryption the encrypted area starts right after the
// boot loader's track (sector 63) and the filesystem lives in the first
// partition inside that area; with partition encryption the area and the
// partition coincide. The XTS data unit stays the absolute sector number.
func systemPartition(dev volume.Device, offset, size int64) (int64, int64) {
	for _, p := range readPartitions(dev) {
		if p.start >= offset && p.start < offset+size {
			end := min(p.start+p.size, offset+size)
			return p.start, end - p.start
		}
	}
	return offset, size
}
