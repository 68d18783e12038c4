package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

func init() {
	register(&command{
		name:    "create",
		summary: "create a VeraCrypt, TrueCrypt or LUKS volume (or a hidden volume inside one)",
		usage: `Usage: cryptvol create VOLUME --size SIZE [options] [password options]

Creates a new encrypted container file. SIZE takes K, M, G or T suffixes
(powers of 1024); a plain number is bytes. The data area is filled with
random-looking ciphertext unless --quick (a sparse file). The file appears
under its name only once it is complete; an existing file is kept unless
--force.

--filesystem fat|exfat|ext4|ntfs|none chooses what goes inside (default
fat), as 'cryptvol format' makes it: FAT, exFAT and ext4 are built in (what
mkfs.fat, mkfs.exfat and mkfs.ext4 make for the size); NTFS is made by
mkntfs (ntfs-3g) when installed.

With --hidden (or --volume-type=hidden), VOLUME must be an existing
VeraCrypt/TrueCrypt volume holding a FAT, exFAT, NTFS or ext4 filesystem:
a hidden volume of SIZE is placed in the free space at the end of it, as
that filesystem's own allocation map shows it (FAT's table, exFAT's
allocation bitmap, NTFS's $Bitmap, ext4's block bitmaps), and refused,
saying how much fits, when it is larger. Any --filesystem may go inside
the hidden volume itself. NTFS keeps metadata in the middle of the volume
and ext4 copies of its superblock in some block groups, so less of them is
free at the end than FAT or exFAT. The outer volume's credentials are
given with --outer-password-file, --outer-keyfile and --outer-pim. Then
write to the outer volume only with the hidden volume protected (put,
mount and serve take the hidden volume's password for that): a write that
would land in the hidden volume is refused (EPERM in a mount), and every
write after it, until the outer volume is closed.

With --type luks2 (or luks1), cryptsetup luksFormat's options apply:
--cipher, --key-size, --pbkdf, --sector-size, --keyslot-cipher, ... . On a
CPU without AES instructions (Raspberry Pi 2, 3 and 4, older Atom, Celeron
and AMD chips; 'cryptvol version' tells) choose --cipher
xchacha12,aes-adiantum-plain64: Adiantum, the wide-block cipher Linux made
for such CPUs, is several times faster there than aes-xts-plain64 ('cryptvol
benchmark' shows both). It takes a 256-bit key (the default for it), works
best with 4096-byte sectors (the default when the size allows), and opens
with cryptsetup on Linux 5.0 and later; xchacha20,aes-adiantum-plain64 is
the same with the 20-round stream cipher.

TrueCrypt's and VeraCrypt's own spellings work too: --volume-type=normal,
--encryption=AES-Twofish, --hash=RIPEMD-160, -p PASSWORD, --keyfiles=a,b,
--filesystem=FAT, --text (ignored).

Examples:
  cryptvol create v.hc --size 10M --encryption AES --hash SHA-512 --password-file pw.txt
  cryptvol create v.hc --size 1G --filesystem ext4 --password-file pw.txt
  cryptvol create v.tc --size 10M --type truecrypt --encryption=Twofish --hash=RIPEMD-160 -p secret --non-interactive
  cryptvol create v.hc --hidden --size 2M --password-file hidden.txt --outer-password-file outer.txt
  cryptvol create pi.img --size 1G --type luks2 --cipher xchacha12,aes-adiantum-plain64 --password-file pw.txt
`,
		run: runCreate,
	})
}

type createFlags struct {
	size         string
	volumeType   string
	filesystem   string
	label        string
	randomSource string
	quick        bool
	force        bool
	keyfileList  []string
	text         bool

	outerPasswordFile string
	outerKeyfiles     []string
	outerPIM          int
}

