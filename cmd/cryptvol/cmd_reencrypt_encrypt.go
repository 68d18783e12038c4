package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/reencrypt"
)

// encryptFlags are the options of `reencrypt --encrypt` beyond
// reencryptFlags: the new volume's type and key derivation.
type encryptFlags struct {
	pbkdf      string
	iterations int
	force      bool
}

func addEncryptFlags(fl *pflag.FlagSet) *encryptFlags {
	ef := &encryptFlags{}
	fl.StringVar(&ef.pbkdf, "pbkdf", "", "--encrypt to LUKS2: pbkdf2, argon2i or argon2id (default argon2id)")
	fl.IntVar(&ef.iterations, "pbkdf-force-iterations", 0, "--encrypt to LUKS2: skip the KDF benchmark (PBKDF2 iterations or Argon2 time cost)")
	fl.BoolVar(&ef.force, "force", false, "--encrypt: the image holds no filesystem cryptvol can measure, and its end is free")
	return ef
}

// encryptImage turns the plain image at path into a volume in place
// (reencrypt --encrypt), or resumes such an encryption that was
// interrupted.
func encryptImage(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, rf *reencryptFlags, ef *encryptFlags, path string) error {
	typ := strings.ToLower(cf.typ)
	switch typ {
	case "auto", "":
		typ = "veracrypt"
	case "veracrypt", "truecrypt", "luks2":
	default:
		return usageError(fmt.Errorf("--encrypt --type %q: want veracrypt, truecrypt or luks2", cf.typ))
	}
	isLUKS := typ == "luks2"
	if isLUKS && cf.header == "" {
		return usageError(errors.New("--encrypt --type luks2 needs a new detached header file (--header FILE): the image is encrypted where it lies"))
	}
	if !isLUKS && (cf.header != "" || rf.luksOnly(fl) != "" || ef.pbkdf != "" || ef.iterations != 0) {
		return usageError(errors.New("--header, --cipher, --key-size, --sector-size, --resilience and --pbkdf are for --type luks2"))
	}
	if isLUKS && (rf.encryption != "" || cf.pim != 0) {
		return usageError(errors.New("--encryption and --pim are for VeraCrypt/TrueCrypt; LUKS2 takes --cipher"))
	}
	if cf.hidden || cf.protectHidden || cf.system {
		return usageError(errors.New("--encrypt makes an ordinary volume: no --hidden, --protect-hidden or --system"))
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	var hdr volume.Device = dev
	if isLUKS {
		// A header a killed start left under its temporary name: the
		// image was not touched (see reencrypt.StartEncryptDetached).
		os.Remove(reencrypt.EncryptingHeader(cf.header))
		if st, err := os.Stat(cf.header); err == nil && st.Size() > 0 {
			h, err := volume.OpenDevice(cf.header, false)
			if err != nil {
				return err
			}
			defer h.Close()
			if !luks.Present(h) {
				return withCode(exitDestroy, fmt.Errorf("--header %s exists and is not a LUKS header: give a new file", cf.header))
			}
			hdr = h
		}
	} else if luks.Present(dev) {
		return withCode(exitDestroy, fmt.Errorf("%s is a LUKS volume already: it is not a plain image", path))
	}
	pw, err := cf.newPassword(a, fl, "volume", len(cf.keyfiles) > 0)
	if err != nil {
		return err
	}
	creds := volume.Credentials{Password: pw, Keyfiles: cf.keyfiles, PIM: cf.pim}
	defer creds.Wipe()
	o := volume.Options{Type: typ}
	if typ == "luks2" {
		o.Type = "luks"
	} else {
		// Looking for an interrupted encryption tries only the PRF and
		// cipher this command would create the volume with (what the
		// run that began it had, when it is the same command): a plain
		// image is not worth a search through every PRF.
		o.Hash, o.Encryption = cf.hash, rf.encryption
		if o.Hash == "" {
			o.Hash = "SHA-512"
		}
	}
	// An encryption of this image that was interrupted is completed, never
	// begun again over its half-moved data.
	var r volume.Reencryption
	err = reencrypt.ErrNotReencrypting
	if !isLUKS || hdr != dev {
		r, err = reencrypt.Resume(ctx, dev, luksHeaderOrNil(hdr, dev), creds, o)
	}
	resumed := err == nil
	if errors.Is(err, reencrypt.ErrNotReencrypting) && (!isLUKS || hdr != dev) {
		// The password opens the volume's ordinary header: an earlier
		// run completed (it may have been killed just after).
		if v, oerr := volume.OpenDeviceWith(ctx, dev, luksHeaderOrNil(hdr, dev), creds, o); oerr == nil {
			v.Close()
			fmt.Fprintf(a.stdout, "%s is already encrypted (an earlier run completed): nothing to do.\n", path)
			return nil
		}
	}
	switch {
	case resumed:
	case hdr != dev:
		return withCode(exitDestroy, fmt.Errorf("--header %s is a LUKS header already, with no encryption in progress the password continues (%v): give a new file", cf.header, err))
	case errors.Is(err, reencrypt.ErrNotReencrypting), errors.Is(err, volume.ErrWrongPassword):
		eo := reencrypt.EncryptOptions{
			Type: typ, Encryption: rf.encryption, Hash: cf.hash,
			Cipher: rf.cipher, KeySize: rf.keySize, SectorSize: rf.sectorSize,
			KDF:        luks.KDFOptions{PBKDF: ef.pbkdf, Iterations: ef.iterations},
			Resilience: volume.Resilience(rf.resilience), Force: ef.force,
			Shrink: shrinkForHeaders,
			Warn:   func(m string) { a.warnf("%s", m) },
		}
		if isLUKS {
			r, err = reencrypt.StartEncryptDetached(ctx, dev, cf.header, creds, o, eo)
		} else {
			r, err = reencrypt.StartEncrypt(ctx, dev, creds, eo)
		}
	}
	if err != nil {
		if errors.Is(err, reencrypt.ErrNoRoom) {
			return withCode(exitDestroy, err)
		}
		return reencryptError(createError(err), path)
	}
	defer r.Close()
	p := r.Plan()
	if resumed {
		fmt.Fprintf(a.stderr, "Resuming the interrupted encryption of %s: %s of %s done.\n", path, mib(p.Completed()), mib(p.Size))
	}
	bar := progress.New(a.stderr, "Encrypting", p.Size, stderrIsTerminal())
	err = reencrypt.Run(ctx, r, reencrypt.RunOptions{Progress: func(done, _ int64) { bar.Set(done) }})
	bar.Finish()
	var ie *reencrypt.Interrupted
	if errors.As(err, &ie) && errors.Is(err, context.Canceled) {
		return interrupted("%s of %s encrypted, the progress saved; run the same command again to continue (the image does not open until then)", mib(ie.Done), mib(ie.Total))
	}
	if err != nil {
		return reencryptError(err, path)
	}
	where := ""
	if isLUKS {
		where = " (header in " + cf.header + ")"
	}
	fmt.Fprintf(a.stdout, "Encrypted %s of %s in place as a %s volume%s.\n", mib(p.Size), path, map[string]string{"veracrypt": "VeraCrypt", "truecrypt": "TrueCrypt", "luks2": "LUKS2"}[typ], where)
	return nil
}

// luksHeaderOrNil is the detached header for Resume, nil when there is none.
func luksHeaderOrNil(hdr, dev volume.Device) volume.Device {
	if hdr == dev {
		return nil
	}
	return hdr
}

// shrinkForHeaders is reencrypt's EncryptOptions.Shrink: of the
// filesystems cryptvol writes, FAT is the one it can shrink (giving up
// free clusters at the end); any other is left to the user.
func shrinkForHeaders(dev volume.Device, fsType string, keep int64) (int64, error) {
	got, err := filesystem.Shrink(fsType, dev, dev.Size(), keep)
	switch {
	case errors.Is(err, filesystem.ErrUnsupported):
		return 0, fmt.Errorf("%w: %w", err, errors.ErrUnsupported)
	case errors.Is(err, filesystem.ErrCannotShrink):
		return 0, reencrypt.CannotShrink(err)
	}
	return got, err
}
