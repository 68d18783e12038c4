//go:build !linux

package argon2

// adviseHugePages is a no-op where transparent huge pages cannot be
// requested.
func adviseHugePages([]block) {}
