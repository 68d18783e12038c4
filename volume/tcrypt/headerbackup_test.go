package tcrypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// recogniseFS is what the CLI proves a backup with: the decrypted data
// area holds a filesystem fsprobe knows.
func recogniseFS(r io.ReaderAt, size int64) bool {
	_, err := fsprobe.Probe(r)
	return err == nil
}

// sameData recognises exactly data at the start of the data area.
func sameData(data []byte) func(io.ReaderAt, int64) bool {
	return func(r io.ReaderAt, size int64) bool {
		got := make([]byte, 64<<10)
		n, _ := r.ReadAt(got, 0)
		return n == len(got) && bytes.Equal(got, data[:len(got)])
	}
}

func restore(dev volume.Device, c volume.Credentials, b []byte, o RestoreOptions) error {
	return HeaderRestore(context.Background(), dev, c, b, o)
}

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

	if err := restore(dev, volume.Credentials{Password: []byte("no"), PIM: 1}, bak, RestoreOptions{Open: volume.Options{Hash: "SHA-512"}}); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("restore with a wrong password: %v", err)
	}
	// No header to compare with and random data (no filesystem): the
	// backup cannot be proven to belong here.
	if err := restore(dev, c, bak, RestoreOptions{Open: volume.Options{Hash: "SHA-512"}, Recognise: recogniseFS}); !errors.Is(err, volume.ErrForeignBackup) {
		t.Fatalf("restore without proof: %v, want ErrForeignBackup", err)
	}
	head := make([]byte, headerGroupSize)
	dev.ReadAt(head, 0)
	if !bytes.Equal(head, junk) {
		t.Fatal("a refused restore wrote the header")
	}
	// The backup's key decrypting the data area to what is there proves it.
	if err := restore(dev, c, bak, RestoreOptions{Recognise: sameData(data)}); err != nil {
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
	// With the header back, restoring it again is proven by the key.
	if err := restore(dev, c, bak, RestoreOptions{}); err != nil {
		t.Fatalf("restoring the volume's own header over itself: %v", err)
	}

	other := newContainer(t, 1<<20)
	if _, err := Create(context.Background(), other, c, CreateOptions{Quick: true}); err != nil {
		t.Fatal(err)
	}
	otherBak, err := HeaderBackup(context.Background(), other, c, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(dev, c, otherBak, RestoreOptions{Recognise: recogniseFS}); !errors.Is(err, volume.ErrForeignBackup) {
		t.Fatalf("another volume's backup: %v", err)
	}
	small := newContainer(t, 512<<10)
	if err := restore(small, c, otherBak, RestoreOptions{Force: true}); !errors.Is(err, volume.ErrForeignBackup) {
		t.Fatalf("a backup too large for the container, with force: %v", err)
	}
}

// newFATVolume creates a VeraCrypt volume with a FAT filesystem holding
// one file.
func newFATVolume(t *testing.T, c volume.Credentials, o CreateOptions) *volume.FileDevice {
	t.Helper()
	dev := newContainer(t, 2<<20)
	o.Quick = true
	cr, err := Create(context.Background(), dev, c, o)
	if err != nil {
		t.Fatal(err)
	}
	v, err := volume.New(dev, cr.Unlocked, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fat.Format(v, v.Size(), fat.FormatOptions{Label: "DATA"}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	return dev
}

// TestHeaderRestoreRefusesForeignBackup is issue 15's defect: the backup
// of another volume of the same size, with the same password but another
// PIM and PRF, does not open this volume's current header, so before the
// fix nothing was compared and it was written over both header copies
// (and the volume never opened again). Now the backup's key must decrypt
// this volume's data area to its filesystem.
func TestHeaderRestoreRefusesForeignBackup(t *testing.T) {
	mine := volume.Credentials{Password: []byte("same password"), PIM: 1}
	theirs := volume.Credentials{Password: []byte("same password"), PIM: 2}
	dev := newFATVolume(t, mine, CreateOptions{Hash: "SHA-512"})
	other := newFATVolume(t, theirs, CreateOptions{Hash: "Whirlpool"})
	otherBak, err := HeaderBackup(context.Background(), other, theirs, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := make([]byte, dev.Size())
	dev.ReadAt(before, 0)

	err = restore(dev, theirs, otherBak, RestoreOptions{Recognise: recogniseFS})
	if !errors.Is(err, volume.ErrForeignBackup) {
		t.Fatalf("restoring another volume's header: %v, want ErrForeignBackup", err)
	}
	after := make([]byte, dev.Size())
	dev.ReadAt(after, 0)
	if !bytes.Equal(before, after) {
		t.Fatal("the refused restore changed the container")
	}
	if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, mine, volume.Options{ReadOnly: true}); err != nil {
		t.Fatalf("the volume no longer opens: %v", err)
	}

	// Its own backup, restored over destroyed headers with the same
	// credentials, is proven by the filesystem its key finds.
	bak, err := HeaderBackup(context.Background(), dev, mine, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, headerGroupSize)
	rand.Read(junk)
	dev.WriteAt(junk, 0)
	dev.WriteAt(junk, dev.Size()-headerGroupSize)
	if err := restore(dev, mine, bak, RestoreOptions{Recognise: recogniseFS}); err != nil {
		t.Fatalf("restoring the volume's own header: %v", err)
	}
	if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, mine, volume.Options{ReadOnly: true}); err != nil {
		t.Fatalf("after restoring its own header: %v", err)
	}
	// --force writes the foreign one all the same.
	if err := restore(dev, theirs, otherBak, RestoreOptions{Recognise: recogniseFS, Force: true}); err != nil {
		t.Fatalf("forced restore: %v", err)
	}
	if _, err := volume.OpenDeviceWith(context.Background(), dev, nil, theirs, volume.Options{ReadOnly: true}); err != nil {
		t.Fatalf("the forced header does not open: %v", err)
	}
}

// TestHeaderRewriteSeesOtherWriters: when another program rewrites a
// header while passwd or restore derive their keys, they write nothing and
// say so.
func TestHeaderRewriteSeesOtherWriters(t *testing.T) {
	c := volume.Credentials{Password: []byte("pw"), PIM: 1}
	dev := newFATVolume(t, c, CreateOptions{Hash: "SHA-512"})
	bak, err := HeaderBackup(context.Background(), dev, c, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The other program writes through its own handle, past the lock.
	raw, err := os.OpenFile(dev.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var theirs []byte
	testHookBeforeHeaderWrite = func() {
		theirs = make([]byte, headerSize)
		rand.Read(theirs)
		raw.WriteAt(theirs, dev.Size()+offBackupNormal)
	}
	defer func() { testHookBeforeHeaderWrite = func() {} }()
	unchanged := func(what string) {
		t.Helper()
		got := make([]byte, headerSize)
		dev.ReadAt(got, dev.Size()+offBackupNormal)
		if !bytes.Equal(got, theirs) {
			t.Errorf("%s overwrote the other program's header", what)
		}
	}
	nc := volume.Credentials{Password: []byte("new"), PIM: 1}
	if err := ChangeCredentials(context.Background(), dev, c, nc, ChangeOptions{}); !errors.Is(err, volume.ErrHeaderChanged) {
		t.Errorf("passwd: %v, want ErrHeaderChanged", err)
	}
	unchanged("passwd")
	if err := restore(dev, c, bak, RestoreOptions{}); !errors.Is(err, volume.ErrHeaderChanged) {
		t.Errorf("restore: %v, want ErrHeaderChanged", err)
	}
	unchanged("restore")
}
