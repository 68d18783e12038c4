package fvault2

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// The facts ../shared/testdata/README.md gives for fvault2-images' "small".
const (
	smallPassword   = "heslo123"
	smallVolumeKey  = "20734d3389212774d7610c29d732880916f3be14c4b12ac7aaf07e5ccc77b319"
	smallSHA256     = "2c662e36c0f7e2f5583e6a939bbcbdc660805692d0fccaa45ad4052beb3b8e18"
	smallPVUUID     = "fc52bfae-5a1f-4f9b-b3a6-f33303a0e401"
	smallLVUUID     = "de124d8a-2164-394e-924f-8e28db0a09cb"
	smallOffset     = 67108864
	smallSize       = 167772160
	smallIterations = 204222
	// The first and last MiB of the logical volume, hashed: what -short
	// checks where hashing 160 MiB takes too long (qemu). A full run
	// checks this against smallSHA256 in the same pass.
	smallSampleSHA256 = "040a38ce5d3a3192c7fbf6effa14f4b71276a518df9ef69de6f10d3ee07e76dd"
)

func smallImage(t testing.TB) string {
	t.Helper()
	return filepath.Join(testdata.Unpack(t, "fvault2-images.tar.xz"), "fvault2-images", "small")
}

func open(t *testing.T, path string, pw string) (*volume.Volume, error) {
	t.Helper()
	return volume.OpenWith(context.Background(), path, volume.Credentials{Password: []byte(pw)}, volume.Options{ReadOnly: true})
}

func TestCorpusSmall(t *testing.T) {
	p := smallImage(t)
	d, err := volume.OpenDevice(p, true)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadMetadata(d)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	if uuidString(m.PhysicalVolumeUUID) != smallPVUUID || m.LVOffset != smallOffset || m.LVSize != smallSize || m.Iterations != smallIterations {
		t.Errorf("metadata %+v", m)
	}
	v, err := open(t, p, smallPassword)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := hex.EncodeToString(v.MasterKey()); got != smallVolumeKey {
		t.Errorf("volume key %s, want %s", got, smallVolumeKey)
	}
	in := v.Info()
	if in.Format != "fvault2" || in.DataOffset != smallOffset || in.DataSize != smallSize || in.Iterations != smallIterations {
		t.Errorf("info %+v", in)
	}
	// The logical volume holds HFS+ with the UUID the README gives.
	if r, err := fsprobe.Probe(v); err != nil || r.Type != "hfsplus" || r.UUID != smallLVUUID {
		t.Errorf("filesystem %+v, %v; want hfsplus %s", r, err, smallLVUUID)
	}
	sample := sha256.New()
	buf := make([]byte, 1<<20)
	for _, off := range []int64{0, v.Size() - int64(len(buf))} {
		if _, err := v.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
		sample.Write(buf)
	}
	gotSample := hex.EncodeToString(sample.Sum(nil))
	if testing.Short() {
		if gotSample != smallSampleSHA256 {
			t.Errorf("sample sha256 %s, want %s", gotSample, smallSampleSHA256)
		}
		return
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(v, 0, v.Size())); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != smallSHA256 {
		t.Fatalf("sha256 of the logical volume %s, want %s", got, smallSHA256)
	}
	if gotSample != smallSampleSHA256 {
		t.Errorf("the full sha256 matches; update smallSampleSHA256 to %s", gotSample)
	}
	checkWithCryptsetup(t, p)
}

// checkWithCryptsetup compares the metadata cryptsetup's fvault2Dump
// shows and the volume key its --dump-volume-key gives, where installed.
func checkWithCryptsetup(t *testing.T, p string) {
	cs, err := exec.LookPath("cryptsetup")
	if err != nil {
		t.Log("cryptsetup is not installed: checked against the README's facts only")
		return
	}
	cmd := exec.Command(cs, "fvault2Dump", "--dump-volume-key", "--batch-mode", "--key-file", "-", p)
	cmd.Stdin = strings.NewReader(smallPassword)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cryptsetup fvault2Dump: %v\n%s", err, out)
	}
	var key strings.Builder
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "Volume key:"); ok {
			in, line = true, rest
		} else if !in || !strings.HasPrefix(line, "\t") {
			in = false
			continue
		}
		key.WriteString(strings.Join(strings.Fields(line), ""))
	}
	if key.String() != smallVolumeKey {
		t.Errorf("cryptsetup's volume key %q, want %s\n%s", key.String(), smallVolumeKey, out)
	}
}

func TestWrongPassphrase(t *testing.T) {
	if testing.Short() {
		t.Skip("PBKDF2 with 204,222 iterations takes long under emulation")
	}
	_, err := open(t, smallImage(t), "heslo124")
	if !errors.Is(err, volume.ErrWrongPassword) || !strings.Contains(err.Error(), "unwraps none") {
		t.Fatalf("got %v", err)
	}
}

// TestDamagedHeader: a changed header byte fails the header's CRC-32C;
// the signature alone no longer makes the file CoreStorage.
func TestDamagedHeader(t *testing.T) {
	b, err := os.ReadFile(smallImage(t))
	if err != nil {
		t.Fatal(err)
	}
	head := append([]byte(nil), b[:512]...)
	if !IsCoreStorage(head) {
		t.Fatal("the corpus image is not recognised")
	}
	head[200] ^= 1
	if IsCoreStorage(head) {
		t.Fatal("a damaged header is recognised")
	}
	dev := &memDev{b: append(head, b[512:16<<20]...)}
	if _, err := ReadMetadata(dev); !errors.Is(err, volume.ErrDamaged) {
		t.Fatalf("damaged header: %v", err)
	}
	// A damaged encrypted metadata block is found by its CRC after
	// decryption.
	dev = &memDev{b: append([]byte(nil), b[:16<<20]...)}
	le := binary.LittleEndian
	label := int64(le.Uint64(dev.b[104:])) * int64(le.Uint32(dev.b[96:]))
	vg := label + int64(le.Uint32(dev.b[label+220:]))
	enc := int64(le.Uint64(dev.b[vg+32:])) * int64(le.Uint32(dev.b[96:]))
	dev.b[enc+100] ^= 1
	if _, err := ReadMetadata(dev); !errors.Is(err, volume.ErrDamaged) || !strings.Contains(err.Error(), "CRC-32C") {
		t.Fatalf("damaged encrypted metadata: %v", err)
	}
}

type memDev struct{ b []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (m *memDev) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }
func (m *memDev) Size() int64                              { return int64(len(m.b)) }
func (m *memDev) Sync() error                              { return nil }

// FuzzPlist: the plist scanner, which reads decrypted but untrusted
// metadata, must never panic or read out of bounds.
func FuzzPlist(f *testing.F) {
	f.Add(`<dict><key>PassphraseWrappedKEKStruct</key><data ID="4">AAAA</data><key>X</key><reference IDREF="4"/></dict>`)
	f.Add(`<key>com.apple.corestorage.lv.size</key><integer size="64" ID="3">0xa000000</integer>`)
	f.Fuzz(func(t *testing.T, x string) {
		for _, typ := range []string{"data", "integer", "string"} {
			for _, v := range plistValues(x, "PassphraseWrappedKEKStruct", typ) {
				plistData(v)
				plistInteger(v)
			}
			plistValues(x, "X", typ)
		}
	})
}
