//go:build !linux && !windows && !darwin

package argon2

// systemAvailableMemory has no source on this system; see fallbackAvailable.
func systemAvailableMemory() (uint64, string) {
	return fallbackAvailable, "unknown on this system, assumed " + fallbackDesc
}
