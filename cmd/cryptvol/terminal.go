package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/cryptvol/cryptvol/volume"
)

// passwordTries is how often a password typed at the prompt may be wrong
// before the command gives up (cryptsetup's default too).
const passwordTries = 3

// errInterrupted ends a command whose prompt got Ctrl-C (exit 130).
var errInterrupted = fmt.Errorf("interrupted: %w", context.Canceled)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// promptPassword asks for a password on the terminal without echo.
// Ctrl-C (or SIGTERM) ends the prompt at once: the terminal gets its echo
// back and the command ends with errInterrupted.
func promptPassword(a *app, prompt string) ([]byte, error) {
	fd := int(os.Stdin.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("reading password: %w", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	echoOff(fd)
	defer term.Restore(fd, saved)
	fmt.Fprint(a.stderr, prompt)
	type read struct {
		pw  []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		done <- read{pw, err}
	}()
	select {
	case r := <-done:
		fmt.Fprintln(a.stderr)
		if r.err != nil {
			return nil, fmt.Errorf("reading password: %w", r.err)
		}
		return r.pw, nil
	case <-sig:
		// The read stays blocked in its goroutine; the process ends
		// (the deferred Restore gives the terminal its echo back).
		fmt.Fprintln(a.stderr)
		return nil, errInterrupted
	}
}

// withTries runs open, which resolves the credentials and opens, and runs
// it again while the password was typed at the prompt and was wrong, up to
// passwordTries times.
func withTries[T any](a *app, cf *credFlags, open func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		cf.prompted = false
		v, err := open()
		if err == nil || !cf.prompted || try == passwordTries || !errors.Is(err, volume.ErrWrongPassword) {
			return v, err
		}
		fmt.Fprintf(a.stderr, "Wrong password, keyfile or PIM, or not a volume (try %d of %d).\n", try, passwordTries)
	}
}

// progressLine shows what a slow unlock is trying, on one line of stderr
// that it keeps rewriting, when stderr is a terminal; clear erases the
// line. Elsewhere both do nothing, so logs and scripts see no progress.
func (a *app) progressLine(o *volume.Options) (clear func()) {
	if !isTerminal(a.stderr) {
		return func() {}
	}
	var mu sync.Mutex
	shown := false
	o.Progress = func(what string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(a.stderr, "\r\x1b[KTrying %s...", what)
		shown = true
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprint(a.stderr, "\r\x1b[K")
			shown = false
		}
	}
}
