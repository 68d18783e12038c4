package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interruptContext is the commands' context: SIGINT (Ctrl-C) or SIGTERM
// cancels it, and the command stops at its next file or chunk, cleans up
// and says what it had done (exit 130). With secondKills, a second signal
// ends the process at once (what is left behind is swept by the next run,
// see internal/atomicfile); the mount daemon keeps catching them, as it
// must unmount first.
func interruptContext(secondKills bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		if secondKills {
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(sigs)
		cancel()
	}
}

// interrupted is the error of a command stopped by a signal: exit 130,
// with what was done.
func interrupted(format string, args ...any) error {
	return withCode(exitCancelled, fmt.Errorf("interrupted: "+format, args...))
}
