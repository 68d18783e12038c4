package luks

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"
)

// fuzzLUKS1DevSize is the header device every fuzzed LUKS1 header is
// validated against: big enough for the keyslots of any real header.
const fuzzLUKS1DevSize = 4 << 20

// paddedDevice is data followed by zeros up to size, without allocating
// them: fuzzed headers get a device big enough for their keyslots.
type paddedDevice struct {
	b    []byte
	size int64
}

func (d *paddedDevice) Size() int64 { return d.size }
func (d *paddedDevice) Sync() error { return nil }
func (d *paddedDevice) WriteAt(p []byte, off int64) (int, error) {
	return 0, errors.New("paddedDevice is read-only")
}
func (d *paddedDevice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > d.size {
		return 0, io.EOF
	}
	clear(p)
	if off < int64(len(d.b)) {
		copy(p, d.b[off:])
	}
	return len(p), nil
}

// createdHeader makes a small volume of type typ and returns its header
// bytes up to the last non-zero one.
func createdHeader(f *testing.F, typ string) []byte {
	dev := &memDevice{b: make([]byte, 3<<20)}
	o := CreateOptions{Type: typ, KeySize: 256, KDF: fastKDF("pbkdf2"), Quick: true, DataOffset: 2 << 20}
	if typ == "luks2" {
		o.KeyslotsSize = 1 << 20
	}
	if _, err := Create(context.Background(), dev, o, pw("x")); err != nil {
		f.Fatal(err)
	}
	end := bytes.LastIndexFunc(dev.b, func(r rune) bool { return r != 0 })
	return dev.b[:end+1]
}

// FuzzLUKS1Header feeds the phdr (and whatever follows it) to readLUKS1.
// Nothing may panic or read outside the device, and a header it accepts
// must survive marshal → parse unchanged: what we would write back is
// what we read. Seeds: a header made here, and in
// testdata/fuzz/FuzzLUKS1Header the phdrs of cryptsetup's compatibility
// images and its evil_hdr-* headers (../shared/testdata, copied in).
func FuzzLUKS1Header(f *testing.F) {
	f.Add(createdHeader(f, "luks1")[:luks1HeaderSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := &guardedDevice{Device: &paddedDevice{b: data, size: max(fuzzLUKS1DevSize, int64(len(data)))}, t: t}
		h, err := readLUKS1(dev)
		if err != nil {
			return
		}
		h.slotsByOffset()
		h.areaEnd()
		raw := h.marshal()
		again, err := parseLUKS1(raw, dev.Size())
		if err != nil {
			t.Fatalf("the marshalled header does not parse: %v", err)
		}
		again.spec, again.specErr = again.cipherSpec()
		if !reflect.DeepEqual(h, again) {
			t.Fatalf("marshal → parse changed the header:\n%+v\n%+v", h, again)
		}
	})
}

// luks2Image expands a compact fuzz input, the primary binary header,
// the secondary binary header and the JSON text, into both header copies
// with their checksums fixed up: the fuzzer would almost never forge a
// sha256 itself, and without that no mutation reaches the JSON parser;
// keeping the input compact (no JSON padding) keeps it fast. Each copy is
// as long as its binary header says where that is a valid size of at most
// 64 KiB (the JSON padded with zeros), else 16 KiB; the secondary sits
// after the primary. The checksum is fixed only where the header names
// sha256, so other algorithms still take the unknown-checksum paths.
func luks2Image(data []byte) []byte {
	part := func(lo, n int) []byte {
		b := make([]byte, n)
		if lo < len(data) {
			copy(b, data[lo:])
		}
		return b
	}
	text := []byte{}
	if len(data) > 2*binHeaderSize {
		text = data[2*binHeaderSize:]
	}
	var img []byte
	for i := 0; i < 2; i++ {
		bin := part(i*binHeaderSize, binHeaderSize)
		size := uint64(minHeaderSize)
		if n := binary.BigEndian.Uint64(bin[8:]); validHeaderSize(n) && n <= 64<<10 {
			size = n
		}
		c := make([]byte, size)
		copy(c, bin)
		copy(c[binHeaderSize:], text)
		if cString(c[72:72+csumAlgLen]) == "sha256" {
			clear(c[csumOffset : csumOffset+csumLen])
			sum, _ := checksum("sha256", c)
			copy(c[csumOffset:], sum)
		}
		img = append(img, c...)
	}
	return img
}

