//go:build unix

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

const supported = true

func process() time.Duration { return rusage(unix.RUSAGE_SELF) }

func rusage(who int) time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
