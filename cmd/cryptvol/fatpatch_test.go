package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cryptvol/cryptvol/volume"
)

// cmdFatpatch is the script command `fatpatch VOLUME PWFILE OP ARGS...`:
// it damages the FAT filesystem inside a volume the ways issue 15 found,
// writing through the decrypted data area. It knows just enough of FAT to
// do that (the boot sector's layout, the root directory's first cluster)
// and nothing of the fat package, so the damage is made the way another
// program (or an older cryptvol) would leave it. The entries it names are
// 8.3 names in the root directory ("HELLO.TXT").
//
//	lost N          N free clusters become one chain nobody owns
//	twin SRC DST    DST points at SRC's clusters, with SRC's size and times
//	badname NAME    the short name's second byte becomes '/'
//	nocluster NAME  the first cluster becomes 0, the size stays
//	dirty           the dirty flag is set (FAT[1] on FAT16/32, the boot
//	                sector's state byte on FAT12), as a killed writer left it
func cmdFatpatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || args[2] != "dirty" && len(args) < 4 {
		ts.Fatalf("usage: fatpatch VOLUME PWFILE OP ARGS...")
	}
	pw, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	v, err := volume.Open(ts.MkAbs(args[0]), volume.Credentials{Password: bytes.TrimRight(pw, "\r\n")})
	ts.Check(err)
	defer v.Close()
	f, err := readFATLayout(v)
	ts.Check(err)
	switch op := args[2]; op {
	case "lost":
		n, err := strconv.Atoi(args[3])
		ts.Check(err)
		var chain []uint32
		for c := uint32(2); c < f.clusters+2 && len(chain) < n; c++ {
			if f.get(c) == 0 {
				chain = append(chain, c)
			}
		}
		if len(chain) < n {
			ts.Fatalf("only %d free clusters", len(chain))
		}
		for i, c := range chain {
			next := f.eoc
			if i+1 < len(chain) {
				next = chain[i+1]
			}
			f.set(c, next)
		}
		ts.Check(f.writeFAT(v))
	case "dirty":
		if f.bits == 12 {
			b := make([]byte, 512)
			_, err := v.ReadAt(b, 0)
			ts.Check(err)
			b[0x25] |= 1
			_, err = v.WriteAt(b, 0)
			ts.Check(err)
			break
		}
		f.set(1, f.get(1)&^map[int]uint32{16: 0x8000, 32: 0x08000000}[f.bits])
		ts.Check(f.writeFAT(v))
	case "twin", "badname", "nocluster":
		off, err := f.findRoot(v, args[3])
		ts.Check(err)
		slot := make([]byte, 32)
		_, err = v.ReadAt(slot, off)
		ts.Check(err)
		switch op {
		case "twin":
			src, err := f.findRoot(v, args[3])
			ts.Check(err)
			dst, err := f.findRoot(v, args[4])
			ts.Check(err)
			_, err = v.ReadAt(slot, src)
			ts.Check(err)
			other := make([]byte, 32)
			_, err = v.ReadAt(other, dst)
			ts.Check(err)
			copy(other[11:], slot[11:])
			off, slot = dst, other
		case "badname":
			slot[1] = '/'
		case "nocluster":
			binary.LittleEndian.PutUint16(slot[20:], 0)
			binary.LittleEndian.PutUint16(slot[26:], 0)
		}
		_, err = v.WriteAt(slot, off)
		ts.Check(err)
	default:
		ts.Fatalf("fatpatch: unknown operation %q", op)
	}
	ts.Check(v.Sync())
}

// fatLayout is what fatpatch needs of a FAT filesystem.
type fatLayout struct {
	bits                 int // 12, 16 or 32
	bps, clusterBytes    int64
	fatOff, fatBytes     int64
	nfats                int
	rootOff, rootBytes   int64
	dataOff              int64
	clusters, eoc, rootC uint32
	fat                  []byte
}