func runCreate(ctx context.Context, a *app, args []string) error {
	c := commands["create"]
	fl := newFlags(c, a)
	cf := addCreateCredFlags(fl)
	var f createFlags
	fl.StringVar(&f.size, "size", "", "container size (K, M, G, T suffixes; plain number = bytes); for --hidden the hidden volume's size")
	fl.StringVar(&f.volumeType, "volume-type", "normal", "normal or hidden (TrueCrypt spelling of --hidden)")
	fl.StringVar(&f.filesystem, "filesystem", "fat", "filesystem to create inside: "+filesystemNames)
	fl.StringVar(&f.label, "label", "", "filesystem label")
	fl.StringVar(&f.randomSource, "random-source", "", "mix the contents of `FILE` into the key material")
	fl.BoolVar(&f.quick, "quick", false, "do not fill the data area (sparse file; faster, but shows which parts are used)")
	fl.BoolVar(&f.force, "force", false, "replace an existing file")
	fl.StringArrayVar(&f.keyfileList, "keyfiles", nil, "comma-separated keyfiles (VeraCrypt spelling)")
	fl.BoolVar(&f.text, "text", false, "accepted for VeraCrypt compatibility; ignored")
	fl.StringVar(&f.outerPasswordFile, "outer-password-file", "", "--hidden: password of the outer volume, from `FILE`")
	fl.StringArrayVar(&f.outerKeyfiles, "outer-keyfile", nil, "--hidden: keyfile of the outer volume (repeatable)")
	fl.IntVar(&f.outerPIM, "outer-pim", 0, "--hidden: PIM of the outer volume")
	lf := addLUKSCreateFlags(fl)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	path := fl.Arg(0)
	hidden := cf.hidden
	switch strings.ToLower(f.volumeType) {
	case "normal":
	case "hidden":
		hidden = true
	default:
		return usageError(fmt.Errorf("--volume-type %q: want normal or hidden", f.volumeType))
	}
	if f.size == "" && !cf.nonInteractive && stdinIsTerminal() {
		fmt.Fprint(a.stderr, "Volume size (K, M, G or T suffix, e.g. 10M): ")
		fmt.Fscanln(a.stdin, &f.size)
	}
	if f.size == "" {
		return usageError(errors.New("--size is required (e.g. --size 10M)"))
	}
	size, err := parseSize(f.size)
	if err != nil {
		return usageError(err)
	}
	fsSpec, err := parseFormatSpec(f.filesystem, f.label, "")
	if err != nil {
		return err
	}
	// A missing mkfs is said before the key derivation, and before a
	// hidden volume's header is written into its outer volume.
	if err := fsSpec.preflight(); err != nil {
		return err
	}
	typ := strings.ToLower(cf.typ)
	switch typ {
	case "auto", "", "veracrypt":
		typ = "veracrypt"
	case "truecrypt":
	case "luks", "luks2":
		typ = "luks2"
	case "luks1":
	default:
		return usageError(fmt.Errorf("--type %q: want veracrypt, truecrypt, luks1 or luks2", cf.typ))
	}
	keyfiles := append(append([]string(nil), cf.keyfiles...), splitKeyfiles(f.keyfileList)...)
	opts := tcrypt.CreateOptions{TrueCrypt: typ == "truecrypt", Encryption: cf.encryption, Hash: cf.hash, Quick: f.quick}
	warnVeraCryptCompat(a, typ, cf.hash, hidden)
	if f.randomSource != "" {
		rf, err := os.Open(f.randomSource)
		if err != nil {
			return fmt.Errorf("--random-source: %w", err)
		}
		defer rf.Close()
		opts.Random = io.LimitReader(rf, 1<<20)
	}
	pw, err := cf.newPassword(a, fl, "volume", len(keyfiles) > 0)
	if err != nil {
		return err
	}
	creds := volume.Credentials{Password: pw, Keyfiles: keyfiles, PIM: cf.pim, KeyfileOffset: cf.keyfileOffset, KeyfileSize: cf.keyfileSize}
	defer creds.Wipe()
	if strings.HasPrefix(typ, "luks") {
		if hidden {
			return usageError(errors.New("LUKS volumes have no hidden volumes"))
		}
		return createLUKSFile(ctx, a, cf, lf, &f, path, typ, size, creds, fsSpec)
	}
	if hidden {
		return createHidden(ctx, a, fl, cf, &f, path, size, creds, opts, fsSpec)
	}
	if _, err := os.Lstat(path); err == nil && !f.force {
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", path))
	}
	return createFile(a, path, size, func(dev *volume.FileDevice) error {
		bar := progress.New(a.stderr, "Creating", dev.Size(), a.showProgress())
		opts.Progress = func(done, total int64) { bar.Set(done) }
		cr, err := tcrypt.Create(ctx, dev, creds, opts)
		if err != nil {
			return createError(err)
		}
		speed := bar.Finish()
		if err := formatNew(ctx, a, dev, cr.Unlocked, fsSpec); err != nil {
			return err
		}
		if !f.quick {
			a.infof("Done: 100.000%%  Speed: %s/s  Left: 0 s", progress.FormatRate(speed))
		}
		in := cr.Unlocked.Info
		fmt.Fprintf(a.stdout, "Created %s volume %s: %s, %s, %s (header key derivation %.2f s)\n",
			map[bool]string{true: "TrueCrypt", false: "VeraCrypt"}[opts.TrueCrypt], path, humanSize(in.DataSize), in.Encryption, in.Hash, cr.KDFTime.Seconds())
		return nil
	})
}

