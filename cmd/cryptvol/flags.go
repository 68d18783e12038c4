package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// newFlags makes a GNU-style flag set: flags may come before or after the
// positional arguments, `--flag=value` and `--flag value` both work.
func newFlags(c *command, a *app) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolP("help", "h", false, "show this help")
	return fs
}

// parseFlags parses args; on --help it prints the usage and the flag list
// and returns errHelpShown.
func parseFlags(fs *pflag.FlagSet, c *command, a *app, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError(err)
	}
	if h, _ := fs.GetBool("help"); h {
		fmt.Fprint(a.stdout, trimUsage(c.usage))
		fmt.Fprintf(a.stdout, "\nOptions:\n%s", fs.FlagUsages())
		return errHelpShown
	}
	return nil
}

// wantArgs checks the number of positional arguments.
func wantArgs(fs *pflag.FlagSet, min, max int) error {
	n := fs.NArg()
	if n < min || (max >= 0 && n > max) {
		switch {
		case min == max:
			return usageError(fmt.Errorf("want %d argument(s), got %d", min, n))
		case max < 0:
			return usageError(fmt.Errorf("want at least %d argument(s), got %d", min, n))
		default:
			return usageError(fmt.Errorf("want %d to %d arguments, got %d", min, max, n))
		}
	}
	return nil
}
