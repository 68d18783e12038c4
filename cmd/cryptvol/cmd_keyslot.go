package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

func init() {
	register(&command{
		name:    "keyslot",
		summary: "list, add, remove or change the passphrases of a LUKS volume",
		usage: `Usage: cryptvol keyslot list VOLUME [--header FILE] [--json]
       cryptvol keyslot add VOLUME [credentials] [--new-password-file FILE | --new-keyfile FILE]
                [--key-slot N] [--pbkdf pbkdf2|argon2i|argon2id] [--iter-time MS] [--pbkdf-memory KIB]
                [--pbkdf-parallel N] [--pbkdf-force-iterations N] [--hash HASH]
       cryptvol keyslot remove VOLUME [credentials] [--key-slot N] [--force]
       cryptvol keyslot change VOLUME [credentials] [--new-password-file FILE | --new-keyfile FILE] [--key-slot N]

Manages the keyslots of a LUKS1 or LUKS2 volume, as cryptsetup's luksDump,
luksAddKey, luksRemoveKey, luksKillSlot and luksChangeKey do. The existing
passphrase comes from --password-file, -p, -k/--keyfile (its bytes are the
passphrase, with --keyfile-offset and --keyfile-size) or a prompt; the new
one from --new-password-file (first line), --new-keyfile (all of it, with
--new-keyfile-offset and --new-keyfile-size) or a prompt.

  list     show the keyslots (no passphrase needed)
  add      add a keyslot; --key-slot N chooses its number
  remove   with --key-slot N, remove that keyslot (the passphrase, if given,
           must open some keyslot); without, remove the keyslot the
           passphrase opens. Removing the last keyslot needs --force
           (exit 5 otherwise): the volume could never be opened again.
  change   replace the passphrase of the keyslot it opens (--key-slot N:
           only try that one)

Header changes are written so that a crash at any moment leaves a volume
that opens with the old or the new passphrase. With a detached header, give
it with --header FILE.

Examples:
  cryptvol keyslot list disk.luks
  cryptvol keyslot add disk.luks --password-file old.txt --new-password-file new.txt
  cryptvol keyslot remove disk.luks --key-slot 1 --password-file new.txt
  cryptvol keyslot change disk.luks -k old.key --new-keyfile new.key --pbkdf pbkdf2 --iter-time 1000
`,
		run: runKeyslot,
	})
}

// keyslotFlags are the new-keyslot options of luksAddKey/luksChangeKey.
type keyslotFlags struct {
	newPasswordFile  string
	newKeyfile       string
	newKeyfileOffset int64
	newKeyfileSize   int64
	pbkdf            string
	iterTime         int
	pbkdfMemory      int
	pbkdfParallel    int
	forceIterations  int
	keyslotCipher    string
	force            bool
	asJSON           bool
}

