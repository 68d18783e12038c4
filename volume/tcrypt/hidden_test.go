package tcrypt

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestCorpusHiddenWithPasswordAlone opens the hidden volume of every
// corpus image that has one with the hidden password and no --hidden: it
// must be the hidden volume (serial CAFE-BABE), as VeraCrypt opens it; the
// outer password still opens the outer one. The images are opened with
// their PRF as a hint (which still tries every header copy); one VeraCrypt
// image also without, the way a user types it.
func TestCorpusHiddenWithPasswordAlone(t *testing.T) {
	n := 0
	for _, im := range corpus(t) {
		if !im.Hidden {
			continue
		}
		n++
		t.Run(im.Name, func(t *testing.T) {
			hints := []bool{true}
			if im.Name == "vc_1-sha512-xts-aes-hidden" {
				hints = append(hints, false)
			}
			for _, hint := range hints {
				v, err := openImage(t, im, false, pwHidden, hint)
				if err != nil {
					t.Fatalf("hint %v: %v", hint, err)
				}
				if !v.Info().Hidden {
					t.Errorf("hint %v: the hidden password opened a volume not reported as hidden", hint)
				}
				if !wipedAt(t, im.Path, v.Info().DataOffset) {
					if got := serialOf(t, v); got != "CAFE-BABE" {
						t.Errorf("hint %v: serial %q, want CAFE-BABE", hint, got)
					}
				}
				v.Close()
			}
			v, err := openImage(t, im, false, im.Password, true)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if v.Info().Hidden {
				t.Error("the outer password opened the hidden volume")
			}
		})
	}
	if n != 11 {
		t.Errorf("%d hidden images, want 11", n)
	}
}

// TestCreatedHiddenWithPasswordAlone makes an outer and a hidden volume,
// and opens each with its own password alone; --protect-hidden still
// opens the outer one with the outer password.
func TestCreatedHiddenWithPasswordAlone(t *testing.T) {
	dev, outer, hidden, hiddenData := createdHidden(t)
	hv, err := volume.OpenDeviceWith(context.Background(), dev, nil, hidden, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hv.Info().Hidden || !bytes.Equal(readAll(t, hv), hiddenData) {
		t.Fatal("the hidden password did not open the hidden volume")
	}
	hv.Close()
	ov, err := volume.OpenDeviceWith(context.Background(), dev, nil, outer, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if ov.Info().Hidden {
		t.Fatal("the outer password opened the hidden volume")
	}
	ov.Close()
	// Protecting the hidden volume with its own password as the outer
	// password is refused: that password opens no outer volume.
	if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, hidden, volume.Options{ProtectHidden: &hidden}); err == nil {
		t.Fatal("the hidden password opened an outer volume to protect")
	}
}

// createdHidden makes a 2 MiB outer volume (PIM 1) with a 512 KiB hidden
// one filled with random data.
func createdHidden(t *testing.T) (*volume.FileDevice, volume.Credentials, volume.Credentials, []byte) {
	t.Helper()
	dev := newContainer(t, 2<<20)
	outer := volume.Credentials{Password: []byte("outer password"), PIM: 1}
	hidden := volume.Credentials{Password: []byte("hidden password"), PIM: 1}
	if _, err := Create(context.Background(), dev, outer, CreateOptions{Quick: true}); err != nil {
		t.Fatal(err)
	}
	hc, err := CreateHidden(context.Background(), dev, hidden, CreateOptions{Quick: true}, 512<<10, headerGroupSize)
	if err != nil {
		t.Fatal(err)
	}
	hv, err := volume.New(dev, hc.Unlocked, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := writeAll(t, hv)
	hv.Close()
	return dev, outer, hidden, data
}

// TestCreatedHiddenOpensInVeraCrypt mounts a hidden volume made here in
// VeraCrypt 1.26.24 with its password alone (VeraCrypt has no --hidden: it
// tries both headers), checks that VeraCrypt calls it hidden and decrypts
// the same bytes, and that the outer password mounts the outer volume.
func TestCreatedHiddenOpensInVeraCrypt(t *testing.T) {
	vc := testdata.VeraCrypt(t, oracle.VeraCrypt12624)
	dev, outer, hidden, hiddenData := createdHidden(t)
	ctx := context.Background()
	for _, tc := range []struct {
		creds volume.Credentials
		typ   string
	}{{hidden, "Hidden"}, {outer, "Normal"}} {
		m, err := vc.Mount(ctx, dev.Name(), oracle.MountOptions{Password: string(tc.creds.Password), PIM: tc.creds.PIM, ReadOnly: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		p, err := m.Properties(ctx)
		if err != nil {
			m.Dismount()
			t.Fatal(err)
		}
		got, err := os.ReadFile(m.Dev)
		if derr := m.Dismount(); derr != nil {
			t.Fatal(derr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if p["Type"] != tc.typ {
			t.Errorf("VeraCrypt says the volume is %q, want %q", p["Type"], tc.typ)
		}
		if tc.typ == "Hidden" && !bytes.Equal(got, hiddenData) {
			t.Errorf("VeraCrypt decrypted other bytes than cryptvol wrote into the hidden volume (%d vs %d bytes)", len(got), len(hiddenData))
		}
	}
}
