package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/reencrypt"
)

func init() {
	register(&command{
		name:    "reencrypt",
		summary: "re-encrypt a volume's data in place with a new master key and/or cipher (resumable)",
		usage: `Usage: cryptvol reencrypt VOLUME [credentials] [--encryption CHAIN] [--new-key] [--hidden]
                         [--protect-hidden --hidden-password-file FILE]
       cryptvol reencrypt VOLUME [credentials] [--cipher C] [--key-size BITS]
                         [--sector-size N] [--resilience checksum|journal] [--header FILE]
       cryptvol reencrypt VOLUME --resume [credentials]
       cryptvol reencrypt --encrypt IMAGE [--type veracrypt|truecrypt] [--encryption CHAIN]
                         [--hash PRF] [--pim N] [new password] [--force]
       cryptvol reencrypt --encrypt IMAGE --type luks2 --header NEW-FILE [--cipher C]
                         [--key-size BITS] [--sector-size N] [--pbkdf KDF] [new password]

Rewrites the whole data area of a VeraCrypt, TrueCrypt or LUKS volume in
place under a new, random master key (always) and, if asked, a new cipher;
the password, keyfiles and PIM stay (change them with passwd or keyslot).
Use it when a master key may have leaked (an old header backup, a copied
header) or to move to a faster cipher. The volume must not be mounted.

It runs on all cores and records its progress in the volume's own header
after every chunk, protecting the chunk being rewritten with checksums (or,
for LUKS2 with --resilience journal, a copy), so a crash or a kill at any
moment loses nothing. Ctrl-C stops at the end of the current chunk (exit
130). Until it is complete the volume does not open: run the same command
again (or with --resume), with the same password, and it continues where it
stopped; the options of the run that began it apply.

VeraCrypt/TrueCrypt: --encryption names the new cipher chain (AES,
Serpent-AES, ...; default: keep it). Hidden volumes: --hidden re-encrypts
the hidden volume; re-encrypting the outer volume of a volume with a hidden
one destroys the hidden volume unless --protect-hidden gives its password
(then only the part before the hidden volume is rewritten). While it runs,
VeraCrypt and TrueCrypt cannot open the volume.

LUKS: --cipher (cryptsetup's spelling, aes-xts-plain64), --key-size and
--sector-size (LUKS2) set the new encryption; the metadata is cryptsetup's
own (LUKS2 online-reencrypt-v2), so 'cryptsetup reencrypt --resume-only'
can also complete an interrupted run, and this command completes one of
cryptsetup's. A LUKS1 volume is converted to LUKS2 for the run and back at
the end. Keyslots of passphrases other than the one given cannot carry the
new key and are removed (with a warning).

--encrypt turns a plain image (a disk image with a filesystem) into a
volume in place, with the same crash safety. VeraCrypt/TrueCrypt: the data
moves up by 128 KiB to make room for the header, and the image loses its
last 256 KiB, which must be free: a FAT filesystem whose last clusters are
free is shrunk to fit; others must end before them (--force when cryptvol
cannot tell). LUKS2: the header goes to a new file of its own (--header),
and the data is encrypted where it lies. The password asked for (or
--password-file) is the new volume's.

Examples:
  cryptvol reencrypt --encrypt disk.img --password-file pw.txt --encryption AES
  cryptvol reencrypt --encrypt disk.img --type luks2 --header disk.hdr --password-file pw.txt
  cryptvol reencrypt secret.hc --password-file pw.txt
  cryptvol reencrypt secret.hc --password-file pw.txt --encryption AES
  cryptvol reencrypt disk.luks --password-file pw.txt --cipher aes-xts-plain64 --key-size 512
  cryptvol reencrypt disk.luks --password-file pw.txt --resume
`,
		run: runReencrypt,
	})
}

// reencryptFlags are the new encryption a re-encryption asks for.
type reencryptFlags struct {
	encryption string
	cipher     string
	keySize    int
	sectorSize int
	resilience string
	resume     bool
}

func (rf *reencryptFlags) luksOnly(fl *pflag.FlagSet) string {
	for _, n := range []string{"cipher", "key-size", "sector-size", "resilience"} {
		if fl.Changed(n) {
			return "--" + n
		}
	}
	return ""
}