func runKeyslot(ctx context.Context, a *app, args []string) error {
	c := commands["keyslot"]
	fs := newFlags(c, a)
	cf := addCredFlags(fs)
	var kf keyslotFlags
	fs.StringVar(&kf.newPasswordFile, "new-password-file", "", "add/change: new passphrase from the first line of `FILE` (- = stdin)")
	fs.StringVar(&kf.newKeyfile, "new-keyfile", "", "add/change: the bytes of `FILE` are the new passphrase")
	fs.Int64Var(&kf.newKeyfileOffset, "new-keyfile-offset", 0, "skip `N` bytes of the new key file")
	fs.Int64Var(&kf.newKeyfileSize, "new-keyfile-size", 0, "read at most `N` bytes of the new key file")
	fs.StringVar(&kf.pbkdf, "pbkdf", "", "KDF of the new keyslot: pbkdf2, argon2i or argon2id (default argon2id; LUKS1: pbkdf2)")
	fs.IntVarP(&kf.iterTime, "iter-time", "i", 0, "KDF benchmark target in `MS` (default 2000)")
	fs.IntVar(&kf.pbkdfMemory, "pbkdf-memory", 0, "Argon2 memory limit in `KIB` (default 1048576)")
	fs.IntVar(&kf.pbkdfParallel, "pbkdf-parallel", 0, "Argon2 threads (default 4, at most the CPUs)")
	fs.IntVar(&kf.forceIterations, "pbkdf-force-iterations", 0, "skip the benchmark: PBKDF2 iterations or Argon2 time cost")
	fs.StringVar(&kf.keyslotCipher, "keyslot-cipher", "", "LUKS2: cipher of the new keyslot's area (default: the data cipher)")
	fs.BoolVar(&kf.force, "force", false, "remove: allow removing the last keyslot")
	fs.BoolVar(&kf.asJSON, "json", false, "list: print JSON")
	// cryptsetup spellings.
	fs.StringVar(&kf.newKeyfile, "new-key-file", "", "same as --new-keyfile")
	fs.Lookup("new-key-file").Hidden = true
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 2, 2); err != nil {
		return err
	}
	sub, path := fs.Arg(0), fs.Arg(1)
	switch sub {
	case "list", "dump":
		return keyslotList(a, cf, path, kf.asJSON)
	case "add", "remove", "kill", "change":
	default:
		return usageError(fmt.Errorf("unknown keyslot action %q%s (want list, add, remove or change)", sub, didYouMean(sub, subcommandsOf["keyslot"])))
	}
	hdrPath := path
	if cf.header != "" {
		hdrPath = cf.header
	}
	dev, err := volume.OpenDevice(hdrPath, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if !luks.Present(dev) && cf.typ != "luks2" {
		return fmt.Errorf("%w: %s has no LUKS header (keyslot commands are for LUKS volumes)", volume.ErrWrongPassword, hdrPath)
	}
	kopts, err := kf.keyslotOptions(a, cf)
	if err != nil {
		return err
	}
	switch sub {
	case "add":
		return keyslotAdd(ctx, a, fs, cf, &kf, dev, kopts)
	case "change":
		return keyslotChange(ctx, a, fs, cf, &kf, dev, kopts)
	default:
		return keyslotRemove(ctx, a, fs, cf, &kf, dev)
	}
}

func (kf *keyslotFlags) keyslotOptions(a *app, cf *credFlags) (luks.KeyslotOptions, error) {
	o := luks.KeyslotOptions{
		KDF: luks.KDFOptions{
			PBKDF:      kf.pbkdf,
			Hash:       cf.hash,
			IterTime:   time.Duration(kf.iterTime) * time.Millisecond,
			Iterations: kf.forceIterations,
			MemoryKiB:  kf.pbkdfMemory,
			Parallel:   kf.pbkdfParallel,
		},
		KeyslotCipher: kf.keyslotCipher,
		Warn:          func(m string) { a.warnf("%s", m) },
	}
	if kf.iterTime < 0 || kf.forceIterations < 0 || kf.pbkdfMemory < 0 || kf.pbkdfParallel < 0 {
		return o, usageError(errors.New("KDF options must not be negative"))
	}
	return o, nil
}

// existingCreds reads the passphrase that unlocks an existing keyslot.
func existingCreds(a *app, fs *pflag.FlagSet, cf *credFlags) (volume.Credentials, error) {
	c, _, err := cf.resolve(a, fs, false)
	return c, err
}

// newPassphrase reads the passphrase of the new keyslot.
func (kf *keyslotFlags) newPassphrase(a *app, cf *credFlags) ([]byte, error) {
	switch {
	case kf.newKeyfile != "" && kf.newPasswordFile != "":
		return nil, usageError(errors.New("give either --new-password-file or --new-keyfile, not both"))
	case kf.newKeyfile != "":
		return luks.ReadKeyfile(kf.newKeyfile, kf.newKeyfileOffset, kf.newKeyfileSize)
	case kf.newKeyfileOffset != 0 || kf.newKeyfileSize != 0:
		return nil, usageError(errors.New("--new-keyfile-offset and --new-keyfile-size need --new-keyfile"))
	case kf.newPasswordFile != "":
		if kf.newPasswordFile == "-" && cf.passwordFile == "-" {
			return nil, usageError(errors.New("the old and the new passphrase cannot both come from stdin"))
		}
		pw, err := readPasswordFile(a, kf.newPasswordFile)
		if err == nil && len(pw) == 0 {
			err = usageError(errors.New("the new passphrase is empty"))
		}
		return pw, err
	}
	if cf.nonInteractive || !stdinIsTerminal() {
		return nil, usageError(errors.New("no new passphrase given: use --new-password-file FILE, --new-keyfile FILE, or run on a terminal"))
	}
	pw, err := promptPassword(a, "Enter new passphrase for the keyslot: ")
	if err != nil {
		return nil, err
	}
	again, err := promptPassword(a, "Verify passphrase: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		return nil, usageError(errors.New("the passphrases do not match"))
	}
	if len(pw) == 0 {
		return nil, usageError(errors.New("the new passphrase is empty"))
	}
	return pw, nil
}

