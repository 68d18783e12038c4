package crossarch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// volCase is one volume the test creates on one architecture and opens on
// the other. Together the cases cover the header formats (VeraCrypt,
// TrueCrypt, hidden volumes, keyfiles, LUKS1, LUKS2 with both sector
// sizes), every cipher family and the PRFs whose implementations differ
// most between the assembly and generic paths.
type volCase struct {
	Name string
	Kind string // veracrypt, truecrypt, luks1, luks2
	Size int64  // container bytes

	// TrueCrypt/VeraCrypt.
	Encryption, Hash string
	PIM              int
	Keyfile          bool // also a keyfile, made deterministically
	// HiddenEncryption, when set, adds a hidden volume with this cipher
	// (and HiddenHash) inside the outer one.
	HiddenEncryption, HiddenHash string

	// LUKS.
	Cipher     string
	KeySize    int
	SectorSize int
	KDF        luks.KDFOptions
	DataOffset int64
}

const hiddenSize = 256 << 10

var cases = []volCase{
	{Name: "vc-aes-sha512", Kind: "veracrypt", Size: 1<<20 + 256<<10, Encryption: "AES", Hash: "SHA-512", PIM: 1},
	{Name: "vc-serpent-twofish-aes-whirlpool", Kind: "veracrypt", Size: 768 << 10, Encryption: "Serpent-Twofish-AES", Hash: "Whirlpool", PIM: 1},
	{Name: "vc-kuznyechik-serpent-camellia-streebog", Kind: "veracrypt", Size: 768 << 10, Encryption: "Kuznyechik-Serpent-Camellia", Hash: "Streebog", PIM: 1},
	{Name: "vc-twofish-blake2s-keyfile", Kind: "veracrypt", Size: 768 << 10, Encryption: "Twofish", Hash: "BLAKE2s-256", PIM: 1, Keyfile: true},
	{Name: "vc-hidden", Kind: "veracrypt", Size: 2 << 20, Encryption: "AES-Twofish", Hash: "SHA-256", PIM: 1,
		HiddenEncryption: "Camellia-Serpent", HiddenHash: "SHA-512"},
	{Name: "tc-serpent-ripemd160", Kind: "truecrypt", Size: 768 << 10, Encryption: "Serpent", Hash: "RIPEMD-160"},
	{Name: "luks2-aes-xts-argon2id", Kind: "luks2", Size: 3 << 20, Cipher: "aes-xts-plain64", KeySize: 512, SectorSize: 4096,
		KDF: luks.KDFOptions{PBKDF: "argon2id", Iterations: 4, MemoryKiB: 8192, Parallel: 2}, DataOffset: 1 << 20},
	{Name: "luks2-twofish-xts-pbkdf2-sha512", Kind: "luks2", Size: 2<<20 + 512<<10, Cipher: "twofish-xts-plain64", KeySize: 256, SectorSize: 512,
		KDF: luks.KDFOptions{PBKDF: "pbkdf2", Hash: "sha512", Iterations: 1000}, DataOffset: 1 << 20},
	{Name: "luks1-serpent-cbc-essiv", Kind: "luks1", Size: 3 << 20, Cipher: "serpent-cbc-essiv:sha256", KeySize: 256,
		KDF: luks.KDFOptions{PBKDF: "pbkdf2", Hash: "sha256", Iterations: 1000}},
}

func (c volCase) path(dir string) string    { return filepath.Join(dir, c.Name+".img") }
func (c volCase) keyfile(dir string) string { return filepath.Join(dir, c.Name+".key") }

// seededRand is a deterministic random stream for a name: ChaCha8 is
// specified byte for byte, so every architecture draws the same bytes.
func seededRand(name string) *rand.ChaCha8 {
	return rand.NewChaCha8(sha256.Sum256([]byte("cryptvol crossarch " + name)))
}

func (c volCase) creds(dir string, hidden bool) volume.Credentials {
	pw := "pw " + c.Name
	if hidden {
		pw = "hidden " + c.Name
	}
	cr := volume.Credentials{Password: []byte(pw), PIM: c.PIM}
	if c.Keyfile {
		cr.Keyfiles = []string{c.keyfile(dir)}
	}
	return cr
}

// newContainer makes an empty container file for c and opens it.
func (c volCase) newContainer(dir string) (*volume.FileDevice, error) {
	p := c.path(dir)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return nil, err
	}
	if err := os.Truncate(p, c.Size); err != nil {
		return nil, err
	}
	return volume.OpenDevice(p, false)
}

