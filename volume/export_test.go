package volume_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// TestExport writes the data area of a real VeraCrypt volume larger than
// one chunk and compares it with what was written into it; a cancelled
// context stops it before the first chunk.
func TestExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.hc")
	creds := volume.Credentials{Password: []byte("export"), PIM: 1}
	var data []byte
	err := volume.CreateFile(path, 10<<20, nil, func(dev *volume.FileDevice) error {
		cr, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: true})
		if err != nil {
			return err
		}
		v, err := volume.New(dev, cr.Unlocked, volume.Options{})
		if err != nil {
			return err
		}
		data = make([]byte, v.Size())
		rand.Read(data)
		if _, err := v.WriteAt(data, 0); err != nil {
			return err
		}
		return v.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := volume.OpenWith(context.Background(), path, creds, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()

	var out bytes.Buffer
	var seen []int64
	if err := v.Export(context.Background(), &out, func(done int64) { seen = append(seen, done) }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("exported %d bytes, not the %d written", out.Len(), len(data))
	}
	if len(seen) < 2 || seen[len(seen)-1] != v.Size() {
		t.Fatalf("progress %v, want several steps up to %d", seen, v.Size())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	err = v.Export(ctx, &out, nil)
	var ie *volume.ExportInterrupted
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || ie.Done != 0 || ie.Total != v.Size() || out.Len() != 0 {
		t.Fatalf("cancelled: %v (%+v), %d bytes written", err, ie, out.Len())
	}
}
