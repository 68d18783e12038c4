package filesystem

import (
	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
)

// AfterRepair is a CheckReport of a repair that carries the fresh check
// made once the repair was done (FAT's): nil before any repair.
func AfterRepair(r CheckReport) (CheckReport, bool) {
	if fr, ok := r.(*fat.CheckReport); ok {
		if fr.After == nil {
			return nil, true
		}
		return fr.After, true
	}
	return nil, false
}

// FATCheckJSON is a FAT check report as `cryptvol fsck --json` prints it
// (docs/ARCHITECTURE.md, "JSON output").
type FATCheckJSON struct {
	Clean          bool          `json:"clean"`
	Errors         bool          `json:"errors"` // cross-links or bad entries: data at risk
	Files          int           `json:"files"`
	Dirs           int           `json:"dirs"`
	LostClusters   uint32        `json:"lost_clusters"`
	LostChains     int           `json:"lost_chains"`
	CrossLinks     []string      `json:"cross_links"`
	BadEntries     []string      `json:"bad_entries"`
	LongChains     []string      `json:"long_chains"`
	Interrupted    []string      `json:"interrupted_renames"`
	OrphanLFN      int           `json:"orphan_long_names"`
	StrayDots      int           `json:"stray_dot_entries"`
	FATMismatch    int           `json:"fat_mismatch_sectors"`
	FreeCountWrong bool          `json:"free_count_wrong"`
	Dirty          bool          `json:"dirty"`
	MarkedDamaged  bool          `json:"marked_damaged"`
	Repaired       []string      `json:"repaired,omitempty"`
	After          *FATCheckJSON `json:"after_repair,omitempty"`
}

// ExFATCheckJSON is an exFAT check report as `cryptvol fsck --json`
// prints it.
type ExFATCheckJSON struct {
	Filesystem    string          `json:"filesystem"`
	Clean         bool            `json:"clean"`
	Errors        bool            `json:"errors"` // cross-links or bad entries: data at risk
	Files         int             `json:"files"`
	Dirs          int             `json:"dirs"`
	LostClusters  uint32          `json:"lost_clusters"`
	Unmarked      []string        `json:"unmarked_clusters"`
	CrossLinks    []string        `json:"cross_links"`
	Duplicates    []string        `json:"duplicates"`
	BadEntries    []string        `json:"bad_entries"`
	BadChecksums  []string        `json:"bad_checksums"`
	LongChains    []string        `json:"long_chains"`
	OrphanEntries int             `json:"orphan_entries"`
	Dirty         bool            `json:"dirty"`
	BootProblems  []string        `json:"boot_problems"`
	Repaired      []string        `json:"repaired,omitempty"`
	After         *ExFATCheckJSON `json:"after_repair,omitempty"`
}

// CheckJSON is r (and after, the fresh check made after a repair where r
// does not carry it) in the form fsck --json prints; nil for a report of
// a filesystem without one.
func CheckJSON(r, after CheckReport) any {
	switch r := r.(type) {
	case *fat.CheckReport:
		return fatCheckJSON(r)
	case *exfat.CheckReport:
		j := exfatCheckJSON(r)
		if a, ok := after.(*exfat.CheckReport); ok {
			j.After = exfatCheckJSON(a)
		}
		return j
	}
	return nil
}

// nonNil makes an empty list print as [], not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fatCheckJSON(r *fat.CheckReport) *FATCheckJSON {
	if r == nil {
		return nil
	}
	return &FATCheckJSON{
		Clean: r.Clean(), Errors: r.Errors(), Files: r.Files, Dirs: r.Dirs,
		LostClusters: r.LostClusters, LostChains: r.LostChains,
		CrossLinks: nonNil(r.CrossLinks), BadEntries: nonNil(r.BadEntries),
		LongChains: nonNil(r.LongChains), Interrupted: nonNil(r.Interrupted),
		OrphanLFN: r.OrphanLFN, StrayDots: r.StrayDots, FATMismatch: r.FATMismatch,
		FreeCountWrong: r.FreeCountWrong, Dirty: r.Dirty, MarkedDamaged: r.MarkedDamaged,
		Repaired: r.Repaired, After: fatCheckJSON(r.After),
	}
}

func exfatCheckJSON(r *exfat.CheckReport) *ExFATCheckJSON {
	if r == nil {
		return nil
	}
	return &ExFATCheckJSON{Filesystem: "exfat", Clean: r.Clean(), Errors: r.Errors(), Files: r.Files, Dirs: r.Dirs,
		LostClusters: r.LostClusters, Unmarked: nonNil(r.Unmarked), CrossLinks: nonNil(r.CrossLinks), Duplicates: nonNil(r.Duplicates),
		BadEntries: nonNil(r.BadEntries), BadChecksums: nonNil(r.BadChecksums), LongChains: nonNil(r.LongChains),
		OrphanEntries: r.OrphanEntries, Dirty: r.Dirty, BootProblems: nonNil(r.BootProblems), Repaired: r.Repaired}
}
