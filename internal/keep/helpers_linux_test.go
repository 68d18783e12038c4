package keep

import "golang.org/x/sys/unix"

// dropKeyring removes a test's keyring with its keys.
func dropKeyring(s Store) {
	s.DeleteAll()
	if r, err := s.(*keyring).ring(false); err == nil && r != 0 {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, r, 0, 0, 0)
	}
}
