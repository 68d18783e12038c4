//go:build arm && !purego

package serpent

import "golang.org/x/sys/cpu"

// encryptNEON and decryptNEON process n runs of 8 blocks (serpent_arm.s,
// ARMv7 NEON). Raspberry Pi OS 32-bit binaries are GOARM=6 or 7 and run on
// the Pi 1's ARM1176 as well, which has no NEON, so the kernel is chosen
// at run time from the HWCAP bit (GODEBUG=cpu.neon=off masks it).
//
//go:noescape
func encryptNEON(rk *[132]uint32, dst, src *byte, n int)

//go:noescape
func decryptNEON(rk *[132]uint32, dst, src *byte, n int)

const neonRun = 8

var impl = available()[len(available())-1]

func available() []implementation {
	if cpu.ARM.HasNEON {
		return []implementation{implGeneric, implNEON}
	}
	return []implementation{implGeneric}
}
