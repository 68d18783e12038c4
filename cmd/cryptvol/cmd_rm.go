package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem/fsops"
)

func init() {
	register(&command{
		name:    "rm",
		summary: "remove files or directories inside a volume",
		usage: `Usage: cryptvol rm VOLUME PATH... [-r] [credentials]

Removes files from the filesystem inside VOLUME (FAT, exFAT, ext2/3/4,
NTFS, as put writes them); directories need -r.
A damaged entry is removed by the name 'cryptvol ls' shows for it (with
'?' for each forbidden character). On a filesystem with cross-linked files
nothing is removed (exit 3): removing one of two files sharing clusters
would free the other's data; 'cryptvol fsck VOLUME --repair' first.

Example:
  cryptvol rm secret.hc /old/notes.txt --password-file pw.txt
`,
		run: runRm,
	})
	register(&command{
		name:    "mkdir",
		summary: "create directories inside a volume",
		usage: `Usage: cryptvol mkdir VOLUME PATH... [--parents] [credentials]

Makes the directories PATH... in the filesystem inside VOLUME (FAT, exFAT,
ext2/3/4 or NTFS), with the current time. A PATH that exists, or whose
parent does not, is an error (exit 1) unless --parents, which makes the
missing parents too and leaves existing directories as they are.
(-p means --password, as in TrueCrypt, so parents has no short form.)

Example:
  cryptvol mkdir secret.hc /photos/2026 --parents --password-file pw.txt
`,
		run: runMkdir,
	})
	register(&command{
		name:    "mv",
		summary: "rename or move a file or directory inside a volume",
		usage: `Usage: cryptvol mv VOLUME SRC DST [--force] [credentials]

Renames SRC to DST; if DST is an existing directory, SRC moves into it.
An existing file DST is replaced only with --force. If mv is interrupted
(killed, a crash), the next command that writes into the volume completes
or undoes the move, so that SRC and DST never stay two names for the same
data.

Example:
  cryptvol mv secret.hc /draft.txt /final.txt --password-file pw.txt
`,
		run: runMv,
	})
}

func runRm(ctx context.Context, a *app, args []string) error {
	c := commands["rm"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	recursive := fl.BoolP("recursive", "r", false, "remove directories and their contents")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	tree, done, err := openWrite(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	return closeTree(done, inVolume(opError(fsops.Remove(tree, fl.Args()[1:], *recursive))), fl.Arg(0))
}

func runMkdir(ctx context.Context, a *app, args []string) error {
	c := commands["mkdir"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	parents := fl.Bool("parents", false, "create parent directories as needed; no error if it exists")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	tree, done, err := openWrite(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	return closeTree(done, inVolume(opError(fsops.Mkdir(tree, fl.Args()[1:], *parents))), fl.Arg(0))
}

func runMv(ctx context.Context, a *app, args []string) error {
	c := commands["mv"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	force := fl.Bool("force", false, "replace an existing destination file")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 3, 3); err != nil {
		return err
	}
	src, dst := volPath(fl.Arg(1)), volPath(fl.Arg(2))
	if src == "/" || dst == src || strings.HasPrefix(dst, src+"/") {
		// Refused before the volume is opened: no key derivation for it.
		return badOperand(fmt.Errorf("cannot move %s into itself (%s)", src, dst))
	}
	tree, done, err := openWrite(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	return closeTree(done, inVolume(opError(fsops.Move(tree, src, dst, *force))), fl.Arg(0))
}
