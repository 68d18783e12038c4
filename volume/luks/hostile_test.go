package luks

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// guardedDevice fails the test on any read or write outside the device.
type guardedDevice struct {
	volume.Device
	t      testing.TB
	mu     sync.Mutex
	writes int
}

func (g *guardedDevice) check(op string, n int, off int64) {
	if off < 0 || off+int64(n) > g.Device.Size() {
		g.t.Errorf("%s of %d bytes at %d outside the %d-byte device", op, n, off, g.Device.Size())
	}
}

func (g *guardedDevice) ReadAt(p []byte, off int64) (int, error) {
	g.check("read", len(p), off)
	return g.Device.ReadAt(p, off)
}

func (g *guardedDevice) WriteAt(p []byte, off int64) (int, error) {
	g.check("write", len(p), off)
	g.mu.Lock()
	g.writes++
	g.mu.Unlock()
	return g.Device.WriteAt(p, off)
}

func openGuarded(t *testing.T, path string, readOnly bool) *guardedDevice {
	t.Helper()
	return &guardedDevice{Device: openRaw(t, path, readOnly), t: t}
}

// TestHostileHeaders opens every malicious or invalid header of the corpus
// with the right passphrase where one exists and checks it is refused as
// cryptsetup refuses it, with a clear error, no panic and no access
// outside the file.
func TestHostileHeaders(t *testing.T) {
	for _, tc := range []struct {
		file, pass string
		want       error
		msg        string
	}{
		// cryptsetup: "LUKS keyslot 1 is invalid." and so on.
		{"evil_hdr-keyslot_overlap.xz", compatPassphrase, volume.ErrDamaged, "keyslot 1 is invalid"},
		{"evil_hdr-luks_hdr_damage.xz", compatPassphrase, volume.ErrDamaged, "keyslot 2 is invalid"},
		{"evil_hdr-payload_overwrite.xz", compatPassphrase, volume.ErrDamaged, "keyslot 3 is invalid"},
		{"evil_hdr-stripes_payload_dmg.xz", compatPassphrase, volume.ErrDamaged, "keyslot 5 is invalid"},
		// "Device ... is too small. (LUKS1 requires at least 1049600 bytes.)"
		{"evil_hdr-small_luks_device.xz", compatPassphrase, volume.ErrDamaged, "1049600 bytes"},
		// The data segment's capi:xts(ecb(aes-generic))-plain64 names kernel
		// drivers; no cipher of this build can serve it.
		{"luks2_invalid_cipher.img.xz", compatTest2PWD1, volume.ErrUnsupported, "capi:xts(ecb(aes-generic))-plain64"},
		// Mandatory requirements req0 and req1: cryptsetup refuses to
		// activate.
		{"luks2_header_requirements.tar.xz/luks2_header_requirements", reqsPassphrase, volume.ErrUnsupported, "req0"},
	} {
		tc := tc
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			p := unpackMember(t, tc.file)
			dev := openGuarded(t, p, true)
			c := volume.Credentials{Password: []byte(tc.pass)}
			_, err := volume.OpenDeviceWith(context.Background(), dev, dev, c, volume.Options{ReadOnly: true})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
			t.Logf("refused: %v", err)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

// unpackMember unpacks a corpus file; "ARCHIVE.tar.xz/MEMBER" names a file
// inside an archive.
func unpackMember(t *testing.T, name string) string {
	t.Helper()
	if i := strings.Index(name, ".tar.xz/"); i >= 0 {
		return filepath.Join(testdata.Unpack(t, name[:i+7]), name[i+8:])
	}
	return testdata.Unpack(t, name)
}

// TestRequirementsFreeTwin: the same header without requirement flags opens.
func TestRequirementsFreeTwin(t *testing.T) {
	p := unpackMember(t, "luks2_header_requirements.tar.xz/luks2_header_requirements_free")
	v, err := openFile(t, p, volume.Credentials{Password: []byte(reqsPassphrase)}, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
}

// TestUnassignedKeyslot: keyslot 1 of luks2_keyslot_unassigned holds a key
// bound to no segment. cryptsetup skips it when trying every keyslot, so
// its passphrase does not open the volume; keyslot 0 does.
func TestUnassignedKeyslot(t *testing.T) {
	p := testdata.Unpack(t, "luks2_keyslot_unassigned.img.xz")
	dev := openGuarded(t, p, true)
	open := func(pass string, slot *int) error {
		v, err := volume.OpenDeviceWith(context.Background(), dev, dev, volume.Credentials{Password: []byte(pass), KeySlot: slot}, volume.Options{ReadOnly: true})
		if err == nil {
			v.Close()
		}
		return err
	}
	if err := open(compatPassphrase, nil); err != nil {
		t.Fatalf("keyslot 0: %v", err)
	}
	if err := open(compatTest2PWD1, nil); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("unbound keyslot's passphrase: got %v, want ErrWrongPassword", err)
	}
	one := 1
	if err := open(compatTest2PWD1, &one); !errors.Is(err, volume.ErrUnsupported) || !strings.Contains(err.Error(), "unbound") {
		t.Fatalf("--key-slot 1: got %v", err)
	}
	h, err := Inspect(dev)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Keyslots) != 2 || h.Keyslots[0].Unbound || !h.Keyslots[1].Unbound {
		t.Fatalf("keyslots %+v", h.Keyslots)
	}
}

// TestValidHeaderImages: luks2_valid_hdr (argon2 keyslots of an early
// draft, data wiped) and the detached LUKS1 header valid_header_file parse
// cleanly.
func TestValidHeaderImages(t *testing.T) {
	for _, name := range []string{"luks2_valid_hdr.img.xz", "valid_header_file.xz"} {
		p := testdata.Unpack(t, name)
		dev := openGuarded(t, p, true)
		h, err := Inspect(dev)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.UUID == "" || len(h.Keyslots) == 0 {
			t.Fatalf("%s: %+v", name, h)
		}
	}
}
