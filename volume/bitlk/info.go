package bitlk

import (
	"fmt"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// info describes the volume opened with protector used (an index into
// m.VMKs), in the fields `cryptvol info` shows; Details follow
// cryptsetup's bitlkDump.
func (m *Metadata) info(used int, size int64) volume.Info {
	in := volume.Info{
		Format:     "bitlk",
		Version:    2,
		Encryption: m.Method.String(),
		Mode:       m.Method.Mode(),
		KeySize:    m.Method.keyBits(),
		SectorSize: m.SectorSize,
		DataSize:   size,
		UUID:       m.GUID.String(),
		Details:    m.Details(),
	}
	if used >= 0 && used < len(m.VMKs) {
		slot := used
		in.KeySlot = &slot
		v := &m.VMKs[used]
		if v.hasSalt && (v.Protection == Password || v.Protection == RecoveryPassword) {
			in.Hash, in.Iterations = "sha256", StretchRounds
		}
		in.Details = append(in.Details, volume.Detail{Key: "Unlocked with", Value: fmt.Sprintf("protector %d (%s)", used, v.Protection)})
	}
	return in
}

// Details lists what the metadata says, as bitlkDump prints it.
func (m *Metadata) Details() []volume.Detail {
	kind := "BitLocker"
	if m.ToGo {
		kind = "BitLocker To Go"
	}
	d := []volume.Detail{{Key: "Volume type", Value: kind}}
	if m.Description != "" {
		d = append(d, volume.Detail{Key: "Description", Value: m.Description})
	}
	if !m.Created.IsZero() {
		d = append(d, volume.Detail{Key: "Created", Value: m.Created.Format(time.RFC3339)})
	}
	d = append(d, volume.Detail{Key: "Recorded size", Value: fmt.Sprintf("%d bytes", m.VolumeSize)})
	for i, v := range m.VMKs {
		s := fmt.Sprintf("%s, %s", v.Protection, v.GUID)
		if v.Name != "" {
			s += fmt.Sprintf(" (%q)", v.Name)
		}
		if v.hasSalt {
			s += fmt.Sprintf(", salt %x", v.Salt)
		}
		d = append(d, volume.Detail{Key: fmt.Sprintf("Protector %d", i), Value: s})
	}
	offs := make([]string, len(m.MetadataOffsets))
	for i, o := range m.MetadataOffsets {
		offs[i] = fmt.Sprint(o)
	}
	d = append(d,
		volume.Detail{Key: "Metadata blocks", Value: fmt.Sprintf("at %s, 64 KiB each (copy %d read)", strings.Join(offs, ", "), m.Copy+1)},
		volume.Detail{Key: "First sectors kept at", Value: fmt.Sprintf("%d (%d bytes)", m.HeaderOffset, m.HeaderSize)},
	)
	return d
}
