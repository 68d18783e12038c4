package argon2

import "golang.org/x/sys/unix"

// systemAvailableMemory: macOS publishes no cheap "available" figure (it
// compresses and swaps freely), so half of the physical memory (sysctl
// hw.memsize) is taken as the conservative limit.
func systemAvailableMemory() (uint64, string) {
	total, err := unix.SysctlUint64("hw.memsize")
	if err != nil || total == 0 {
		return fallbackAvailable, "unknown on this system, assumed " + fallbackDesc
	}
	return total / 2, "half of hw.memsize"
}
