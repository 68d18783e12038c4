package tcrypt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// openWith opens dev read-only with the credentials and options.
func openWith(t testing.TB, dev volume.Device, c volume.Credentials, o volume.Options) (*volume.Volume, error) {
	t.Helper()
	o.ReadOnly = true
	return volume.OpenDeviceWith(context.Background(), dev, nil, c, o)
}

// TestConvertTrueCryptToVeraCrypt converts a TrueCrypt volume made here,
// with a hidden volume inside: the outer header first (the hidden one is
// then still TrueCrypt), then the hidden one with its own password. Each
// converted header opens as VeraCrypt with the new PIM and PRF and no
// longer as TrueCrypt, and every byte of both data areas is unchanged.
func TestConvertTrueCryptToVeraCrypt(t *testing.T) {
	ctx := context.Background()
	dev := newContainer(t, 2<<20)
	outer := volume.Credentials{Password: []byte("outer password")}
	hidden := volume.Credentials{Password: []byte("hidden password")}
	cr, err := Create(ctx, dev, outer, CreateOptions{TrueCrypt: true, Encryption: "AES-Twofish", Hash: "RIPEMD-160", Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := volume.New(dev, cr.Unlocked, volume.Options{})
	outerData := writeAll(t, ov)
	ov.Close()
	hc, err := CreateHidden(ctx, dev, hidden, CreateOptions{TrueCrypt: true, Encryption: "Serpent", Hash: "SHA-512", Quick: true}, 512<<10, headerGroupSize)
	if err != nil {
		t.Fatal(err)
	}
	hv, _ := volume.New(dev, hc.Unlocked, volume.Options{})
	hiddenData := writeAll(t, hv)
	hv.Close()
	// The hidden volume lies inside the outer data area: what the outer
	// view reads there changed when the hidden one was written.
	ov2, err := openWith(t, dev, outer, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outerData = readAll(t, ov2)
	ov2.Close()

	newOuter := outer
	newOuter.PIM = 1
	got, err := ConvertToVeraCrypt(ctx, dev, outer, ConvertOptions{PIM: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Hidden || got.Hash != "SHA-512" || got.Iterations != 16000 || got.Encryption != "AES-Twofish" {
		t.Fatalf("converted %+v", got)
	}
	v, err := openWith(t, dev, newOuter, volume.Options{Type: "veracrypt", Hash: "SHA-512"})
	if err != nil {
		t.Fatalf("the converted outer header does not open as VeraCrypt: %v", err)
	}
	if in := v.Info(); in.Format != "veracrypt" || in.Hash != "SHA-512" || in.Iterations != 16000 || in.MinProgramVersion != "1.0b" {
		t.Fatalf("converted header: %+v", in)
	}
	if !bytes.Equal(readAll(t, v), outerData) {
		t.Fatal("the outer data changed")
	}
	v.Close()
	if _, err := openWith(t, dev, outer, volume.Options{Type: "truecrypt"}); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("the outer volume still opens as TrueCrypt: %v", err)
	}
	// The hidden header is untouched: still TrueCrypt, and converting the
	// outer again finds nothing to convert.
	hv2, err := openWith(t, dev, hidden, volume.Options{Hidden: true, Type: "truecrypt"})
	if err != nil {
		t.Fatalf("the hidden volume no longer opens as TrueCrypt: %v", err)
	}
	hv2.Close()
	if _, err := ConvertToVeraCrypt(ctx, dev, outer, ConvertOptions{}); !errors.Is(err, ErrNotTrueCrypt) {
		t.Fatalf("converting a VeraCrypt volume: %v", err)
	}

	got, err = ConvertToVeraCrypt(ctx, dev, hidden, ConvertOptions{Open: volume.Options{Hidden: true}, Hash: "Whirlpool", PIM: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Hidden || got.Hash != "Whirlpool" || got.Iterations != 17000 {
		t.Fatalf("converted hidden %+v", got)
	}
	newHidden := hidden
	newHidden.PIM = 2
	hv3, err := openWith(t, dev, newHidden, volume.Options{Hidden: true, Type: "veracrypt", Hash: "Whirlpool"})
	if err != nil {
		t.Fatalf("the converted hidden header does not open: %v", err)
	}
	if !bytes.Equal(readAll(t, hv3), hiddenData) {
		t.Fatal("the hidden data changed")
	}
	hv3.Close()
	// Both copies of both headers were rewritten: the backups open too.
	for _, c := range []struct {
		creds  volume.Credentials
		hidden bool
		hash   string
	}{{newOuter, false, "SHA-512"}, {newHidden, true, "Whirlpool"}} {
		var raw [headerSize]byte
		off := int64(offNormal)
		if c.hidden {
			off = offHidden
		}
		dev.WriteAt(raw[:], off) // wipe the primary copy
		if v, err := openWith(t, dev, c.creds, volume.Options{Hidden: c.hidden, Type: "veracrypt", Hash: c.hash}); err != nil || !v.Info().BackupHeader {
			t.Fatalf("hidden=%v: the backup copy was not converted: %v", c.hidden, err)
		} else {
			v.Close()
		}
	}
}

// TestConvertCrashSafe crashes the conversion after every possible number
// of writes: the volume then opens as TrueCrypt or as VeraCrypt, its data
// intact.
func TestConvertCrashSafe(t *testing.T) {
	ctx := context.Background()
	oldC := volume.Credentials{Password: []byte("crash test")}
	newC := volume.Credentials{Password: []byte("crash test"), PIM: 1}
	for n := 0; n <= 2; n++ {
		dev := newContainer(t, 1<<20)
		cr, err := Create(ctx, dev, oldC, CreateOptions{TrueCrypt: true, Quick: true})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := volume.New(dev, cr.Unlocked, volume.Options{})
		data := writeAll(t, v)
		v.Close()
		_, err = ConvertToVeraCrypt(ctx, &crashDevice{Device: dev, n: n}, oldC, ConvertOptions{PIM: 1})
		if n == 2 && err != nil {
			t.Fatalf("no crash, yet: %v", err)
		}
		opened := 0
		for _, c := range []struct {
			creds volume.Credentials
			typ   string
		}{{oldC, "truecrypt"}, {newC, "veracrypt"}} {
			rv, err := openWith(t, dev, c.creds, volume.Options{Type: c.typ, Hash: "SHA-512"})
			if err != nil {
				continue
			}
			if !bytes.Equal(readAll(t, rv), data) {
				t.Fatalf("crash after %d writes: the data differs when opened as %s", n, c.typ)
			}
			rv.Close()
			opened++
		}
		if opened == 0 {
			t.Fatalf("crash after %d writes: opens neither as TrueCrypt nor as VeraCrypt", n)
		}
	}
}

// TestConvertRefuses: RIPEMD-160 as the new PRF (VeraCrypt 1.26 cannot
// open it), a PIM among the TrueCrypt credentials, legacy TrueCrypt
// volumes, and wrong passwords, each without writing anything.
func TestConvertRefuses(t *testing.T) {
	ctx := context.Background()
	dev := newContainer(t, 1<<20)
	c := volume.Credentials{Password: []byte("refusals")}
	if _, err := Create(ctx, dev, c, CreateOptions{TrueCrypt: true, Quick: true}); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, dev)
	if _, err := ConvertToVeraCrypt(ctx, dev, c, ConvertOptions{Hash: "ripemd160"}); err == nil || !strings.Contains(err.Error(), "RIPEMD-160") {
		t.Fatalf("RIPEMD-160: %v", err)
	}
	if _, err := ConvertToVeraCrypt(ctx, dev, volume.Credentials{Password: c.Password, PIM: 5}, ConvertOptions{}); err == nil {
		t.Fatal("a TrueCrypt PIM was accepted")
	}
	if _, err := ConvertToVeraCrypt(ctx, dev, volume.Credentials{Password: []byte("wrong")}, ConvertOptions{}); !errors.Is(err, ErrNotTrueCrypt) || !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if fileSum(t, dev) != before {
		t.Fatal("a refused conversion changed the file")
	}
	if testdata.Dir() == "" {
		t.Skip("corpus absent: legacy refusal not checked")
	}
	im := imageByName(t, "tc_2-ripemd160-lrw-aes")
	ld := openCopy(t, im.Path)
	lb := fileSum(t, ld)
	if _, err := ConvertToVeraCrypt(ctx, ld, volume.Credentials{Password: []byte(im.Password)}, ConvertOptions{}); !errors.Is(err, volume.ErrUnsupported) {
		t.Fatalf("legacy LRW volume: %v", err)
	}
	if fileSum(t, ld) != lb {
		t.Fatal("the refused legacy conversion changed the file")
	}
}

func fileSum(t testing.TB, dev volume.Device) [32]byte {
	t.Helper()
	b := make([]byte, dev.Size())
	if _, err := dev.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// openCopy copies a corpus file and opens the copy as a Device.
func openCopy(t testing.TB, path string) *volume.FileDevice {
	t.Helper()
	p := testdata.CopyFile(t, path)
	d, err := volume.OpenDevice(p, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// convertibleCorpus are the corpus images of TrueCrypt 6.0 and later (XTS,
// header version ≥ 4), the ones VeraCrypt can hold.
func convertibleCorpus(t testing.TB) []corpusImage {
	var out []corpusImage
	for _, im := range corpus(t) {
		if strings.HasPrefix(im.Name, "tc") && im.Mode == "xts" && !strings.HasPrefix(im.Name, "tc_3") {
			out = append(out, im)
		}
	}
	return out
}

// TestConvertCorpus converts every TrueCrypt 6/7 image of the corpus, the
// hidden volumes too, and checks that the whole decrypted data area is
// byte for byte what it was, and that it holds the FAT filesystem the
// corpus README promises.
func TestConvertCorpus(t *testing.T) {
	ims := convertibleCorpus(t)
	if len(ims) < 20 {
		t.Fatalf("only %d convertible TrueCrypt images found", len(ims))
	}
	for _, im := range ims {
		im := im
		t.Run(im.Name, func(t *testing.T) {
			t.Parallel()
			dev := openCopy(t, im.Path)
			type part struct {
				hidden bool
				pw     string
				serial string
			}
			parts := []part{{false, im.Password, "DEAD-BABE"}}
			if im.Hidden {
				parts = append(parts, part{true, pwHidden, "CAFE-BABE"})
			}
			for _, p := range parts {
				c := volume.Credentials{Password: []byte(p.pw), Keyfiles: im.Keyfiles}
				v, err := openWith(t, dev, c, volume.Options{Hidden: p.hidden, Hash: im.Hash})
				if err != nil {
					t.Fatal(err)
				}
				want := sha256.Sum256(readAll(t, v))
				v.Close()
				if _, err := ConvertToVeraCrypt(context.Background(), dev, c, ConvertOptions{Open: volume.Options{Hidden: p.hidden}, PIM: 1}); err != nil {
					t.Fatalf("hidden=%v: %v", p.hidden, err)
				}
				c.PIM = 1
				v, err = openWith(t, dev, c, volume.Options{Hidden: p.hidden, Type: "veracrypt", Hash: "SHA-512"})
				if err != nil {
					t.Fatalf("hidden=%v: the converted header does not open: %v", p.hidden, err)
				}
				if sha256.Sum256(readAll(t, v)) != want {
					t.Fatalf("hidden=%v: the data area changed", p.hidden)
				}
				if s := serialOf(t, v); s != p.serial {
					t.Fatalf("hidden=%v: FAT serial %s, want %s", p.hidden, s, p.serial)
				}
				v.Close()
			}
		})
	}
}
