//go:build !linux

package mount

import (
	"errors"
	"os"
)

var errNoLoop = errors.New("loop devices exist only on Linux")

// AttachLoop is Linux-only.
func AttachLoop(file string, readOnly bool, blockSize int) (string, *os.File, error) {
	return "", nil, errNoLoop
}

// MountDevice is Linux-only.
func MountDevice(dev, dir, fstype string, readOnly bool) (string, error) { return "", errNoLoop }

// KernelHas reports false: no kernel filesystem list here.
func KernelHas(fstype string) bool { return false }
