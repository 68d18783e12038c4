package tcrypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

func TestHeaderBackupRestore(t *testing.T) {
	c := volume.Credentials{Password: []byte("pw"), PIM: 1}
	dev := newContainer(t, 1<<20)
	cr, err := Create(context.Background(), dev, c, CreateOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := volume.New(dev, cr.Unlocked, volume.Options{})
	data := writeAll(t, v)
	v.Close()

	bak, err := HeaderBackup(context.Background(), dev, c, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HeaderBackup(context.Background(), dev, volume.Credentials{Password: []byte("no")}, volume.Options{Hash: "SHA-512"}); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("backup with a wrong password: %v", err)
	}

	// Destroy both header groups.
	junk := make([]byte, headerGroupSize)
	rand.Read(junk)
	dev.WriteAt(junk, 0)
	dev.WriteAt(junk, dev.Size()-headerGroupSize)
	if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, c, volume.Options{Hash: "SHA-512"}); err == nil {
		t.Fatal("opens without headers")
	}

	// Another volume's backup of the same size is refused once the real
	// header is back; first restore the right one.
	if err := HeaderRestore(context.Background(), dev, volume.Credentials{Password: []byte("no"), PIM: 1}, volume.Options{}, bak); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("restore with a wrong password: %v", err)
	}
	if err := HeaderRestore(context.Background(), dev, c, volume.Options{}, bak); err != nil {
		t.Fatal(err)
	}
	rv, err := volume.OpenDeviceWith(context.Background(), dev, nil, c, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, rv), data) {
		t.Fatal("data differs after restore")
	}
	rv.Close()

	other := newContainer(t, 1<<20)
	if _, err := Create(context.Background(), other, c, CreateOptions{Quick: true}); err != nil {
		t.Fatal(err)
	}
	otherBak, err := HeaderBackup(context.Background(), other, c, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := HeaderRestore(context.Background(), dev, c, volume.Options{}, otherBak); !errors.Is(err, volume.ErrExists) {
		t.Fatalf("another volume's backup: %v", err)
	}
	small := newContainer(t, 512<<10)
	if err := HeaderRestore(context.Background(), small, c, volume.Options{}, otherBak); !errors.Is(err, volume.ErrExists) {
		t.Fatalf("a backup too large for the container: %v", err)
	}
}
