package main

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

func init() {
	register(&command{
		name:    "ls",
		summary: "list files inside a volume (no root, no mount)",
		usage: `Usage: cryptvol ls VOLUME [PATH] [-l] [credentials]

Lists the directory PATH (default /) of the filesystem inside VOLUME (FAT,
ext2/3/4 or NTFS). With -l, each line shows type (d directory, l symbolic
link, - file), size, modification time (local) and name, and where a link
points.

A damaged entry (a forbidden character in its name, a cluster outside the
volume, a size without a cluster) is listed too, each forbidden character
shown as '?', with type '!' under -l and a warning on stderr: the rest of
the directory stays usable, 'cryptvol rm' removes the entry by the name
shown, and 'cryptvol fsck --repair' repairs it.

Example:
  cryptvol ls secret.hc /photos -l --password-file pw.txt
`,
		run: runLs,
	})
	register(&command{
		name:    "df",
		summary: "show the size and free space of the filesystem inside a volume",
		usage: `Usage: cryptvol df VOLUME [credentials]

Example:
  cryptvol df secret.hc --password-file pw.txt
`,
		run: runDf,
	})
}

func runLs(ctx context.Context, a *app, args []string) error {
	c := commands["ls"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	long := fl.BoolP("long", "l", false, "long listing: type, size, time, name")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 2); err != nil {
		return err
	}
	dir := "/"
	if fl.NArg() == 2 {
		dir = fl.Arg(1)
	}
	fsys, done, err := openFS(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	defer done()
	var ents []fs.DirEntry
	var dirErr error
	st, err := fsys.Stat(dir)
	isDir := err == nil && st.IsDir()
	switch {
	case isDir:
		// A directory of garbage still lists its valid entries.
		if ents, dirErr = fsys.ReadDir(dir); dirErr != nil && len(ents) == 0 {
			return fsError(dirErr)
		}
	default:
		// A file, or a link (listed itself, even when it dangles).
		lst, lerr := fsys.Lstat(dir)
		if lerr != nil {
			return fsError(lerr)
		}
		ents = []fs.DirEntry{fs.FileInfoToDirEntry(lst)}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		damage := ""
		if d, ok := e.(interface{ Damage() string }); ok {
			damage = d.Damage()
		}
		if damage != "" {
			p := volPath(dir)
			if isDir {
				p = path.Join(p, e.Name())
			}
			a.warnf("%s: damaged entry (%s): 'cryptvol rm' removes it, 'cryptvol fsck %s --repair' repairs it", p, damage, fl.Arg(0))
		}
		if !*long {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			fmt.Fprintln(a.stdout, name)
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return fsError(err)
		}
		name := e.Name()
		if fi.Mode()&fs.ModeSymlink != 0 {
			p := dir
			if isDir {
				p = path.Join(volPath(dir), e.Name())
			}
			target, err := fsys.Readlink(p)
			if err != nil {
				target = "?"
			}
			name += " -> " + target
		}
		kind := kindChar(fi.Mode())
		if damage != "" {
			kind = "!"
		}
		fmt.Fprintf(a.stdout, "%s %12d %s %s\n", kind, fi.Size(), fi.ModTime().Local().Format("2006-01-02 15:04:05"), name)
	}
	return fsError(dirErr)
}

// kindChar is ls's type letter for a mode.
func kindChar(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "d"
	case m&fs.ModeSymlink != 0:
		return "l"
	case m&fs.ModeNamedPipe != 0:
		return "p"
	case m&fs.ModeSocket != 0:
		return "s"
	case m&fs.ModeCharDevice != 0:
		return "c"
	case m&fs.ModeDevice != 0:
		return "b"
	}
	return "-"
}

func runDf(ctx context.Context, a *app, args []string) error {
	c := commands["df"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	fsys, done, err := openFS(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	defer done()
	s := fsys.Statfs()
	used := s.TotalBytes - s.FreeBytes
	name, idKind, unit := fsys.Type(), "serial", "clusters"
	if v := fsys.Version(); v != "" {
		name = v
	}
	if strings.HasPrefix(name, "ext") {
		idKind, unit = "UUID", "blocks"
	}
	fmt.Fprintf(a.stdout, "Filesystem  %s, label %q, %s %s, %d-byte %s\n", name, fsys.Label(), idKind, fsys.ID(), s.BlockSize, unit)
	fmt.Fprintf(a.stdout, "Size        %d bytes (%s)\n", s.TotalBytes, humanSize(s.TotalBytes))
	fmt.Fprintf(a.stdout, "Used        %d bytes (%s)\n", used, humanSize(used))
	fmt.Fprintf(a.stdout, "Free        %d bytes (%s)\n", s.FreeBytes, humanSize(s.FreeBytes))
	if s.AvailBytes != s.FreeBytes {
		fmt.Fprintf(a.stdout, "Available   %d bytes (%s; the rest is reserved for root)\n", s.AvailBytes, humanSize(s.AvailBytes))
	}
	if s.Files != 0 {
		fmt.Fprintf(a.stdout, "Inodes      %d (%d free)\n", s.Files, s.FreeFiles)
	}
	return nil
}

// volPath cleans a path inside the volume.
func volPath(p string) string { return path.Clean("/" + p) }
