package reencrypt

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	_ "github.com/cryptvol/cryptvol/volume/all"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// newFile makes an empty file of size bytes and returns its path.
func newFile(t testing.TB, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

func openDev(t testing.TB, path string) *volume.FileDevice {
	t.Helper()
	d, err := volume.OpenDevice(path, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fill writes random data over the whole data area and returns its sha256.
func fill(t testing.TB, dev volume.Device, u *volume.Unlocked) [32]byte {
	t.Helper()
	v, err := volume.New(dev, u, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, v.Size())
	rand.Read(data)
	if _, err := v.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// newVeraCrypt creates a VeraCrypt volume of size bytes filled with random
// data; it returns the path and the data's sha256.
func newVeraCrypt(t testing.TB, size int64, c volume.Credentials, o tcrypt.CreateOptions) (string, [32]byte) {
	t.Helper()
	p := newFile(t, size)
	dev := openDev(t, p)
	defer dev.Close()
	o.Quick = true
	cr, err := tcrypt.Create(context.Background(), dev, c, o)
	if err != nil {
		t.Fatal(err)
	}
	return p, fill(t, dev, cr.Unlocked)
}

// newLUKS creates a LUKS volume of size bytes filled with random data.
func newLUKS(t testing.TB, size int64, c volume.Credentials, o luks.CreateOptions) (string, [32]byte) {
	t.Helper()
	p := newFile(t, size)
	dev := openDev(t, p)
	defer dev.Close()
	o.Quick = true
	if o.KDF.PBKDF == "" {
		o.KDF = luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}
	}
	cr, err := luks.Create(context.Background(), dev, o, c)
	if err != nil {
		t.Fatal(err)
	}
	return p, fill(t, dev, cr.Unlocked)
}

// sumOf opens path and returns the sha256 of its data area and its
// master key.
func sumOf(t testing.TB, path string, c volume.Credentials, o volume.Options) ([32]byte, []byte, error) {
	t.Helper()
	o.ReadOnly = true
	v, err := volume.OpenWith(context.Background(), path, c, o)
	if err != nil {
		return [32]byte{}, nil, err
	}
	defer v.Close()
	b := make([]byte, v.Size())
	if _, err := v.ReadAt(b, 0); err != nil {
		return [32]byte{}, nil, err
	}
	return sha256.Sum256(b), v.MasterKey(), nil
}

// reencrypt runs a whole re-encryption of path.
func reencrypt(t testing.TB, path string, c volume.Credentials, o Options, chunk int64) {
	t.Helper()
	dev := openDev(t, path)
	defer dev.Close()
	r, err := Start(context.Background(), dev, nil, c, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Run(context.Background(), r, RunOptions{Chunk: chunk}); err != nil {
		t.Fatal(err)
	}
}

// crashDevice lets the first allowed writes through, lands the first half
// of the next one (a power cut inside it) and fails everything after, its
// syncs included.
type crashDevice struct {
	volume.Device
	allowed, done int
}

var errCrash = errors.New("simulated crash")

func (c *crashDevice) WriteAt(p []byte, off int64) (int, error) {
	c.done++
	switch {
	case c.done <= c.allowed:
		return c.Device.WriteAt(p, off)
	case c.done == c.allowed+1:
		h := len(p) / 2 &^ 511
		c.Device.WriteAt(p[:h], off)
		return h, errCrash
	}
	return 0, errCrash
}

func (c *crashDevice) Sync() error {
	if c.done > c.allowed {
		return errCrash
	}
	return c.Device.Sync()
}

func sum256(b []byte) [32]byte { return sha256.Sum256(b) }

var fastLUKSKDF = luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}
