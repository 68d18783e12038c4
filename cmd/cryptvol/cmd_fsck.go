package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/external"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

func init() {
	register(&command{
		name:    "fsck",
		summary: "check (and with --repair, fix) the filesystem inside a volume",
		usage: `Usage: cryptvol fsck VOLUME [--repair] [--json] [--external] [credentials]

Checks the filesystem inside VOLUME, changing nothing. FAT and exFAT are
checked by cryptvol itself; ext2/3/4 by e2fsck -fn (e2fsprogs) and NTFS by
ntfsfix -n (ntfs-3g), run on a decrypted copy of the data area in a
temporary file (removed whatever happens). --repair runs e2fsck -fy or
ntfsfix on such a copy and writes back, through the volume and under its
lock, only the blocks the tool changed; then checks again. --external
checks FAT and exFAT with fsck.fat / fsck.exfat (dosfstools, exfatprogs)
the same way. A checker that is not installed is exit 6, naming its
package.

exFAT: lost and unmarked clusters, cross-links, bad entry sets, wrong
checksums, chains longer than their files, orphaned entries, a dirty
flag, boot regions that differ; --repair mends all but cross-links and
entries it cannot understand.

FAT: lost clusters, cross-linked files, bad directory entries, broken or
over-long cluster chains, wrong sizes, operations a crash interrupted, FAT
copies that differ. --repair fixes all of that the way fsck.fat -a does, except that nothing
is dropped that can be kept: cross-linked files each get their own copy of
the shared clusters (only without room for it is the second one cut, as
fsck.fat does); a rename a crash interrupted is completed; a file with a
broken chain is cut where it breaks, a size larger than the chain cut to
the chain, a size with no cluster set to 0; names with forbidden characters
and duplicate names are renamed (b/d.txt becomes b_d.txt, a second one.txt
becomes "one (2).txt"); lost clusters are freed (not saved as files: this
program never leaves a file's only copy in lost clusters); the FAT copies
are rewritten from the first. A volume with cross-linked files refuses
every other change until --repair has run.

Exit status: 0 nothing found; 1 problems found and all of them repaired
(with --repair); 3 problems found and not (all) repaired, which without
--repair is anything at all, lost clusters included (as fsck.fat -n);
6 the checker the filesystem needs is not installed (nothing was checked).

Example:
  cryptvol fsck secret.hc --password-file pw.txt
  cryptvol fsck secret.hc --repair --password-file pw.txt
  cryptvol fsck luks-ext4.img --json --password-file pw.txt
`,
		run: runFsck,
	})
	register(&command{
		name:    "format",
		summary: "create a new filesystem (FAT, exFAT, ext4, NTFS) inside an existing volume",
		usage: `Usage: cryptvol format VOLUME --filesystem fat|exfat|ext4|ntfs|none [--label NAME] [--serial XXXX-XXXX] [--force] [credentials]

Writes an empty filesystem over the volume's data area. A volume that
already holds a recognised filesystem is only formatted with --force.

  fat    FAT12, FAT16 or FAT32 and the cluster size chosen as mkfs.fat
         does (fat12, fat16, fat32 force the type); built in
  exfat  laid out as mkfs.exfat (exfatprogs) lays out the same size;
         built in
  ext4   what mkfs.ext4 (e2fsprogs 1.47) makes for the size, with its
         journal; built in
  ntfs   made by mkntfs (ntfs-3g) on a
         temporary image of the data area's size that is then written
         into the volume (no mount, no root; the image is removed
         whatever happens). Without the program: exit 6, naming the
         package to install.
  none   erases the filesystem's signatures (the first and the last MiB
         of the data area), so that no filesystem is recognised

--serial is for FAT and exFAT; --label takes up to 11 characters on FAT
and exFAT, 16 on ext4, 128 on NTFS.

Examples:
  cryptvol format secret.hc --filesystem fat --label PRIVATE --password-file pw.txt
  cryptvol format secret.hc --filesystem ext4 --force --password-file pw.txt
`,
		run: runFormat,
	})
}

