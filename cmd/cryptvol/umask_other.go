//go:build !unix

package main

import "io/fs"

// umask: Windows and Plan 9 have none; a new file's permissions are
// the volume's as they are.
func umask() fs.FileMode { return 0 }