func runReencrypt(ctx context.Context, a *app, args []string) error {
	c := commands["reencrypt"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	var rf reencryptFlags
	fl.Lookup("encryption").Usage = "VeraCrypt/TrueCrypt: the new cipher `CHAIN` (default: keep the current one)"
	newKey := fl.Bool("new-key", true, "a new random master key (always; the default re-encryption)")
	fl.StringVar(&rf.cipher, "cipher", "", "LUKS: the new cipher, as cryptsetup spells it (aes-xts-plain64)")
	fl.IntVar(&rf.keySize, "key-size", 0, "LUKS: the new key size in `BITS` (default: keep it, or the cipher's)")
	fl.IntVar(&rf.sectorSize, "sector-size", 0, "LUKS2: the new encryption sector size (512 to 4096)")
	fl.StringVar(&rf.resilience, "resilience", "checksum", "LUKS2: hot-zone protection, checksum or journal")
	fl.BoolVar(&rf.resume, "resume", false, "only continue an interrupted re-encryption")
	encrypt := fl.Bool("encrypt", false, "turn a plain image into a volume in place (see above)")
	ef := addEncryptFlags(fl)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	if !*newKey {
		return usageError(errors.New("--new-key=false: a re-encryption always makes a new master key (keep the key and change the password with passwd or keyslot change)"))
	}
	path := fl.Arg(0)
	// --encryption describes the new chain here, not which one to try.
	rf.encryption, cf.encryption = cf.encryption, ""
	if rf.resilience != "checksum" && rf.resilience != "journal" {
		return usageError(fmt.Errorf("--resilience %q: want checksum or journal", rf.resilience))
	}
	if rf.keySize < 0 || rf.sectorSize < 0 {
		return usageError(errors.New("--key-size and --sector-size must be positive"))
	}
	if rf.resume && (rf.encryption != "" || rf.luksOnly(fl) != "") {
		return usageError(errors.New("--resume continues the re-encryption as it was begun: it takes no new cipher"))
	}
	if *encrypt {
		if rf.resume {
			return usageError(errors.New("--encrypt resumes an interrupted encryption by itself: no --resume"))
		}
		return encryptImage(ctx, a, fl, cf, &rf, ef, path)
	}
	if ef.pbkdf != "" || ef.iterations != 0 || ef.force {
		return usageError(errors.New("--pbkdf, --pbkdf-force-iterations and --force are for --encrypt"))
	}
	hdrPath := path
	if cf.header != "" {
		hdrPath = cf.header
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	var hdr volume.Device = dev
	if hdrPath != path {
		h, err := volume.OpenDevice(hdrPath, false)
		if err != nil {
			return err
		}
		defer h.Close()
		hdr = h
	}
	isLUKS := luks.Present(hdr)
	if isLUKS && rf.encryption != "" {
		return usageError(errors.New("--encryption is for VeraCrypt/TrueCrypt volumes; LUKS takes --cipher (aes-xts-plain64, ...)"))
	}
	if !isLUKS {
		if n := rf.luksOnly(fl); n != "" {
			return usageError(fmt.Errorf("%s is for LUKS volumes; VeraCrypt/TrueCrypt take --encryption", n))
		}
		if cf.header != "" {
			return usageError(errors.New("--header is for LUKS volumes"))
		}
	} else if cf.protectHidden || cf.hidden {
		return usageError(errors.New("--hidden and --protect-hidden are for VeraCrypt/TrueCrypt volumes"))
	}
	if cf.system {
		return withCode(exitDamaged, fmt.Errorf("%w: re-encrypting system encryption is left to VeraCrypt's own tools", volume.ErrUnsupported))
	}

	var resumed bool
	r, err := withTries(a, cf, func() (r volume.Reencryption, err error) {
		creds, o, err := cf.resolve(a, fl, false)
		if err != nil {
			return nil, err
		}
		defer creds.Wipe()
		r, resumed, err = reencrypt.StartOrResume(ctx, dev, hdr, creds, reencrypt.Options{
			Open: o, Encryption: rf.encryption, ProtectHidden: o.ProtectHidden,
			Cipher: rf.cipher, KeySize: rf.keySize, SectorSize: rf.sectorSize,
			Resilience: volume.Resilience(rf.resilience),
			Warn:       func(m string) { a.warnf("%s", m) },
		}, rf.resume)
		return r, err
	})
	if err != nil {
		return reencryptError(err, path)
	}
	defer r.Close()
	p := r.Plan()
	if resumed {
		fmt.Fprintf(a.stderr, "Resuming the interrupted re-encryption of %s (%s): %s of %s done.\n", path, p.Format, mib(p.Completed()), mib(p.Size))
	}
	bar := progress.New(a.stderr, "Re-encrypting", p.Size, stderrIsTerminal())
	err = reencrypt.Run(ctx, r, reencrypt.RunOptions{Progress: func(done, _ int64) { bar.Set(done) }})
	bar.Finish()
	var ie *reencrypt.Interrupted
	if errors.As(err, &ie) && errors.Is(err, context.Canceled) {
		return interrupted("%s of %s re-encrypted, the progress saved; run 'cryptvol reencrypt %s' again to continue (the volume does not open until then)", mib(ie.Done), mib(ie.Total), path)
	}
	if err != nil {
		return reencryptError(err, path)
	}
	format := p.Format
	if isLUKS {
		format = "LUKS" // LUKS1 volumes are LUKS2 while they are re-encrypted
	}
	fmt.Fprintf(a.stdout, "Re-encrypted %s of %s (%s) under a new master key; the old key no longer decrypts it.\n", mib(p.Size), path, format)
	return nil
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// reencryptError gives the library's errors their exit codes.
func reencryptError(err error, path string) error {
	var ce *cliError
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, reencrypt.ErrNotReencrypting):
		return usageError(fmt.Errorf("--resume: %s has no interrupted re-encryption to continue", path))
	case errors.Is(err, volume.ErrReencrypting), errors.Is(err, context.Canceled),
		errors.Is(err, volume.ErrWrongPassword), errors.Is(err, volume.ErrDamaged), errors.Is(err, volume.ErrUnsupported):
		return err
	}
	return err // a refused option (volume.ErrInvalidOption) is exit 1 by exitCodeFor
}
