// Command cryptvol opens, creates, benchmarks and reads TrueCrypt, VeraCrypt
// and LUKS volumes without root, and encrypts files compatibly with
// `openssl enc`. Each command lives in its own cmd_*.go file; this file only
// dispatches and turns errors into exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
	_ "github.com/cryptvol/cryptvol/volume/all" // every format driver
)

// command is one `cryptvol NAME` subcommand.
type command struct {
	name    string
	summary string
	// usage is the full help: synopsis, options note and an example.
	usage string
	run   func(ctx context.Context, a *app, args []string) error
	// hidden commands are internal (a re-executed helper process) and
	// left out of the overview.
	hidden bool
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// app holds the process's standard streams, so commands never touch os.Std*
// directly and stay testable.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "cryptvol: warning: "+format+"\n", args...)
}

func main() {
	os.Exit(run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
}

func run(args []string, a *app) int {
	if len(args) == 0 {
		printOverview(a.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprint(a.stdout, c.usage)
				return exitOK
			}
		}
		printOverview(a.stdout)
		return exitOK
	case "-V", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(a.stderr, "cryptvol: unknown command %q (run 'cryptvol help')\n", name)
		return exitUsage
	}
	volume.SetLockHolder(holderName(name, args[1:]), "")
	ctx, stop := interruptContext(name != "mount")
	defer stop()
	err := c.run(ctx, a, args[1:])
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	code := exitCodeFor(err)
	if errors.Is(err, context.Canceled) && !strings.HasPrefix(err.Error(), "interrupted") {
		// A command that says nothing more: never "context canceled".
		code, err = exitCancelled, errors.New("interrupted")
	}
	fmt.Fprintf(a.stderr, "cryptvol %s: %v\n", name, err)
	if usageHint(err) {
		fmt.Fprintf(a.stderr, "run 'cryptvol help %s' for usage\n", name)
	}
	return code
}

func printOverview(w io.Writer) {
	fmt.Fprint(w, `cryptvol — TrueCrypt, VeraCrypt and LUKS volumes without root, and their benchmark

Usage: cryptvol COMMAND [ARGS] [OPTIONS]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'cryptvol help COMMAND' for a command's options and an example.

Exit codes: 0 success; 1 usage error; 2 wrong password, keyfile or PIM, or not
a recognised volume; 3 damaged or unsupported volume; 4 I/O error; 5 refused
because it would destroy data; 130 interrupted (Ctrl-C or SIGTERM: the
command stops at the next file or chunk and says what it had done).
`)
}

// holderName is how this process names itself in the lock records other
// processes read ("cryptvol put", "cryptvol keyslot add").
func holderName(name string, args []string) string {
	h := "cryptvol " + name
	if (name == "keyslot" || name == "header") && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		h += " " + args[0]
	}
	return h
}

// errHelpShown ends a command after --help printed its usage.
var errHelpShown = errors.New("help shown")

// trimUsage dedents a usage text written as an indented raw string.
func trimUsage(s string) string {
	return strings.TrimLeft(s, "\n")
}
