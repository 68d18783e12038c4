//go:build !linux

package keep

import "errors"

func openKeyring() (Store, error) {
	return nil, errors.New("the kernel keyring is a Linux service")
}

// RemoveKeyring does nothing: there is no kernel keyring here.
func RemoveKeyring(name string) error { return nil }
