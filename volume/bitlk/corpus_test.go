package bitlk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// The BitLocker corpus (../shared/testdata/cryptsetup/bitlk-images.tar.xz)
// was made by Windows; images.conf gives each image's protectors and the
// sha256 of the whole volume as dm-crypt shows it, the exact check here.
//
// Hashing 100-134 MB per image takes seconds under qemu, so every run also
// hashes a sample: the first and last 4 KiB of every segment (where
// relocation, zero areas and IV offsets show), compared with
// testdata/samples.txt. A full (not -short) run checks the samples file
// against the full sha256 of images.conf in the same pass, so the file
// can only hold values the oracle confirmed; -update-samples rewrites it.

var updateSamples = flag.Bool("update-samples", false, "rewrite testdata/samples.txt from a full run whose sha256s all match images.conf")

const samplesFile = "testdata/samples.txt"

type protector struct {
	name  string
	creds volume.Credentials
	vmk   string // GUID of the VMK it must open
	kdf   bool   // costs a key stretch
}

func protectorsOf(im testdata.BitLockerImage) []protector {
	var ps []protector
	if im.ClearKeyVMK != "" {
		ps = append(ps, protector{name: "clear key", vmk: im.ClearKeyVMK})
	}
	if im.StartupVMK != "" {
		ps = append(ps, protector{name: "startup key", creds: volume.Credentials{StartupKey: im.StartupKey}, vmk: im.StartupVMK})
	}
	if im.Password != "" {
		ps = append(ps, protector{name: "password", creds: volume.Credentials{Password: []byte(im.Password)}, vmk: im.PasswordVMK, kdf: true})
	}
	if im.Recovery != "" {
		// As cryptsetup takes it: the recovery password as the password.
		ps = append(ps, protector{name: "recovery password", creds: volume.Credentials{Password: []byte(im.Recovery)}, vmk: im.RecoveryVMK, kdf: true})
	}
	if im.Recovery2 != "" {
		ps = append(ps, protector{name: "second recovery password", creds: volume.Credentials{RecoveryPassword: []byte(im.Recovery2)}, vmk: im.Recovery2VMK, kdf: true})
	}
	return ps
}

// shortSet names the protector with a key stretch that runs under -short
// (about 4 s of CPU each under qemu ARMv6) for a few images: between them
// every mode, both sector sizes, To Go, a Unicode password and a recovery
// password given as the password. Startup keys and clear keys, which cost
// no stretch, run everywhere.
var shortSet = map[string]string{
	"bitlk-aes-cbc-128-4k":       "password",
	"bitlk-aes-cbc-elephant-256": "recovery password",
	"bitlk-togo-aes-xts-128":     "password",
	"bitlk-aes-xts-128-unicode":  "password",
}

func TestCorpus(t *testing.T) {
	imgs := testdata.BitLockerImages(t)
	golden := readSamples(t)
	var (
		mu      sync.Mutex
		samples = map[string]string{}
		fullOK  = true
	)
	t.Run("images", func(t *testing.T) {
		for _, im := range imgs {
			t.Run(im.Name, func(t *testing.T) {
				t.Parallel()
				sample, ok := checkImage(t, im, golden[im.Name])
				mu.Lock()
				defer mu.Unlock()
				if sample != "" {
					samples[im.Name] = sample
				}
				fullOK = fullOK && ok && !t.Failed()
			})
		}
	})
	if *updateSamples {
		if testing.Short() || !fullOK {
			t.Fatal("-update-samples needs a full run (not -short) in which every sha256 matched images.conf")
		}
		writeSamples(t, samples)
	}
}

// checkImage opens im with each of its protectors and checks what it
// shows; it returns the sample hash and whether the full hash was checked.
func checkImage(t *testing.T, im testdata.BitLockerImage, golden string) (sample string, full bool) {
	ps := protectorsOf(im)
	if im.SHA256 == "" {
		// Encrypt-on-write and partially encrypted: refused before any
		// key is tried, whatever the credentials.
		for _, p := range ps {
			_, err := open(t, im.Path, p.creds)
			if !errors.Is(err, volume.ErrUnsupported) || !strings.Contains(err.Error(), "encrypt-on-write") {
				t.Errorf("%s: %v, want a refusal of the encrypt-on-write volume", p.name, err)
			}
		}
		return "", true
	}
	m := metadataOf(t, im.Path)
	var key []byte
	for _, p := range ps {
		if p.kdf && testing.Short() && shortSet[im.Name] != p.name {
			continue
		}
		v, err := open(t, im.Path, p.creds)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		in := v.Info()
		if in.Format != "bitlk" || in.UUID != im.GUID || in.Encryption != im.Cipher || in.KeySlot == nil {
			t.Errorf("%s: info %+v, want bitlk %s %s", p.name, in, im.GUID, im.Cipher)
		} else if got := m.VMKs[*in.KeySlot].GUID.String(); got != p.vmk {
			t.Errorf("%s: opened VMK %s, want %s", p.name, got, p.vmk)
		}
		if r, err := fsprobe.Probe(v); err != nil || r.Serial != im.UUID {
			t.Errorf("%s: filesystem %+v, %v; want serial %s", p.name, r, err, im.UUID)
		}
		k := v.MasterKey()
		switch {
		case key == nil:
			key = k
			sample = sampleHash(t, v, m)
			if golden != "" && sample != golden {
				t.Errorf("%s: sample sha256 %s, testdata/samples.txt has %s", p.name, sample, golden)
			}
			if !testing.Short() {
				if got := fullHash(t, v); got != im.SHA256 {
					t.Errorf("%s: sha256 of the volume %s, want %s", p.name, got, im.SHA256)
				} else {
					full = true
				}
				checkKeyWithCryptsetup(t, im, p, k)
			}
		case !bytes.Equal(k, key):
			t.Errorf("%s: volume key %x differs from the other protectors' %x", p.name, k, key)
		}
		v.Close()
	}
	if golden == "" && !*updateSamples {
		t.Errorf("no sample hash for %s in %s (run the full suite with -update-samples)", im.Name, samplesFile)
	}
	return sample, full
}

