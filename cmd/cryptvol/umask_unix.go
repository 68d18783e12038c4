//go:build unix

package main

import (
	"io/fs"
	"sync"
	"syscall"
)

// umask is the process's file-mode creation mask, read once (setting it is
// the only way to read it, so it is put straight back).
var umask = sync.OnceValue(func() fs.FileMode {
	m := syscall.Umask(0o077)
	syscall.Umask(m)
	return fs.FileMode(m)
})