// compactLUKS2 is the inverse of luks2Image for a header of hdrSize bytes.
func compactLUKS2(img []byte, hdrSize int) []byte {
	b := append([]byte{}, img[:binHeaderSize]...)
	b = append(b, img[hdrSize:hdrSize+binHeaderSize]...)
	return append(b, bytes.TrimRight(img[binHeaderSize:hdrSize], "\x00")...)
}

// FuzzLUKS2Header feeds both header copies (binary headers and JSON
// area, expanded by luks2Image) to readLUKS2 and, as unlocking does,
// looks up the data segment and the requirements. Nothing may panic or
// read outside the device. A header it accepts is written back the way
// header changes write it (encode, seal both copies) and read again: the
// metadata must come back identical. Seeds: a header made here, and in
// testdata/fuzz/FuzzLUKS2Header cryptsetup's valid, requirement-flag,
// unassigned-keyslot and unknown-cipher headers (copied in, compacted).
func FuzzLUKS2Header(f *testing.F) {
	h := createdHeader(f, "luks2")
	f.Add(compactLUKS2(h, int(binary.BigEndian.Uint64(h[8:]))))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 2*binHeaderSize+64<<10 {
			return
		}
		dev := &guardedDevice{Device: &memDevice{b: luks2Image(data)}, t: t}
		h, err := readLUKS2(dev)
		if err != nil {
			return
		}
		h.dataSegment()
		h.requirementError()
		text, err := h.meta.encode()
		if err != nil {
			t.Fatalf("encoding accepted metadata: %v", err)
		}
		var img []byte
		for i, off := range []uint64{0, h.size()} {
			bin := h.bin
			bin.Secondary, bin.Offset = i == 1, off
			c, err := sealCopy(&bin, text)
			if err != nil {
				// Re-encoding may grow the text (escapes) past the area.
				return
			}
			img = append(img, c...)
		}
		back, err := readLUKS2(&memDevice{b: img})
		if err != nil {
			t.Fatalf("the header written back does not read: %v", err)
		}
		if !reflect.DeepEqual(back.meta.doc, h.meta.doc) {
			t.Fatalf("write → read changed the metadata:\n%+v\n%+v", h.meta.doc, back.meta.doc)
		}
	})
}

// FuzzLUKS2JSON feeds JSON areas straight to parseJSONArea. Nothing may
// panic, and accepted metadata must round-trip: encode → parse gives the
// same typed view, and encoding that gives the same text (the encoding is
// canonical, so a header rewrite does not drift). Seeds: the JSON of a
// header made here, and in testdata/fuzz/FuzzLUKS2JSON the JSON areas of
// cryptsetup's headers (copied in).
func FuzzLUKS2JSON(f *testing.F) {
	h := createdHeader(f, "luks2")
	size := binary.BigEndian.Uint64(h[8:])
	f.Add(bytes.TrimRight(h[binHeaderSize:size], "\x00"))
	f.Fuzz(func(t *testing.T, text []byte) {
		const hdrSize = 16 << 10
		if len(text) >= hdrSize-binHeaderSize {
			return
		}
		area := make([]byte, hdrSize-binHeaderSize)
		copy(area, text)
		m, err := parseJSONArea(area, hdrSize)
		if err != nil {
			return
		}
		enc, err := m.encode()
		if err != nil {
			t.Fatalf("encoding accepted metadata: %v", err)
		}
		if len(enc) >= len(area) {
			return
		}
		area2 := make([]byte, len(area))
		copy(area2, enc)
		m2, err := parseJSONArea(area2, hdrSize)
		if err != nil {
			t.Fatalf("encoded metadata does not parse: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(m.doc, m2.doc) {
			t.Fatalf("encode → parse changed the metadata:\n%+v\n%+v", m.doc, m2.doc)
		}
		enc2, err := m2.encode()
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable (%v):\n%s\n%s", err, enc, enc2)
		}
	})
}
