package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/volume"
)

// jsonExFATFsck is fsck --json for exFAT.
type jsonExFATFsck struct {
	Filesystem    string         `json:"filesystem"`
	Clean         bool           `json:"clean"`
	Errors        bool           `json:"errors"` // cross-links or bad entries: data at risk
	Files         int            `json:"files"`
	Dirs          int            `json:"dirs"`
	LostClusters  uint32         `json:"lost_clusters"`
	Unmarked      []string       `json:"unmarked_clusters"`
	CrossLinks    []string       `json:"cross_links"`
	Duplicates    []string       `json:"duplicates"`
	BadEntries    []string       `json:"bad_entries"`
	BadChecksums  []string       `json:"bad_checksums"`
	LongChains    []string       `json:"long_chains"`
	OrphanEntries int            `json:"orphan_entries"`
	Dirty         bool           `json:"dirty"`
	BootProblems  []string       `json:"boot_problems"`
	Repaired      []string       `json:"repaired,omitempty"`
	After         *jsonExFATFsck `json:"after_repair,omitempty"`
}

func exfatFsckJSON(r *exfat.CheckReport) *jsonExFATFsck {
	if r == nil {
		return nil
	}
	nn := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return &jsonExFATFsck{Filesystem: "exfat", Clean: r.Clean(), Errors: r.Errors(), Files: r.Files, Dirs: r.Dirs,
		LostClusters: r.LostClusters, Unmarked: nn(r.Unmarked), CrossLinks: nn(r.CrossLinks), Duplicates: nn(r.Duplicates),
		BadEntries: nn(r.BadEntries), BadChecksums: nn(r.BadChecksums), LongChains: nn(r.LongChains),
		OrphanEntries: r.OrphanEntries, Dirty: r.Dirty, BootProblems: nn(r.BootProblems), Repaired: r.Repaired}
}

// fsckExFAT is fsck of exFAT, built in (package exfat's Check); a repair
// is followed by a fresh check of what is on disk.
func fsckExFAT(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error {
	check := func(repair bool) (*exfat.CheckReport, error) {
		x, err := exfat.OpenWithOptions(v, v.Size(), exfat.Options{ReadOnly: !repair})
		if err != nil {
			return nil, withCode(exitDamaged, err)
		}
		rep, err := x.Check(repair)
		if cerr := x.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, treeError(err)
		}
		return rep, nil
	}
	rep, err := check(o.repair)
	if err != nil {
		return err
	}
	var after *exfat.CheckReport
	if o.repair && !rep.Clean() {
		if after, err = check(false); err != nil {
			return err
		}
	}
	if o.json {
		j := exfatFsckJSON(rep)
		j.After = exfatFsckJSON(after)
		if err := writeJSON(a.stdout, j); err != nil {
			return err
		}
	} else {
		fmt.Fprint(a.stdout, rep.String())
		if after != nil {
			fmt.Fprintf(a.stdout, "after the repair:\n%s", after.String())
		}
	}
	switch {
	case rep.Clean():
		return nil
	case after == nil:
		return withCode(exitDamaged, fmt.Errorf("the filesystem has problems; 'cryptvol fsck %s --repair' repairs them", o.volPath))
	case after.Clean():
		return repairedAll(errors.New("problems found and all of them repaired"))
	}
	return withCode(exitDamaged, errors.New("problems remain after the repair (listed above)"))
}
