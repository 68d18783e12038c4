//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly || windows)

package lock

import (
	"errors"
	"os"
)

// tryLock: this platform has no advisory locks (see the package doc).
func tryLock(*os.File, bool) (func(), error) { return nil, errNoLocks }

func fileID(*os.File) (string, error) { return "", errors.New("no file identity here") }

func processAlive(pid int) bool { return pid > 0 }

func privateDir(string) bool { return false }
