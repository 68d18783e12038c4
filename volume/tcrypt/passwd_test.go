package tcrypt

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// crashDevice lets the first n writes through, tears the next one (only its
// first half reaches the disk) and fails every later write: a power cut.
type crashDevice struct {
	volume.Device
	n      int
	writes int
}

var errCrashed = errors.New("simulated crash")

func (d *crashDevice) WriteAt(p []byte, off int64) (int, error) {
	d.writes++
	switch {
	case d.writes <= d.n:
		return d.Device.WriteAt(p, off)
	case d.writes == d.n+1:
		d.Device.WriteAt(p[:len(p)/2], off)
		return len(p) / 2, errCrashed
	}
	return 0, errCrashed
}

// TestChangeCredentialsCrashSafe changes the password with a crash after
// every possible number of writes and checks that the volume then opens
// with the old or the new password, with its data intact.
func TestChangeCredentialsCrashSafe(t *testing.T) {
	oldC := volume.Credentials{Password: []byte("old password"), PIM: 1}
	newC := volume.Credentials{Password: []byte("new password"), PIM: 2}
	for _, hidden := range []bool{false, true} {
		for n := 0; n <= 2; n++ {
			dev := newContainer(t, 1<<20)
			cr, err := Create(context.Background(), dev, oldC, CreateOptions{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			if hidden {
				if cr, err = CreateHidden(context.Background(), dev, oldC, CreateOptions{Quick: true}, 256<<10, headerGroupSize+64<<10); err != nil {
					t.Fatal(err)
				}
			}
			v, _ := volume.New(dev, cr.Unlocked, volume.Options{})
			data := writeAll(t, v)
			v.Close()

			o := ChangeOptions{Open: volume.Options{Hidden: hidden}}
			err = ChangeCredentials(context.Background(), &crashDevice{Device: dev, n: n}, oldC, newC, o)
			if n == 2 && err != nil {
				t.Fatalf("no crash, yet: %v", err)
			}
			opened := 0
			for _, c := range []volume.Credentials{oldC, newC} {
				rv, err := volume.OpenDeviceWith(context.Background(), dev, nil, c, volume.Options{Hidden: hidden, ReadOnly: true, Hash: "SHA-512"})
				if err != nil {
					continue
				}
				if !bytes.Equal(readAll(t, rv), data) {
					t.Fatalf("hidden=%v crash after %d writes: data differs", hidden, n)
				}
				rv.Close()
				opened++
			}
			if opened == 0 {
				t.Fatalf("hidden=%v crash after %d writes: opens with neither password", hidden, n)
			}
			if n == 2 {
				// Complete: only the new password opens it.
				if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, oldC, volume.Options{Hidden: hidden, ReadOnly: true, Hash: "SHA-512"}); err == nil {
					t.Fatal("the old password still opens the volume after the change")
				}
			}
		}
	}
}

// TestChangeCredentialsNewPRF switches a volume from SHA-512 to Whirlpool
// and to a keyfile.
func TestChangeCredentialsNewPRF(t *testing.T) {
	dev := newContainer(t, 512<<10)
	oldC := volume.Credentials{Password: []byte("pw"), PIM: 1}
	if _, err := Create(context.Background(), dev, oldC, CreateOptions{Quick: true}); err != nil {
		t.Fatal(err)
	}
	newC := volume.Credentials{Password: []byte("pw2"), PIM: 3}
	if err := ChangeCredentials(context.Background(), dev, oldC, newC, ChangeOptions{NewHash: "Whirlpool"}); err != nil {
		t.Fatal(err)
	}
	v, err := volume.OpenDeviceWith(context.Background(), dev, nil, newC, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if in := v.Info(); in.Hash != "Whirlpool" || in.Iterations != 15000+3*1000 {
		t.Fatalf("after the change: %s, %d iterations", in.Hash, in.Iterations)
	}
}
