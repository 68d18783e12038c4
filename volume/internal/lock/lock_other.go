//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly || windows)

package lock

import (
	"errors"
	"os"
)

func fileID(*os.File) (string, error) { return "", errors.New("no file identity here") }

func processAlive(pid int) bool { return pid > 0 }

func privateDir(string) bool { return false }
