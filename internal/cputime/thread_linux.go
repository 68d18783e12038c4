package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

func thread() time.Duration { return rusage(unix.RUSAGE_THREAD) }
