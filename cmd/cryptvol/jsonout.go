package main

import (
	"io/fs"
	"time"

	"github.com/cryptvol/cryptvol/fat"
)

// jsonEntry is one line of `ls --json` and `archive ls --json`.
type jsonEntry struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, symlink, ...
	Size    int64     `json:"size"`
	Mode    string    `json:"mode,omitempty"`
	ModTime time.Time `json:"mtime"`
	Target  string    `json:"target,omitempty"` // a symbolic link's
	Damage  string    `json:"damage,omitempty"` // a damaged entry's problem
}

// entryType names a mode's kind for JSON.
func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special"
}

// jsonFsck is `fsck --json`: what was found (and, with --repair, done and
// what a fresh check found after).
type jsonFsck struct {
	Clean          bool      `json:"clean"`
	Errors         bool      `json:"errors"` // cross-links or bad entries: data at risk
	Files          int       `json:"files"`
	Dirs           int       `json:"dirs"`
	LostClusters   uint32    `json:"lost_clusters"`
	LostChains     int       `json:"lost_chains"`
	CrossLinks     []string  `json:"cross_links"`
	BadEntries     []string  `json:"bad_entries"`
	LongChains     []string  `json:"long_chains"`
	Interrupted    []string  `json:"interrupted_renames"`
	OrphanLFN      int       `json:"orphan_long_names"`
	StrayDots      int       `json:"stray_dot_entries"`
	FATMismatch    int       `json:"fat_mismatch_sectors"`
	FreeCountWrong bool      `json:"free_count_wrong"`
	Dirty          bool      `json:"dirty"`
	MarkedDamaged  bool      `json:"marked_damaged"`
	Repaired       []string  `json:"repaired,omitempty"`
	After          *jsonFsck `json:"after_repair,omitempty"`
}

func fsckJSON(r *fat.CheckReport) *jsonFsck {
	if r == nil {
		return nil
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return &jsonFsck{
		Clean: r.Clean(), Errors: r.Errors(), Files: r.Files, Dirs: r.Dirs,
		LostClusters: r.LostClusters, LostChains: r.LostChains,
		CrossLinks: nonNil(r.CrossLinks), BadEntries: nonNil(r.BadEntries),
		LongChains: nonNil(r.LongChains), Interrupted: nonNil(r.Interrupted),
		OrphanLFN: r.OrphanLFN, StrayDots: r.StrayDots, FATMismatch: r.FATMismatch,
		FreeCountWrong: r.FreeCountWrong, Dirty: r.Dirty, MarkedDamaged: r.MarkedDamaged,
		Repaired: r.Repaired, After: fsckJSON(r.After),
	}
}
