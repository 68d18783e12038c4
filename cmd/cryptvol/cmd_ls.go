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
		usage: `Usage: cryptvol ls VOLUME [PATH] [-l] [--json] [credentials]

Lists the directory PATH (default /) of the filesystem inside VOLUME (FAT,
exFAT, ext2/3/4 or NTFS). With -l, each line shows type (d directory, l symbolic
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
		usage: `Usage: cryptvol df VOLUME [--json] [credentials]

Prints what the filesystem inside VOLUME (FAT, exFAT, ext2/3/4 or NTFS)
is, how large it is and how much of it is used, free and available (ext4
reserves blocks for root), and its inodes where it counts them (ext2/3/4).
Nothing is written.

JSON (--json) fields:
  filesystem       FAT12, FAT16, FAT32, exfat, ntfs, ext2, ext3 or ext4
  label            the volume label ("" when none)
  serial           FAT, exFAT and NTFS: the serial number as blkid prints it
  uuid             ext2/3/4, instead of serial: the filesystem UUID
  block_size       the allocation unit in bytes (cluster or block)
  total_bytes      space for files and metadata
  used_bytes       total_bytes less free_bytes
  free_bytes       unallocated space
  available_bytes  what an ordinary user can still fill
  inodes           ext2/3/4: inodes in all (0 where there is no fixed number)
  free_inodes      ext2/3/4: inodes still free

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
	asJSON := fl.Bool("json", false, "print a JSON array: name, type, size, mode, mtime, target, damage")
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
			return inVolume(fsError(lerr))
		}
		ents = []fs.DirEntry{fs.FileInfoToDirEntry(lst)}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	jsonEnts := []jsonEntry{}
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
		if !*long && !*asJSON {
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
		if *asJSON {
			je := jsonEntry{Name: e.Name(), Type: entryType(fi.Mode()), Size: fi.Size(), Mode: fi.Mode().String(), ModTime: fi.ModTime(), Damage: damage}
			if t, ok := strings.CutPrefix(name, e.Name()+" -> "); ok {
				je.Target = t
			}
			jsonEnts = append(jsonEnts, je)
			continue
		}
		kind := kindChar(fi.Mode())
		if damage != "" {
			kind = "!"
		}
		fmt.Fprintf(a.stdout, "%s %12d %s %s\n", kind, fi.Size(), fi.ModTime().Local().Format("2006-01-02 15:04:05"), name)
	}
	if *asJSON {
		if err := writeJSON(a.stdout, jsonEnts); err != nil {
			return err
		}
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
	asJSON := fl.Bool("json", false, "print the fields below as one JSON object")
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
	if *asJSON {
		return writeJSON(a.stdout, map[string]any{
			"filesystem": name, "label": fsys.Label(), strings.ToLower(idKind): fsys.ID(),
			"block_size": s.BlockSize, "total_bytes": s.TotalBytes, "used_bytes": used,
			"free_bytes": s.FreeBytes, "available_bytes": s.AvailBytes,
			"inodes": s.Files, "free_inodes": s.FreeFiles,
		})
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
