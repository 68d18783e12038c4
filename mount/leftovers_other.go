//go:build !linux

package mount

import (
	"fmt"
	"os"
)

// PrivateDirPrefix begins the name of a command's private mount directory.
const PrivateDirPrefix = "cryptvol-write-"

// PrivateDirPattern is the os.MkdirTemp pattern of this process's private
// mount directory.
func PrivateDirPattern() string { return fmt.Sprintf("%s%d-", PrivateDirPrefix, os.Getpid()) }

// CleanPrivateMounts finds nothing outside Linux (no mount table read).
func CleanPrivateMounts(tmp string) []string { return nil }
