package luks

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// FuzzParseHeader feeds arbitrary bytes to the LUKS1/LUKS2 header parsers
// (Inspect, and a full unlock attempt with a fixed passphrase behind a
// bounds-checking device). They must return an error or a header, never
// panic, and never touch bytes outside the input. The seed corpus holds a
// small LUKS1 and a small LUKS2 header made here, plus the corpus headers
// when the shared test data is present.
func FuzzParseHeader(f *testing.F) {
	for _, typ := range []string{"luks1", "luks2"} {
		dev := &memDevice{b: make([]byte, 3<<20)}
		o := CreateOptions{Type: typ, KeySize: 256, KDF: fastKDF("pbkdf2"), Quick: true, DataOffset: 2 << 20}
		if typ == "luks2" {
			o.KeyslotsSize = 1 << 20
		}
		if _, err := Create(context.Background(), dev, o, pw("x")); err != nil {
			f.Fatal(err)
		}
		end := bytes.LastIndexFunc(dev.b, func(r rune) bool { return r != 0 })
		f.Add(dev.b[:end+1])
	}
	if testdata.Dir() != "" {
		for _, name := range []string{"evil_hdr-keyslot_overlap.xz", "valid_header_file.xz"} {
			if b, err := os.ReadFile(testdata.Unpack(f, name)); err == nil {
				f.Add(b[:min(len(b), 1<<20)])
			}
		}
	}
	f.Add([]byte("LUKS\xba\xbe\x00\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := &guardedDevice{Device: &memDevice{b: data}, t: t}
		if h, err := Inspect(dev); err == nil {
			_ = h.Details
		}
		one := 0
		c := volume.Credentials{Password: []byte("x"), KeySlot: &one}
		// The driver itself (volume.OpenDeviceWith first sniffs 4096
		// bytes, which the guard would flag on tiny inputs).
		r := &volume.Request{Dev: dev, Header: dev, Creds: c, Opts: volume.Options{Type: "luks", ReadOnly: true}}
		if u, err := (driver{}).Unlock(context.Background(), r); err == nil {
			clear(u.MasterKey)
		}
		if dev.writes != 0 {
			t.Fatal("parsing wrote to the device")
		}
	})
}