func readFATLayout(v *volume.Volume) (*fatLayout, error) {
	b := make([]byte, 512)
	if _, err := v.ReadAt(b, 0); err != nil {
		return nil, err
	}
	le16 := func(o int) int64 { return int64(binary.LittleEndian.Uint16(b[o:])) }
	f := &fatLayout{bps: le16(11), nfats: int(b[16])}
	f.clusterBytes = f.bps * int64(b[13])
	reserved, rootEntries := le16(14), le16(17)
	fatSectors := le16(22)
	total := le16(19)
	if total == 0 {
		total = int64(binary.LittleEndian.Uint32(b[32:]))
	}
	if fatSectors == 0 {
		fatSectors = int64(binary.LittleEndian.Uint32(b[36:]))
		f.bits, f.rootC = 32, binary.LittleEndian.Uint32(b[44:])
	}
	f.fatOff, f.fatBytes = reserved*f.bps, fatSectors*f.bps
	f.rootOff = f.fatOff + int64(f.nfats)*f.fatBytes
	f.rootBytes = rootEntries * 32
	rootSectors := (f.rootBytes + f.bps - 1) / f.bps
	f.dataOff = f.rootOff + rootSectors*f.bps
	f.clusters = uint32((total*f.bps - f.dataOff) / f.clusterBytes)
	if f.bits == 0 {
		f.bits = 16
		if f.clusters < 4085 {
			f.bits = 12
		}
	}
	f.eoc = map[int]uint32{12: 0xFFF, 16: 0xFFFF, 32: 0x0FFFFFFF}[f.bits]
	if f.bits == 32 {
		f.rootOff, f.rootBytes = f.dataOff+int64(f.rootC-2)*f.clusterBytes, f.clusterBytes
	}
	f.fat = make([]byte, f.fatBytes)
	if _, err := v.ReadAt(f.fat, f.fatOff); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *fatLayout) get(c uint32) uint32 {
	switch f.bits {
	case 12:
		v := uint32(binary.LittleEndian.Uint16(f.fat[c+c/2:]))
		if c&1 != 0 {
			return v >> 4
		}
		return v & 0xFFF
	case 16:
		return uint32(binary.LittleEndian.Uint16(f.fat[2*c:]))
	}
	return binary.LittleEndian.Uint32(f.fat[4*c:]) & 0x0FFFFFFF
}

func (f *fatLayout) set(c, v uint32) {
	switch f.bits {
	case 12:
		o := c + c/2
		old := uint32(binary.LittleEndian.Uint16(f.fat[o:]))
		if c&1 != 0 {
			old = old&0x000F | v<<4
		} else {
			old = old&0xF000 | v&0xFFF
		}
		binary.LittleEndian.PutUint16(f.fat[o:], uint16(old))
	case 16:
		binary.LittleEndian.PutUint16(f.fat[2*c:], uint16(v))
	default:
		binary.LittleEndian.PutUint32(f.fat[4*c:], v)
	}
}

func (f *fatLayout) writeFAT(v *volume.Volume) error {
	for i := 0; i < f.nfats; i++ {
		if _, err := v.WriteAt(f.fat, f.fatOff+int64(i)*f.fatBytes); err != nil {
			return err
		}
	}
	return nil
}

// findRoot returns the offset of the root directory's 8.3 slot called name.
func (f *fatLayout) findRoot(v *volume.Volume, name string) (int64, error) {
	want := []byte("           ")
	base, ext, _ := strings.Cut(strings.ToUpper(name), ".")
	copy(want, base)
	copy(want[8:], ext)
	dir := make([]byte, f.rootBytes)
	if _, err := v.ReadAt(dir, f.rootOff); err != nil {
		return 0, err
	}
	for i := 0; i+32 <= len(dir); i += 32 {
		if bytes.Equal(dir[i:i+11], want) && dir[i+11]&0x0F != 0x0F {
			return f.rootOff + int64(i), nil
		}
	}
	return 0, fmt.Errorf("fatpatch: no %q in the root directory", want)
}
