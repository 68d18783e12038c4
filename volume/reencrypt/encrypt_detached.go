package reencrypt

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cryptvol/cryptvol/volume"
)

// EncryptingHeader is where StartEncryptDetached makes the header: the
// header records the encryption only once StartEncrypt has committed it,
// and until then it would describe the plain image as encrypted, so it
// gets the name the user gave only then.
func EncryptingHeader(name string) string { return name + ".cryptvol-encrypting" }

// StartEncryptDetached begins encrypting the image on dev with a new
// LUKS2 header in the file hdrPath (`cryptsetup reencrypt --encrypt
// --header`): the header is made under a temporary name
// (EncryptingHeader), renamed once it records the encryption (the image
// is untouched until then; a leftover temporary header can be removed),
// then reopened to resume, so no file is renamed while it is open
// (Windows). o is what the resume opens with; eo.Header is set here.
func StartEncryptDetached(ctx context.Context, dev volume.Device, hdrPath string, creds volume.Credentials, o volume.Options, eo EncryptOptions) (volume.Reencryption, error) {
	tmp := EncryptingHeader(hdrPath)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	h, err := volume.OpenDevice(tmp, false)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	eo.Header = h
	r, err := StartEncrypt(ctx, dev, creds, eo)
	if err == nil {
		err = r.Close()
	}
	h.Close()
	if err == nil {
		err = os.Rename(tmp, hdrPath)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	// The rename must be durable before the image is written.
	if d, err := os.Open(filepath.Dir(hdrPath)); err == nil {
		d.Sync() // not supported for directories everywhere (Windows): best effort
		d.Close()
	}
	h, err = volume.OpenDevice(hdrPath, false)
	if err != nil {
		return nil, err
	}
	r, err = Resume(ctx, dev, h, creds, o)
	if err != nil {
		h.Close()
		return nil, err
	}
	return closingHeader{r, h}, nil
}

// closingHeader closes the header file with the re-encryption.
type closingHeader struct {
	volume.Reencryption
	h *volume.FileDevice
}

func (c closingHeader) Close() error {
	err := c.Reencryption.Close()
	if e := c.h.Close(); err == nil {
		err = e
	}
	return err
}
