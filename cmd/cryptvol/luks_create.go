package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// luksCreateFlags are cryptsetup luksFormat's options for
// `cryptvol create --type luks1|luks2`. addLUKSCreateFlags registers only
// the names the create command does not define itself, so the shared ones
// (--hash, --encryption, --label, --key-slot, --header, --quick) keep their
// single definition and are passed to options.
type luksCreateFlags struct {
	cipher          string
	keySize         int
	pbkdf           string
	iterTime        int
	pbkdfMemory     int
	pbkdfParallel   int
	forceIterations int
	sectorSize      int
	subsystem       string
	uuid            string
	offset          int64
	metadataSize    string
	keyslotsSize    string
	keyslotCipher   string
}

func addLUKSCreateFlags(fs *pflag.FlagSet) *luksCreateFlags {
	f := &luksCreateFlags{}
	def := func(name string, reg func()) {
		if fs.Lookup(name) == nil {
			reg()
		}
	}
	def("cipher", func() {
		fs.StringVarP(&f.cipher, "cipher", "c", "", "LUKS: cipher in cryptsetup's spelling (default aes-xts-plain64; without AES instructions xchacha12,aes-adiantum-plain64)")
	})
	def("key-size", func() {
		fs.IntVarP(&f.keySize, "key-size", "s", 0, "LUKS: volume key `BITS` (default 512 for XTS, else 256; Adiantum takes only 256)")
	})
	def("pbkdf", func() {
		fs.StringVar(&f.pbkdf, "pbkdf", "", "LUKS: pbkdf2, argon2i or argon2id (default argon2id; LUKS1 pbkdf2)")
	})
	def("iter-time", func() {
		fs.IntVarP(&f.iterTime, "iter-time", "i", 0, "LUKS: KDF benchmark target in `MS` (default 2000)")
	})
	def("pbkdf-memory", func() {
		fs.IntVar(&f.pbkdfMemory, "pbkdf-memory", 0, "LUKS: Argon2 memory limit in `KIB` (default 1048576)")
	})
	def("pbkdf-parallel", func() { fs.IntVar(&f.pbkdfParallel, "pbkdf-parallel", 0, "LUKS: Argon2 threads (default 4)") })
	def("pbkdf-force-iterations", func() {
		fs.IntVar(&f.forceIterations, "pbkdf-force-iterations", 0, "LUKS: skip the benchmark (PBKDF2 iterations or Argon2 time cost)")
	})
	def("sector-size", func() {
		fs.IntVar(&f.sectorSize, "sector-size", 0, "LUKS2: encryption sector size 512..4096 (default 4096 when the size allows)")
	})
	def("subsystem", func() { fs.StringVar(&f.subsystem, "subsystem", "", "LUKS2: header subsystem label") })
	def("uuid", func() { fs.StringVar(&f.uuid, "uuid", "", "LUKS: volume UUID (default random)") })
	def("offset", func() { fs.Int64Var(&f.offset, "offset", 0, "LUKS: data offset in 512-byte `SECTORS`") })
	def("luks2-metadata-size", func() {
		fs.StringVar(&f.metadataSize, "luks2-metadata-size", "", "LUKS2: header copy size, 16k to 4m (default 16k)")
	})
	def("luks2-keyslots-size", func() {
		fs.StringVar(&f.keyslotsSize, "luks2-keyslots-size", "", "LUKS2: keyslots area size (default: up to the data)")
	})
	def("keyslot-cipher", func() {
		fs.StringVar(&f.keyslotCipher, "keyslot-cipher", "", "LUKS2: cipher of the keyslot areas (default: the data cipher)")
	})
	return f
}

// luksCreateCommon are the create options shared with the VeraCrypt path.
type luksCreateCommon struct {
	Type       string // "luks1" or "luks2"
	Hash       string // --hash: PBKDF2 hash (and the LUKS1 header hash)
	Encryption string // --encryption AES / Serpent / Twofish: the XTS cipher when --cipher is not given
	Label      string // --label: the LUKS2 header label
	KeySlot    int    // --key-slot, -1 for the default (0)
	Header     volume.Device
	Quick      bool
	Progress   func(done, total int64)
}

// options turns the flags into luks.CreateOptions.
func (f *luksCreateFlags) options(c luksCreateCommon) (luks.CreateOptions, error) {
	o := luks.CreateOptions{
		Type:       c.Type,
		Cipher:     f.cipher,
		KeySize:    f.keySize,
		SectorSize: f.sectorSize,
		Label:      c.Label,
		Subsystem:  f.subsystem,
		UUID:       f.uuid,
		DataOffset: f.offset * 512,
		Header:     c.Header,
		Quick:      c.Quick,
		Progress:   c.Progress,
		KDF: luks.KDFOptions{
			PBKDF: f.pbkdf, Hash: c.Hash, IterTime: time.Duration(f.iterTime) * time.Millisecond,
			Iterations: f.forceIterations, MemoryKiB: f.pbkdfMemory, Parallel: f.pbkdfParallel,
		},
		KeyslotCipher: f.keyslotCipher,
	}
	if o.Cipher == "" && c.Encryption != "" {
		if strings.Contains(c.Encryption, "-") && !strings.EqualFold(c.Encryption, "triple-des") {
			return o, usageError(fmt.Errorf("--encryption %s: LUKS takes one cipher; use --cipher in cryptsetup's spelling (e.g. aes-xts-plain64)", c.Encryption))
		}
		o.Cipher = strings.ToLower(c.Encryption) + "-xts-plain64"
	}
	if c.KeySlot >= 0 {
		s := c.KeySlot
		o.KeySlot = &s
	}
	var err error
	if o.MetadataSize, err = parseOptionalSize(f.metadataSize); err != nil {
		return o, usageError(fmt.Errorf("--luks2-metadata-size: %w", err))
	}
	if o.KeyslotsSize, err = parseOptionalSize(f.keyslotsSize); err != nil {
		return o, usageError(fmt.Errorf("--luks2-keyslots-size: %w", err))
	}
	if f.offset < 0 || f.keySize < 0 || f.iterTime < 0 || f.pbkdfMemory < 0 || f.pbkdfParallel < 0 || f.forceIterations < 0 {
		return o, usageError(errors.New("LUKS options must not be negative"))
	}
	return o, nil
}

// parseOptionalSize accepts cryptsetup's size spellings ("16k", "4m",
// "16384"); "" is 0.
func parseOptionalSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return parseSize(strings.ToUpper(s))
}

// createLUKS formats dev and returns what the header says and the data
// area for formatting a filesystem into it (volume.New(dev, cr.Unlocked,
// ...)). The options luks.Create refuses are volume.ErrInvalidOption,
// usage errors (exit 1) by exitCodeFor; a failure to write the device
// keeps its own code (exit 4).
func createLUKS(ctx context.Context, dev volume.Device, o luks.CreateOptions, creds volume.Credentials) (*luks.Created, error) {
	return luks.Create(ctx, dev, o, creds)
}
