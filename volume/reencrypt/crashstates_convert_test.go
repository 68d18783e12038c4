package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// TestCrashStatesConvert explores the conversions: LUKS1 to LUKS2 and
// back, and TrueCrypt to VeraCrypt. A conversion keeps the master key and
// the data, so every crash state must open with the password under that
// key, as the old format or the new (the conversion done or not done);
// converting it again must succeed (or find it done) and leave the new
// format; and, for LUKS, converting that back must work too (a keyslot
// layout the conversion stopped in must not block the next one).
func TestCrashStatesConvert(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ from, to string }{{"luks1", "luks2"}, {"luks2", "luks1"}} {
		t.Run(c.from+"-to-"+c.to, func(t *testing.T) {
			vol, sum := newLUKS(t, 3<<20, luksCreds, luks.CreateOptions{Type: "luks1"})
			if c.from == "luks2" {
				dev := openDev(t, vol)
				err := luks.Convert(ctx, dev, "luks2", luks.ConvertOptions{})
				dev.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			_, key0, err := sumOf(t, vol, luksCreds, volume.Options{Type: c.from})
			if err != nil {
				t.Fatal(err)
			}
			convert := func(dev volume.Device, to string) error {
				err := luks.Convert(ctx, dev, to, luks.ConvertOptions{})
				if errors.Is(err, luks.ErrAlreadyType) {
					return nil
				}
				return err
			}
			base, ops := recordRun(t, testdata.CopyFile(t, vol), func(dev volume.Device) error { return convert(dev, c.to) })
			explore(t, c.from+" to "+c.to, base, ops, func(p string, _ crashsim.State) error {
				check := func(stage, typ string) error {
					got, key, err := sumOf(t, p, luksCreds, volume.Options{Type: typ})
					switch {
					case err != nil:
						return fmt.Errorf("%s: does not open as %s: %w", stage, typ, err)
					case got != sum || !bytes.Equal(key, key0):
						return fmt.Errorf("%s: opens with another key or other data", stage)
					}
					return nil
				}
				if err := check("the crash state", "luks"); err != nil {
					return err
				}
				for _, to := range []string{c.to, c.from} {
					dev, err := volume.OpenDevice(p, false)
					if err != nil {
						return err
					}
					err = convert(dev, to)
					dev.Close()
					if err != nil {
						return fmt.Errorf("converting the crash state to %s: %w", to, err)
					}
					if err := check("converted to "+to, to); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	t.Run("truecrypt-to-veracrypt", func(t *testing.T) {
		tc := volume.Credentials{Password: vcCreds.Password}
		vol, sum := newVeraCrypt(t, 1<<20, tc, tcrypt.CreateOptions{TrueCrypt: true, Encryption: "AES", Hash: "SHA-512"})
		tcOpen := volume.Options{Type: "truecrypt", Hash: "SHA-512"}
		vcOpen := volume.Options{Type: "veracrypt", Hash: "SHA-256"}
		_, key0, err := sumOf(t, vol, tc, tcOpen)
		if err != nil {
			t.Fatal(err)
		}
		convert := func(dev volume.Device) error {
			_, err := tcrypt.ConvertToVeraCrypt(ctx, dev, tc, tcrypt.ConvertOptions{Open: tcOpen, Hash: "SHA-256", PIM: 1})
			return err
		}
		// As a VeraCrypt volume: the PIM given at the conversion.
		vc := volume.Credentials{Password: tc.Password, PIM: 1}
		opens := func(p string) (string, error) {
			for _, k := range []struct {
				name string
				c    volume.Credentials
				o    volume.Options
			}{{"veracrypt", vc, vcOpen}, {"truecrypt", tc, tcOpen}} {
				got, key, err := sumOf(t, p, k.c, k.o)
				if err == nil {
					if got != sum || !bytes.Equal(key, key0) {
						return "", fmt.Errorf("opens as %s with another key or other data", k.name)
					}
					return k.name, nil
				}
			}
			return "", errors.New("opens as neither TrueCrypt nor VeraCrypt")
		}
		base, ops := recordRun(t, testdata.CopyFile(t, vol), convert)
		explore(t, "truecrypt to veracrypt", base, ops, func(p string, _ crashsim.State) error {
			if _, err := opens(p); err != nil {
				return err
			}
			dev, err := volume.OpenDevice(p, false)
			if err != nil {
				return err
			}
			err = convert(dev)
			dev.Close()
			if err != nil && !errors.Is(err, tcrypt.ErrNotTrueCrypt) {
				return fmt.Errorf("converting the crash state again: %w", err)
			}
			// Both header copies VeraCrypt: the primary spoilt, the
			// backup still opens as VeraCrypt.
			if got, err := opens(p); err != nil || got != "veracrypt" {
				return fmt.Errorf("converted again: %s %v", got, err)
			}
			return backupIsVeraCrypt(t, p, vc, vcOpen)
		})
	})
}

// backupIsVeraCrypt spoils a copy of p's primary header and opens the
// copy as VeraCrypt: the backup header must have been converted too.
func backupIsVeraCrypt(t *testing.T, p string, c volume.Credentials, o volume.Options) error {
	q := testdata.CopyFile(t, p)
	dev := openDev(t, q)
	_, err := dev.WriteAt(make([]byte, 512), 0)
	dev.Close()
	if err != nil {
		return err
	}
	if _, _, err := sumOf(t, q, c, o); err != nil {
		return fmt.Errorf("the backup header does not open as VeraCrypt: %w", err)
	}
	return nil
}
