package luks

import (
	"fmt"
	"io"
)

// WriteKeyslots writes the header's line and one line per keyslot, as
// `cryptvol keyslot list` shows them.
func (h *Header) WriteKeyslots(w io.Writer) {
	fmt.Fprintf(w, "LUKS%d  %s  %s, %d-bit key\n", h.Version, h.UUID, h.Cipher, h.KeySize)
	for _, k := range h.Keyslots {
		if !k.Active {
			fmt.Fprintf(w, "%2d: DISABLED\n", k.Slot)
			continue
		}
		kdf := k.KDF
		switch {
		case k.KDF == "pbkdf2":
			kdf = fmt.Sprintf("pbkdf2-%s, %d iterations", k.Hash, k.Iterations)
		case k.KDF != "":
			kdf = fmt.Sprintf("%s, time %d, memory %d KiB, %d threads", k.KDF, k.Iterations, k.MemoryKiB, k.Threads)
		}
		extra := ""
		if k.Priority != "" && k.Priority != "normal" {
			extra += ", priority " + k.Priority
		}
		if k.Unbound {
			extra += ", unbound (not the volume key)"
		}
		fmt.Fprintf(w, "%2d: ENABLED  %s, %s%s\n", k.Slot, k.Type, kdf, extra)
	}
}
