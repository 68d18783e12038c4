package main

import (
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/bitlk"
	"github.com/cryptvol/cryptvol/volume/fvault2"
)

// refuseForeign stops a command that rewrites TrueCrypt/VeraCrypt or LUKS
// headers (passwd, header) on a BitLocker or FileVault 2 volume, whose
// metadata it does not write, with a clear error instead of "wrong
// password".
func refuseForeign(cmd string, dev volume.Device) error {
	head := make([]byte, 4096)
	n, _ := dev.ReadAt(head, 0)
	switch {
	case bitlk.IsBitLocker(head[:n]):
		return withCode(exitDamaged, fmt.Errorf("%s does not apply to this BitLocker volume: Windows manages its protectors and metadata (manage-bde)", cmd))
	case fvault2.IsCoreStorage(head[:n]):
		return withCode(exitDamaged, fmt.Errorf("%s does not apply to this FileVault 2 volume: macOS manages its passwords and metadata", cmd))
	}
	return nil
}
