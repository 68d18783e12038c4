package tcrypt

import (
	"bytes"
	"testing"
)

// FuzzParseHeader feeds decrypted-header bytes to parseHeader (issue 31,
// item 3 of the issue: a fuzz target per parser). What it accepts must
// survive marshal and parse again with the same fields. Seeds: a VeraCrypt
// and a TrueCrypt header, and testdata/fuzz/FuzzParseHeader.
func FuzzParseHeader(f *testing.F) {
	for _, h := range []header{
		{Magic: "VERA", Version: 5, MinVersion: 0x010b, VolumeSize: 1 << 20, EncStart: 131072, EncSize: 1 << 20, SectorSize: 512},
		{Magic: "TRUE", Version: 4, MinVersion: 0x0600, HiddenSize: 4096, VolumeSize: 8192, EncStart: 65536, EncSize: 8192},
	} {
		h.Keys[0], h.Keys[255] = 1, 2
		f.Add(h.marshal())
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		h, ok := parseHeader(d)
		if !ok {
			return
		}
		again, ok := parseHeader(h.marshal())
		if !ok {
			t.Fatalf("a parsed header does not parse after marshal: %+v", h)
		}
		// The stored CRCs are recomputed by marshal.
		h.KeysCRC, h.HeaderCRC, again.KeysCRC, again.HeaderCRC = 0, 0, 0, 0
		if *again != *h {
			t.Fatalf("round trip changed the header:\n%+v\n%+v", h, again)
		}
		if !bytes.Equal(h.marshal()[192:], d[192:]) {
			t.Fatal("the key area changed in the round trip")
		}
	})
}