// keyslotError gives keyslot errors their exit codes: refusing to destroy
// a keyslot or overwrite a used one is exit 5.
func keyslotError(err error) error {
	if errors.Is(err, luks.ErrLastKeyslot) {
		return withCode(exitDestroy, fmt.Errorf("%w (use --force to remove it anyway)", err))
	}
	if errors.Is(err, luks.ErrKeyslotInUse) {
		return withCode(exitDestroy, err)
	}
	return err // a refused option (volume.ErrInvalidOption) is exit 1 by exitCodeFor
}

func keyslotAdd(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, kf *keyslotFlags, dev volume.Device, o luks.KeyslotOptions) error {
	// For luksAddKey, --key-slot is the number of the new keyslot.
	newSlot := cf.keySlot
	cf.keySlot = -1
	if newSlot >= 0 {
		o.Slot = &newSlot
	}
	return withNewPassphrase(a, fs, cf, kf, "created", func(creds volume.Credentials, pass []byte) (int, error) {
		return luks.AddKey(ctx, dev, creds, pass, o)
	})
}

// withNewPassphrase reads the credentials that open the volume and the new
// passphrase, runs change with them (wiping both after), and reports the
// keyslot it returns as "Key slot N <done>.".
func withNewPassphrase(a *app, fs *pflag.FlagSet, cf *credFlags, kf *keyslotFlags, done string, change func(volume.Credentials, []byte) (int, error)) error {
	creds, err := existingCreds(a, fs, cf)
	if err != nil {
		return err
	}
	defer creds.Wipe()
	pass, err := kf.newPassphrase(a, cf)
	if err != nil {
		return err
	}
	defer clear(pass)
	slot, err := change(creds, pass)
	if err != nil {
		return keyslotError(err)
	}
	fmt.Fprintf(a.stdout, "Key slot %d %s.\n", slot, done)
	return nil
}

func keyslotChange(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, kf *keyslotFlags, dev volume.Device, o luks.KeyslotOptions) error {
	return withNewPassphrase(a, fs, cf, kf, "changed", func(creds volume.Credentials, pass []byte) (int, error) {
		return luks.ChangeKey(ctx, dev, creds, pass, o)
	})
}

func keyslotRemove(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, kf *keyslotFlags, dev volume.Device) error {
	if cf.keySlot >= 0 {
		// luksKillSlot: the passphrase, when there is a way to get one,
		// must open some keyslot; in batch use none is needed.
		slot := cf.keySlot
		cf.keySlot = -1
		var verify *volume.Credentials
		given := cf.passwordFile != "" || fs.Changed("password") || len(cf.keyfiles) > 0
		if given || (!cf.nonInteractive && stdinIsTerminal()) {
			c, err := existingCreds(a, fs, cf)
			if err != nil {
				return err
			}
			defer c.Wipe()
			verify = &c
		}
		if err := luks.KillSlot(ctx, dev, slot, verify, kf.force, nil); err != nil {
			return keyslotError(err)
		}
		fmt.Fprintf(a.stdout, "Key slot %d removed.\n", slot)
		return nil
	}
	creds, err := existingCreds(a, fs, cf)
	if err != nil {
		return err
	}
	defer creds.Wipe()
	slot, err := luks.RemoveKey(ctx, dev, creds, kf.force, nil)
	if err != nil {
		return keyslotError(err)
	}
	fmt.Fprintf(a.stdout, "Key slot %d removed.\n", slot)
	return nil
}

func keyslotList(a *app, cf *credFlags, path string, asJSON bool) error {
	hdrPath := path
	if cf.header != "" {
		hdrPath = cf.header
	}
	dev, err := volume.OpenDevice(hdrPath, true)
	if err != nil {
		return err
	}
	defer dev.Close()
	h, err := luks.Inspect(dev)
	if err != nil {
		return err
	}
	if h.Warning != "" {
		a.warnf("%s", h.Warning)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(h)
	}
	h.WriteKeyslots(a.stdout)
	return nil
}