// warnVeraCryptCompat says when a new volume is one current VeraCrypt
// (1.26 and later) cannot open. A hidden volume takes its outer volume's
// format, which is checked when it is placed.
func warnVeraCryptCompat(a *app, typ, hash string, hidden bool) {
	switch {
	case typ == "truecrypt" && !hidden:
		a.warnf("VeraCrypt 1.26 and later cannot open TrueCrypt-format volumes (only TrueCrypt, and VeraCrypt up to 1.25.9 with --truecrypt); 'cryptvol convert --to veracrypt' converts one later")
	case typ == "veracrypt":
		if why := tcrypt.NotOpenableByVeraCrypt(hash); why != "" {
			a.warnf("%s; the default, SHA-512, opens everywhere", why)
		}
	}
}

// createError gives the errors of create, convert, passwd and encrypt
// their exit codes. Options the libraries refuse are typed
// (volume.ErrInvalidOption, which exitCodeFor maps to a usage error),
// including an unknown hash or volume type when the volume is opened;
// what is left here are the refusals of sizes that tcrypt names.
func createError(err error) error {
	switch {
	case errors.Is(err, tcrypt.ErrTooSmall):
		return usageError(err)
	case errors.Is(err, tcrypt.ErrNoRoom):
		return withCode(exitDestroy, err)
	case errors.Is(err, context.Canceled), errors.Is(err, volume.ErrWrongPassword):
		return err
	}
	return err // a refused option (volume.ErrInvalidOption) is exit 1 by exitCodeFor
}

// createFile makes the container file path with build (see
// volume.CreateFile: nothing is left behind unless build succeeds). a, if
// not nil, hears about the leftovers of killed runs.
func createFile(a *app, path string, size int64, build func(dev *volume.FileDevice) error) error {
	var leftover func(atomicfile.Leftover)
	if a != nil {
		leftover = a.leftover
	}
	err := volume.CreateFile(path, size, leftover, build)
	if errors.Is(err, context.Canceled) {
		return interrupted("%s not created (its temporary file was removed)", path)
	}
	return err
}

// formatNew writes the filesystem into a freshly created volume.
func formatNew(ctx context.Context, a *app, dev volume.Device, u *volume.Unlocked, spec *formatSpec) error {
	if spec == nil || spec.fs == "none" {
		return nil
	}
	v, err := volume.New(dev, u, volume.Options{})
	if err != nil {
		return err
	}
	if err := formatVolume(ctx, a, v, spec); err != nil {
		v.Close()
		return err
	}
	return v.Close()
}

// createHidden places a hidden volume inside an existing outer volume.
func createHidden(ctx context.Context, a *app, fl interface{ Changed(string) bool }, cf *credFlags, f *createFlags, path string, size int64, creds volume.Credentials, opts tcrypt.CreateOptions, fsSpec *formatSpec) error {
	f.outerKeyfiles = nonEmpty(f.outerKeyfiles)
	if f.outerPasswordFile == "" && len(f.outerKeyfiles) == 0 && (cf.nonInteractive || !stdinIsTerminal()) {
		return usageError(errors.New("--hidden needs the outer volume's credentials: --outer-password-file FILE (or --outer-keyfile)"))
	}
	var outerPw []byte
	var err error
	if f.outerPasswordFile != "" {
		outerPw, err = readPasswordFile(a, f.outerPasswordFile)
	} else if len(f.outerKeyfiles) == 0 {
		outerPw, err = promptPassword(a, "Enter password of the outer volume: ")
	}
	if err != nil {
		return err
	}
	outer := volume.Credentials{Password: outerPw, Keyfiles: f.outerKeyfiles, PIM: f.outerPIM}
	defer outer.Wipe()
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	ov, err := volume.OpenDeviceWith(ctx, dev, nil, outer, volume.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("opening the outer volume: %w", err)
	}
	oi := ov.Info()
	usedEnd, err := outerFreeTail(ov, dev.Size(), size, f.force)
	ov.Close()
	if err != nil {
		return err
	}
	if oi.Format == "truecrypt" {
		opts.TrueCrypt = true
	}
	bar := progress.New(a.stderr, "Creating hidden volume", size, a.showProgress())
	opts.Progress = func(done, total int64) { bar.Set(done) }
	cr, err := tcrypt.CreateHidden(ctx, dev, creds, opts, size, usedEnd)
	if err != nil {
		return createError(err)
	}
	bar.Finish()
	if err := formatNew(ctx, a, dev, cr.Unlocked, fsSpec); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Created hidden volume in %s: %s, %s, %s. Open the outer volume with --protect-hidden until you stop writing to it.\n",
		path, humanSize(cr.Unlocked.Info.DataSize), cr.Unlocked.Info.Encryption, cr.Unlocked.Info.Hash)
	return nil
}

