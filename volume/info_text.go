package volume

import (
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// WriteText writes in as `cryptvol info` shows it: one "Key: value" row
// per field that applies, aligned.
func (in Info) WriteText(w io.Writer) {
	row := func(k string, v any) { fmt.Fprintf(w, "%-22s %v\n", k+":", v) }
	row("Format", in.Format)
	if in.Version != 0 {
		row("Header version", in.Version)
	}
	if in.MinProgramVersion != "" {
		row("Min. program version", in.MinProgramVersion)
	}
	row("Encryption", in.Encryption)
	row("Mode", in.Mode)
	row("Key size", fmt.Sprintf("%d bits", in.KeySize))
	row("Hash (KDF)", in.Hash)
	if in.Iterations != 0 {
		row("Iterations", in.Iterations)
	}
	if in.MemoryKiB != 0 {
		row("Memory", fmt.Sprintf("%d KiB", in.MemoryKiB))
		row("Parallelism", in.Parallelism)
	}
	if in.PIM != 0 {
		row("PIM", in.PIM)
	}
	row("Sector size", in.SectorSize)
	row("Data offset", fmt.Sprintf("%d bytes", in.DataOffset))
	row("Data size", fmt.Sprintf("%d bytes (%s)", in.DataSize, progress.FormatSize(in.DataSize)))
	row("Hidden volume", yesNo(in.Hidden))
	if in.System {
		row("System encryption", "yes")
	}
	if in.BackupHeader {
		row("Header used", "BACKUP (the primary header is damaged)")
	}
	if in.ReadOnly {
		// The session, not the volume: info opens every volume read-only.
		row("Opened", "read-only by this command (info never writes; says nothing of the volume)")
	}
	if in.UUID != "" {
		row("UUID", in.UUID)
	}
	if in.Label != "" {
		row("Label", in.Label)
	}
	if in.KeySlot != nil {
		row("Unlocked keyslot", *in.KeySlot)
	}
	for _, d := range in.Details {
		row(d.Key, d.Value)
	}
	if fs := in.Filesystem; fs != nil {
		desc := fs.Type
		if fs.Version != "" {
			desc += " (" + fs.Version + ")"
		}
		row("Filesystem", desc)
		if fs.Label != "" {
			row("Filesystem label", fs.Label)
		}
		if fs.Serial != "" {
			row("Filesystem serial", fs.Serial)
		}
		if fs.UUID != "" {
			row("Filesystem UUID", fs.UUID)
		}
	} else {
		row("Filesystem", "none recognised")
	}
	if in.MasterKey != "" {
		row("Master key", in.MasterKey)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