func runFsck(ctx context.Context, a *app, args []string) error {
	c := commands["fsck"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	var o fsckOptions
	fl.BoolVar(&o.repair, "repair", false, "repair what is found (cross-links, bad entries, broken chains, lost clusters, ...)")
	fl.BoolVar(&o.json, "json", false, "print the report as JSON (the exit status is the same)")
	fl.BoolVar(&o.external, "external", false, "FAT and exFAT: run fsck.fat / fsck.exfat instead of the built-in check")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	o.volPath = fl.Arg(0)
	v, err := openVolume(ctx, a, fl, cf, o.volPath, !o.repair)
	if err != nil {
		return err
	}
	defer v.Close()
	typ := "vfat" // and where nothing is recognised: fsckBuiltIn explains
	if r, err := fsprobe.Probe(v); err == nil {
		typ = r.Type
	}
	check := fsckers[typ]
	if o.external && externalCheckers[typ] != nil {
		check = checkExternal(externalCheckers[typ])
	}
	if check == nil {
		return withCode(exitNoTool, fmt.Errorf("no checker for %s", typ))
	}
	return check(ctx, a, v, &o)
}

// fsckOptions are fsck's flags.
type fsckOptions struct {
	repair, json, external bool
	volPath                string
}

// fsckFunc checks (with o.repair, repairs) the filesystem in v and
// returns fsck's exit status as an error.
type fsckFunc func(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error

// fsckers are the checkers by filesystem type (as fsprobe names it):
// FAT and exFAT built in, the others the filesystem's own tools on a
// decrypted copy. A built-in checker replaces an external one here.
var fsckers = map[string]fsckFunc{
	"vfat":  fsckBuiltIn,
	"exfat": fsckBuiltIn,
	"ext2":  checkExternal(external.E2fsck),
	"ext3":  checkExternal(external.E2fsck),
	"ext4":  checkExternal(external.E2fsck),
	"ntfs":  checkExternal(external.Ntfsfix),
}

// fsckBuiltIn is fsck of FAT and exFAT with their own checkers
// (filesystem.CheckAndRepair), with the command line's warnings, report
// and exit codes.
func fsckBuiltIn(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error {
	typ := "vfat" // and where nothing is recognised: the error explains
	if r, err := fsprobe.Probe(v); err == nil {
		typ = r.Type
	}
	rep, after, carried, err := filesystem.CheckAndRepair(typ, v, v.Size(), filesystem.CheckOptions{
		Repair: o.repair, Dirty: func() { warnDirtyFAT(a, o.volPath) }})
	var oe *filesystem.CheckOpenError
	switch {
	case errors.As(err, &oe) && typ == "vfat" && (errors.Is(err, filesystem.ErrUnknown) || errors.Is(err, filesystem.ErrTooSmall)):
		return notFATError(v, o.volPath, false, oe.Err)
	case errors.As(err, &oe):
		return withCode(exitDamaged, oe.Err)
	case errors.Is(err, filesystem.ErrNoChecker):
		return withCode(exitNoTool, err)
	case err != nil:
		return fsErrorIn(o.volPath, err)
	}
	if o.json {
		if err := writeJSON(a.stdout, filesystem.CheckJSON(rep, after)); err != nil {
			return err
		}
	} else {
		fmt.Fprint(a.stdout, rep.String())
		if after != nil && !carried {
			fmt.Fprintf(a.stdout, "after the repair:\n%s", after.String())
		}
	}
	return fsckResult(rep, after, o.volPath)
}

// fsckResult is fsck's exit status: 0 clean, 1 all repaired, 3 problems
// remain.
func fsckResult(rep, after filesystem.CheckReport, volPath string) error {
	switch {
	case rep.Clean():
		return nil
	case after == nil:
		return withCode(exitDamaged, fmt.Errorf("the filesystem has problems; 'cryptvol fsck %s --repair' repairs them", volPath))
	case after.Clean():
		return repairedAll(errors.New("problems found and all of them repaired"))
	}
	return withCode(exitDamaged, errors.New("problems remain after the repair (listed above)"))
}

func runFormat(ctx context.Context, a *app, args []string) error {
	c := commands["format"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	fsType := fl.String("filesystem", "fat", "filesystem to create: "+filesystemNames+" (fat12, fat16, fat32 force FAT's type)")
	label := fl.String("label", "", "volume label")
	serial := fl.String("serial", "", "volume serial as XXXX-XXXX, FAT and exFAT (default random)")
	force := fl.Bool("force", false, "format even if a filesystem is already there")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	spec, err := parseFormatSpec(*fsType, *label, *serial)
	if err != nil {
		return err
	}
	if err := spec.preflight(); err != nil {
		return err
	}
	v, err := openVolume(ctx, a, fl, cf, fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer v.Close()
	if r, err := fsprobe.Probe(v); err == nil && !*force {
		return withCode(exitDestroy, fmt.Errorf("the volume already holds a %s filesystem (use --force to replace it and lose its files)", r.Type))
	}
	if spec.fs == "none" {
		return fsError(filesystem.EraseSignatures(v))
	}
	if err := formatOver(ctx, a, v, spec); err != nil {
		if errors.Is(err, context.Canceled) {
			return interrupted("format stopped: the volume holds no usable filesystem now; run the same command again")
		}
		return fsError(err)
	}
	return v.Close()
}