// outerFreeTail returns where the outer volume's filesystem stops using
// space for good (an offset in the container): the free run at its end,
// read from the filesystem's own allocation map (FAT's table, exFAT's
// bitmap, NTFS's $Bitmap, ext4's block bitmaps), must hold the whole
// hidden volume of hiddenSize bytes. With force, an outer filesystem
// cryptvol cannot read is passed over (the hidden volume then goes at the
// end, at the risk of the outer files there).
func outerFreeTail(ov *volume.Volume, devSize, hiddenSize int64, force bool) (int64, error) {
	oi := ov.Info()
	room, err := filesystem.FindTailRoom(ov, ov.Size())
	what := "no filesystem cryptvol recognises"
	if room.Type != "" {
		what = "a filesystem of type " + room.Type
	}
	if err != nil {
		if force {
			return oi.DataOffset, nil
		}
		why := what
		if !errors.Is(err, filesystem.ErrUnknown) {
			why += fmt.Sprintf(", whose free space cryptvol cannot find (%v)", err)
		}
		return 0, withCode(exitDestroy, fmt.Errorf("the outer volume holds %s: a hidden volume goes into FAT, exFAT, NTFS or ext4, behind their last used block (the hidden volume must not overlap it); use --force to place it at the end of the outer volume anyway, at the risk of overwriting outer files there", why))
	}
	hStart, hEnd := tcrypt.HiddenSpan(devSize, hiddenSize)
	if fits, largest := room.Fit(hStart-oi.DataOffset, hEnd-oi.DataOffset); !fits {
		hint := ""
		if strings.Contains(what, "ntfs") {
			hint = " (NTFS keeps $MFTMirr and $LogFile in the middle of the volume: a hidden volume fits in about half of it at most)"
		}
		return 0, withCode(exitDestroy, fmt.Errorf("%w: it needs %d bytes, and at most %d fit behind the last used block of the outer volume's %s%s",
			tcrypt.ErrNoRoom, hiddenSize, largest/512*512, strings.TrimPrefix(what, "a filesystem of type "), hint))
	}
	return oi.DataOffset + room.Start, nil
}

// createLUKSFile creates a LUKS1 or LUKS2 container (cryptsetup luksFormat
// options are accepted, see luks_create.go).
func createLUKSFile(ctx context.Context, a *app, cf *credFlags, lf *luksCreateFlags, f *createFlags, path, typ string, size int64, creds volume.Credentials, fsSpec *formatSpec) error {
	if _, err := os.Lstat(path); err == nil && !f.force {
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", path))
	}
	var hdr *volume.NewFile
	if cf.header != "" {
		if _, err := os.Lstat(cf.header); err == nil && !f.force {
			return withCode(exitDestroy, fmt.Errorf("header file %s exists (use --force to replace it)", cf.header))
		}
		// Written beside it and renamed into place with the container,
		// like the container itself.
		var err error
		if hdr, err = volume.CreateNewFile(cf.header, 0, a.leftover); err != nil {
			return err
		}
		defer hdr.Discard()
	}
	return createFile(a, path, size, func(dev *volume.FileDevice) error {
		bar := progress.New(a.stderr, "Creating", dev.Size(), a.showProgress())
		common := luksCreateCommon{Type: typ, Hash: cf.hash, Encryption: cf.encryption, Label: f.label, KeySlot: cf.keySlot, Quick: f.quick,
			Progress: func(done, total int64) { bar.Set(done) }}
		if hdr != nil {
			common.Header = hdr.FileDevice
		}
		o, err := lf.options(common)
		if err != nil {
			return err
		}
		cr, err := createLUKS(ctx, dev, o, creds)
		if err != nil {
			return err
		}
		speed := bar.Finish()
		if err := formatNew(ctx, a, dev, cr.Unlocked, fsSpec); err != nil {
			return err
		}
		if !f.quick {
			a.infof("Done: 100.000%%  Speed: %s/s  Left: 0 s", progress.FormatRate(speed))
		}
		if hdr != nil {
			if err := hdr.Commit(); err != nil {
				return err
			}
		}
		in := cr.Unlocked.Info
		fmt.Fprintf(a.stdout, "Created %s volume %s: %s, %s, %d-bit key, %s, UUID %s\n", strings.ToUpper(typ), path, humanSize(in.DataSize), in.Encryption, in.KeySize, in.Hash, in.UUID)
		return nil
	})
}
