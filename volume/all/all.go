// Package all registers every volume format driver with package volume.
// Import it for its side effect:
//
//	import _ "github.com/cryptvol/cryptvol/volume/all"
package all

import (
	_ "github.com/cryptvol/cryptvol/volume/bitlk"   // BitLocker and BitLocker To Go
	_ "github.com/cryptvol/cryptvol/volume/fvault2" // FileVault 2 (CoreStorage)
	_ "github.com/cryptvol/cryptvol/volume/luks"    // LUKS1 and LUKS2
	_ "github.com/cryptvol/cryptvol/volume/tcrypt"  // TrueCrypt and VeraCrypt
)
