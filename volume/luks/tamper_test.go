package luks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// newLUKS2Mem creates a small LUKS2 volume in memory (2 MiB data offset).
func newLUKS2Mem(t *testing.T, pass string) *memDevice {
	t.Helper()
	dev := &memDevice{b: make([]byte, 3<<20)}
	_, err := Create(context.Background(), dev, CreateOptions{KeySize: 256, KDF: fastKDF("pbkdf2"), Quick: true,
		DataOffset: 2 << 20, KeyslotsSize: 1 << 20}, pw(pass))
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// rewrite replaces both header copies with edited metadata, correctly
// checksummed, as an attacker who controls the device could.
func rewrite(t *testing.T, dev *memDevice, edit func(raw map[string]any)) {
	t.Helper()
	h, err := readLUKS2(dev)
	if err != nil {
		t.Fatal(err)
	}
	raw := deepCopy(h.meta.raw).(map[string]any)
	edit(raw)
	text, err := (&metadata{raw: raw}).encode()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		b := h.bin
		b.Secondary = i == 1
		b.Offset = uint64(i) * b.Size
		b.Salt = h.salts[i]
		b.SeqID++
		c, err := sealCopy(&b, text)
		if err != nil {
			t.Fatal(err)
		}
		copy(dev.b[b.Offset:], c)
	}
}

func keyslot0(raw map[string]any) map[string]any {
	return object(raw, "keyslots")["0"].(map[string]any)
}

// TestLUKS2Tampering: metadata with a valid checksum but inconsistent
// content is refused before any key material is read out of bounds.
func TestLUKS2Tampering(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(raw map[string]any)
		want string
	}{
		{"area before the keyslots area", func(r map[string]any) { keyslot0(r)["area"].(map[string]any)["offset"] = "4096" }, "outside the keyslots area"},
		{"area beyond the device", func(r map[string]any) { keyslot0(r)["area"].(map[string]any)["offset"] = "99999999999" }, "outside the keyslots area"},
		{"area not a number", func(r map[string]any) { keyslot0(r)["area"].(map[string]any)["offset"] = "12a" }, "bad offset"},
		{"huge stripes", func(r map[string]any) { keyslot0(r)["af"].(map[string]any)["stripes"] = 4000000 }, "does not fit"},
		{"keyslots area too big", func(r map[string]any) { object(r, "config")["keyslots_size"] = "1073741824" }, "keyslots_size"},
		{"json_size mismatch", func(r map[string]any) { object(r, "config")["json_size"] = "4096" }, "json_size"},
		{"data inside the header", func(r map[string]any) {
			object(r, "segments")["0"].(map[string]any)["offset"] = "16384"
		}, "does not fit before the data"},
		{"digest of a missing keyslot", func(r map[string]any) {
			object(r, "digests")["0"].(map[string]any)["keyslots"] = []any{"0", "7"}
		}, "missing keyslot"},
		{"segment without digest", func(r map[string]any) {
			object(r, "digests")["0"].(map[string]any)["segments"] = []any{}
		}, "no digest"},
		{"no segments", func(r map[string]any) { r["segments"] = map[string]any{} }, "missing segment"},
		{"key size as a string", func(r map[string]any) { keyslot0(r)["key_size"] = "32" }, "key_size"},
		{"negative iterations", func(r map[string]any) { keyslot0(r)["kdf"].(map[string]any)["iterations"] = -1 }, "PBKDF2"},
		{"odd sector size", func(r map[string]any) { object(r, "segments")["0"].(map[string]any)["sector_size"] = 1000 }, "malformed"},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			dev := newLUKS2Mem(t, "p")
			rewrite(t, dev, tc.edit)
			g := &guardedDevice{Device: dev, t: t}
			r := &volume.Request{Dev: g, Header: g, Creds: pw("p")}
			_, err := (driver{}).Unlock(context.Background(), r)
			if !errors.Is(err, volume.ErrDamaged) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrDamaged mentioning %q", err, tc.want)
			}
		})
	}
}

// TestLUKS2HeaderCopies: a damaged copy is survived (with a warning) and
// repaired by the next header write; two damaged copies are refused.
func TestLUKS2HeaderCopies(t *testing.T) {
	open := func(dev *memDevice, typ string) (*volume.Unlocked, []string, error) {
		var warns []string
		r := &volume.Request{Dev: dev, Header: dev, Creds: pw("p"), Opts: volume.Options{Type: typ, Warn: func(m string) { warns = append(warns, m) }}}
		u, err := (driver{}).Unlock(context.Background(), r)
		return u, warns, err
	}
	for _, damage := range []struct {
		name string
		off  int64
		typ  string
	}{
		{"primary checksum", 4096 + 10, ""},
		{"secondary checksum", 16384 + 4096 + 10, ""},
		{"primary magic", 0, "luks2"},
	} {
		dev := newLUKS2Mem(t, "p")
		dev.b[damage.off] ^= 0xff
		_, warns, err := open(dev, damage.typ)
		if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "damaged") {
			t.Fatalf("%s: %v, warnings %q", damage.name, err, warns)
		}
		if _, err := AddKey(context.Background(), dev, pw("p"), []byte("q"), fastSlot()); err != nil {
			t.Fatalf("%s: %v", damage.name, err)
		}
		if _, warns, err = open(dev, damage.typ); err != nil || len(warns) != 0 {
			t.Fatalf("%s: not repaired by the next write: %v %q", damage.name, err, warns)
		}
	}
	dev := newLUKS2Mem(t, "p")
	dev.b[4096+10] ^= 1
	dev.b[16384+4096+10] ^= 1
	if _, _, err := open(dev, ""); !errors.Is(err, volume.ErrDamaged) {
		t.Fatalf("both copies damaged: %v", err)
	}
}

// TestManyKeyslots: the keyslot that matches is found among several tried
// in parallel, and the parallel search reports the right one.
func TestManyKeyslots(t *testing.T) {
	for _, typ := range []string{"luks1", "luks2"} {
		dev := &memDevice{b: make([]byte, 3<<20)}
		o := CreateOptions{Type: typ, KeySize: 256, KDF: fastKDF("pbkdf2"), Quick: true, DataOffset: 2 << 20}
		if typ == "luks2" {
			o.KeyslotsSize = 1 << 20
		}
		if _, err := Create(context.Background(), dev, o, pw("p0")); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 6; i++ {
			if _, err := AddKey(context.Background(), dev, pw("p0"), []byte(fmt.Sprintf("p%d", i)), fastSlot()); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 6; i++ {
			r := &volume.Request{Dev: dev, Header: dev, Creds: pw(fmt.Sprintf("p%d", i))}
			u, err := (driver{}).Unlock(context.Background(), r)
			if err != nil || *u.Info.KeySlot != i {
				t.Fatalf("%s: passphrase %d: %v", typ, i, err)
			}
		}
	}
}
