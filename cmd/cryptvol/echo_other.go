//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || aix)

package main

// echoOff does nothing here: term.ReadPassword turns the echo off itself
// once it reads.
func echoOff(fd int) {}
