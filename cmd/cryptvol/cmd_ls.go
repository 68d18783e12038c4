package main

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/cryptvol/cryptvol/fat"
)

func init() {
	register(&command{
		name:    "ls",
		summary: "list files inside a volume (no root, no mount)",
		usage: `Usage: cryptvol ls VOLUME [PATH] [-l] [credentials]

Lists the directory PATH (default /) of the FAT filesystem inside VOLUME.
With -l, each line shows type, size, modification time and name.

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
	ffs, done, err := openFAT(ctx, a, fl, cf, fl.Arg(0), fatRead)
	if err != nil {
		return err
	}
	defer done()
	st, err := ffs.Stat(dir)
	if err != nil {
		return fatError(err)
	}
	var ents []fs.DirEntry
	var dirErr error // a directory of garbage: its valid entries are still listed
	if st.IsDir() {
		if ents, dirErr = ffs.ReadDir(dir); dirErr != nil && len(ents) == 0 {
			return fatError(dirErr)
		}
	} else {
		ents = []fs.DirEntry{st}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		damage := ""
		if fi, ok := e.(*fat.FileInfo); ok {
			damage = fi.Damage()
		}
		if damage != "" {
			p := volPath(dir)
			if st.IsDir() {
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
			return fatError(err)
		}
		kind := "-"
		switch {
		case damage != "":
			kind = "!"
		case fi.IsDir():
			kind = "d"
		}
		fmt.Fprintf(a.stdout, "%s %12d %s %s\n", kind, fi.Size(), fi.ModTime().Format("2006-01-02 15:04:05"), e.Name())
	}
	return fatError(dirErr)
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
	ffs, done, err := openFAT(ctx, a, fl, cf, fl.Arg(0), fatRead)
	if err != nil {
		return err
	}
	defer done()
	s := ffs.Statfs()
	used := s.TotalBytes - s.FreeBytes
	fmt.Fprintf(a.stdout, "Filesystem  %s, label %q, serial %s, %d-byte clusters\n", ffs.Type(), ffs.Label(), serialString(ffs.Serial()), ffs.ClusterSize())
	fmt.Fprintf(a.stdout, "Size        %d bytes (%s)\n", s.TotalBytes, humanSize(s.TotalBytes))
	fmt.Fprintf(a.stdout, "Used        %d bytes (%s)\n", used, humanSize(used))
	fmt.Fprintf(a.stdout, "Free        %d bytes (%s)\n", s.FreeBytes, humanSize(s.FreeBytes))
	return nil
}

func serialString(s uint32) string { return fmt.Sprintf("%04X-%04X", s>>16, s&0xFFFF) }

// volPath cleans a path inside the volume.
func volPath(p string) string { return path.Clean("/" + p) }
