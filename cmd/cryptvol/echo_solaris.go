//go:build solaris || aix

package main

import "golang.org/x/sys/unix"

const (
	ioctlReadTermios  = unix.TCGETA
	ioctlWriteTermios = unix.TCSETA
)
