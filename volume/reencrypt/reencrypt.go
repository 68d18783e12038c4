package reencrypt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// Options describe a re-encryption to start.
type Options struct {
	// Open selects the volume: Type, Hidden (TrueCrypt/VeraCrypt hidden
	// volume) and the hints that speed up unlocking.
	Open volume.Options
	// Encryption is the new TrueCrypt/VeraCrypt cipher chain ("AES",
	// "Serpent-AES", ...); "" keeps the current one.
	Encryption string
	// Cipher (cryptsetup's spelling, "aes-xts-plain64"), KeySize (bits)
	// and SectorSize are the new LUKS data encryption; zero values keep
	// the current ones.
	Cipher     string
	KeySize    int
	SectorSize int
	// Resilience is LUKS2's hot-zone protection: checksum (the default)
	// or journal. TrueCrypt/VeraCrypt volumes always use checksums.
	Resilience volume.Resilience
	// ProtectHidden, for a TrueCrypt/VeraCrypt outer volume, are its
	// hidden volume's credentials: that part of the data is left alone.
	ProtectHidden *volume.Credentials
	// Random is extra entropy for the new key (TrueCrypt/VeraCrypt), or
	// the randomness source (LUKS); nil means the system's.
	Random io.Reader
	// Warn hears what the re-encryption drops or cannot carry over (LUKS
	// keyslots of other passphrases).
	Warn func(string)
}

// ErrNotReencrypting is returned by Resume for a volume with no
// re-encryption in progress.
var ErrNotReencrypting = errors.New("no re-encryption of this volume is in progress")

// Start begins re-encrypting the volume whose data area is on dev and
// whose header is on hdr (dev itself unless a LUKS header is detached)
// with a new key: it records the re-encryption in the volume's metadata
// and returns it for Run. The caller holds both devices exclusively (they
// come from volume.OpenDevice) until Run returns.
func Start(ctx context.Context, dev, hdr volume.Device, creds volume.Credentials, o Options) (volume.Reencryption, error) {
	if hdr == nil {
		hdr = dev
	}
	toLUKS, err := isLUKS(hdr, o.Open.Type)
	if err != nil {
		return nil, err
	}
	if toLUKS {
		return luks.StartReencrypt(ctx, dev, hdr, creds, luks.ReencryptOptions{
			Cipher: o.Cipher, KeySize: o.KeySize, SectorSize: o.SectorSize,
			Resilience: o.Resilience, Rand: o.Random, Warn: o.Warn,
		})
	}
	if hdr != dev {
		return nil, volume.InvalidOption(errors.New("a detached header is a LUKS feature"))
	}
	if o.Cipher != "" || o.KeySize != 0 || o.SectorSize != 0 {
		return nil, volume.InvalidOption(errors.New("--cipher, --key-size and --sector-size are for LUKS volumes (TrueCrypt/VeraCrypt: --encryption)"))
	}
	r, err := tcrypt.StartReencrypt(ctx, dev, creds, tcrypt.ReencryptOptions{
		Open: o.Open, Encryption: o.Encryption, ProtectHidden: o.ProtectHidden, Random: o.Random,
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Resume finds the re-encryption in progress on the volume (dev, hdr as
// for Start) and returns it for Run. It fails with an error wrapping
// ErrNotReencrypting when there is none.
func Resume(ctx context.Context, dev, hdr volume.Device, creds volume.Credentials, o volume.Options) (volume.Reencryption, error) {
	if hdr == nil {
		hdr = dev
	}
	toLUKS, err := isLUKS(hdr, o.Type)
	if err != nil {
		return nil, err
	}
	if toLUKS {
		r, err := luks.ResumeReencrypt(ctx, dev, hdr, creds)
		if errors.Is(err, luks.ErrNotReencrypting) {
			return nil, fmt.Errorf("%w", ErrNotReencrypting)
		}
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r, err := tcrypt.ResumeReencrypt(ctx, dev, creds, o)
	if errors.Is(err, tcrypt.ErrNotReencrypting) {
		return nil, ErrNotReencrypting
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// isLUKS tells which driver re-encrypts the volume: the one --type names,
// or, for auto, LUKS when hdr holds a LUKS header. A type no driver here
// re-encrypts is a refused option.
func isLUKS(hdr volume.Device, typ string) (bool, error) {
	switch strings.ToLower(typ) {
	case "luks", "luks1", "luks2":
		return true, nil
	case "veracrypt", "truecrypt", "tcrypt":
		return false, nil
	case "", "auto":
		return luks.Present(hdr), nil
	}
	return false, volume.InvalidOptionf("--type %q: re-encryption is for veracrypt, truecrypt, luks, luks1 and luks2 volumes (or auto)", typ)
}

// StartOrResume begins the re-encryption o describes or, when the volume
// turns out to be mid-way through one, picks that one up instead, as
// cryptsetup reencrypt does; with onlyResume it only resumes (an error
// wrapping ErrNotReencrypting when there is nothing to resume). resumed
// says which it did. A resumed re-encryption goes on as it was begun:
// o.Warn hears so when o asked for a new cipher, key or sector size.
func StartOrResume(ctx context.Context, dev, hdr volume.Device, creds volume.Credentials, o Options, onlyResume bool) (r volume.Reencryption, resumed bool, err error) {
	resume := func() (volume.Reencryption, bool, error) {
		r, err := Resume(ctx, dev, hdr, creds, o.Open)
		return r, err == nil, err
	}
	if onlyResume {
		return resume()
	}
	r, err = Start(ctx, dev, hdr, creds, o)
	if errors.Is(err, volume.ErrReencrypting) {
		if (o.Encryption != "" || o.Cipher != "" || o.KeySize != 0 || o.SectorSize != 0) && o.Warn != nil {
			o.Warn("a re-encryption of this volume was interrupted: it is completed as it was begun, without the new options given now")
		}
		return resume()
	}
	return r, false, err
}
