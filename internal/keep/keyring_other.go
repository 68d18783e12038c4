//go:build !linux

package keep

import "errors"

func openKeyring() (Store, error) {
	return nil, errors.New("the kernel keyring is a Linux service")
}