func open(t *testing.T, path string, c volume.Credentials) (*volume.Volume, error) {
	t.Helper()
	return volume.OpenWith(context.Background(), path, c, volume.Options{ReadOnly: true, Type: "bitlk", Warn: func(s string) { t.Log("warning:", s) }})
}

func metadataOf(t testing.TB, path string) *Metadata {
	t.Helper()
	d, err := volume.OpenDevice(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m, err := ReadMetadata(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fullHash(t *testing.T, v *volume.Volume) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(v, 0, v.Size())); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sampleHash hashes the first and last 4 KiB of every segment of the
// volume's layout, in order.
func sampleHash(t *testing.T, v *volume.Volume, m *Metadata) string {
	t.Helper()
	segs, err := m.segments(v.Size())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	buf := make([]byte, 4096)
	for _, s := range segs {
		for _, off := range []int64{s.Offset, s.Offset + s.Size - 4096} {
			if _, err := v.ReadAt(buf, off); err != nil {
				t.Fatal(err)
			}
			h.Write(buf)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readSamples(t *testing.T) map[string]string {
	out := map[string]string{}
	f, err := os.Open(samplesFile)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, h, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("%s: bad line %q", samplesFile, line)
		}
		out[name] = strings.TrimSpace(h)
	}
	return out
}

func writeSamples(t *testing.T, s map[string]string) {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# sha256 of the first and last 4 KiB of every segment of each decrypted\n")
	b.WriteString("# corpus image (see corpus_test.go), written by a full run of TestCorpus\n")
	b.WriteString("# -update-samples in which every image's full sha256 matched images.conf.\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, s[n])
	}
	if err := os.WriteFile(samplesFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkKeyWithCryptsetup asks cryptsetup for the volume key the same
// protector gives, where it is installed (it reads BitLocker metadata
// without device-mapper). cryptsetup 2.6 has no clear-key support.
func checkKeyWithCryptsetup(t *testing.T, im testdata.BitLockerImage, p protector, key []byte) {
	t.Helper()
	cs, err := exec.LookPath("cryptsetup")
	if err != nil {
		t.Log("cryptsetup is not installed: the volume key is checked by the sha256 only (apt-get install cryptsetup-bin)")
		return
	}
	args := []string{"bitlkDump", "--dump-volume-key", "--batch-mode"}
	var stdin []byte
	switch {
	case p.creds.StartupKey != "":
		args = append(args, "--key-file", p.creds.StartupKey)
	case p.creds.Password != nil:
		args = append(args, "--key-file", "-")
		stdin = p.creds.Password
	default:
		t.Logf("%s: cryptsetup 2.6 cannot open it; the sha256 checks it", p.name)
		return
	}
	cmd := exec.Command(cs, append(args, im.Path)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil && !isASCII(stdin) && bytes.Contains(out, []byte("No key available")) {
		// cryptsetup before 2.8 turns non-ASCII passwords into UTF-16
		// wrongly; the sha256 above is the check.
		t.Logf("%s: this cryptsetup cannot convert the non-ASCII password: %s", p.name, bytes.TrimSpace(out))
		return
	}
	if err != nil {
		t.Errorf("cryptsetup %s: %v\n%s", strings.Join(args, " "), err, out)
		return
	}
	var hexKey strings.Builder
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "MK dump:"); ok {
			in, line = true, rest
		} else if !in || !strings.HasPrefix(line, "\t") {
			in = false
			continue
		}
		hexKey.WriteString(strings.Join(strings.Fields(line), ""))
	}
	if got := hexKey.String(); got != hex.EncodeToString(key) {
		t.Errorf("%s: volume key %x, cryptsetup says %s", p.name, key, got)
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