// create makes the container of c in dir and fills its data area (and
// its hidden volume's) with the reference image.
func (c volCase) create(dir string) error {
	if c.Keyfile {
		kf := make([]byte, 1000)
		seededRand(c.Name + " keyfile").Read(kf)
		if err := os.WriteFile(c.keyfile(dir), kf, 0o600); err != nil {
			return err
		}
	}
	dev, err := c.newContainer(dir)
	if err != nil {
		return err
	}
	defer dev.Close()
	ctx := context.Background()
	var u *volume.Unlocked
	switch c.Kind {
	case "veracrypt", "truecrypt":
		cr, err := tcrypt.Create(ctx, dev, c.creds(dir, false), tcrypt.CreateOptions{
			TrueCrypt: c.Kind == "truecrypt", Encryption: c.Encryption, Hash: c.Hash, Quick: true})
		if err != nil {
			return err
		}
		u = cr.Unlocked
	case "luks1", "luks2":
		cr, err := luks.Create(ctx, dev, luks.CreateOptions{
			Type: c.Kind, Cipher: c.Cipher, KeySize: c.KeySize, SectorSize: c.SectorSize, KDF: c.KDF,
			DataOffset: c.DataOffset, UUID: "0c4b7e2d-5a1f-4c3e-9d8b-6f2a1e0b3c4d", Quick: true,
			Rand: seededRand(c.Name + " luks"),
		}, c.creds(dir, false))
		if err != nil {
			return err
		}
		u = cr.Unlocked
	default:
		return fmt.Errorf("unknown kind %q", c.Kind)
	}
	v, err := volume.New(dev, u, volume.Options{})
	if err != nil {
		return err
	}
	err = writeReference(v, c.Name)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil || c.HiddenEncryption == "" {
		return err
	}

	// The hidden volume goes after the outer filesystem's last used
	// cluster, as VeraCrypt places it.
	usedEnd, err := referenceUsedEnd(c.Name, u.DataSize)
	if err != nil {
		return err
	}
	hc, err := tcrypt.CreateHidden(ctx, dev, c.creds(dir, true), tcrypt.CreateOptions{
		Encryption: c.HiddenEncryption, Hash: c.HiddenHash, Quick: true}, hiddenSize, u.DataOffset+usedEnd)
	if err != nil {
		return fmt.Errorf("hidden volume: %w", err)
	}
	hv, err := volume.New(dev, hc.Unlocked, volume.Options{})
	if err != nil {
		return err
	}
	err = writeReference(hv, c.Name+" hidden")
	if cerr := hv.Close(); err == nil {
		err = cerr
	}
	return err
}

// verify opens the container of c in dir read-only and checks its
// contents against the reference image, byte for byte, and through the
// FAT filesystem.
func (c volCase) verify(dir string) error {
	o := volume.Options{Type: c.Kind, ReadOnly: true, Hash: c.Hash, Encryption: c.Encryption}
	if c.Kind == "luks1" || c.Kind == "luks2" {
		o.Hash, o.Encryption = "", ""
	}
	v, err := volume.OpenWith(context.Background(), c.path(dir), c.creds(dir, false), o)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer v.Close()
	if in := v.Info(); in.Format != c.Kind {
		return fmt.Errorf("opened as %q, want %q", in.Format, c.Kind)
	}
	if c.Encryption != "" && v.Info().Encryption != c.Encryption {
		return fmt.Errorf("encryption %q, want %q", v.Info().Encryption, c.Encryption)
	}
	limit := v.Size()
	if c.HiddenEncryption != "" {
		// Past the outer filesystem's used clusters lies the hidden
		// volume, random to the outer keys.
		if limit, err = referenceUsedEnd(c.Name, v.Size()); err != nil {
			return err
		}
	}
	if err := checkReference(v, c.Name, limit); err != nil {
		return err
	}
	if c.HiddenEncryption == "" {
		return nil
	}
	o.Hidden, o.Hash, o.Encryption = true, c.HiddenHash, c.HiddenEncryption
	hv, err := volume.OpenWith(context.Background(), c.path(dir), c.creds(dir, true), o)
	if err != nil {
		return fmt.Errorf("open hidden: %w", err)
	}
	defer hv.Close()
	if !hv.Info().Hidden || hv.Size() != hiddenSize {
		return fmt.Errorf("hidden volume opened as %+v", hv.Info())
	}
	if err := checkReference(hv, c.Name+" hidden", hv.Size()); err != nil {
		return fmt.Errorf("hidden volume: %w", err)
	}
	return nil
}
