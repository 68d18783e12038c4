//go:build !linux

package archivebench

// dropCache cannot drop one file's cached pages here without privileges:
// cold-cache figures are not measured.
func dropCache(string) (bool, error) { return false, nil }
