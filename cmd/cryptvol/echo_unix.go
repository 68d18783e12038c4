//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || aix

package main

import "golang.org/x/sys/unix"

// echoOff turns the terminal's echo off before the prompt is shown, so that
// what is typed ahead of the password read is not echoed either.
func echoOff(fd int) {
	tio, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return
	}
	tio.Lflag &^= unix.ECHO
	unix.IoctlSetTermios(fd, ioctlWriteTermios, tio)
}
