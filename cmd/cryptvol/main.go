// Command cryptvol opens, creates, benchmarks and reads TrueCrypt, VeraCrypt
// and LUKS volumes without root, and encrypts files compatibly with
// `openssl enc`. Each command lives in its own cmd_*.go file; this file only
// dispatches and turns errors into exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/cryptvol/cryptvol/mount"
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

	// quiet and verbose are the global -q/--quiet and -v/--verbose.
	quiet, verbose bool
	// stdinTaken is set when standard input is a command's data (put's
	// "-"), so it is not also read as the password.
	stdinTaken bool
}

// infof prints an informational line on stderr, unless --quiet.
func (a *app) infof(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, format+"\n", args...)
	}
}

// verbosef prints a line on stderr under --verbose.
func (a *app) verbosef(format string, args ...any) {
	if a.verbose {
		fmt.Fprintf(a.stderr, "cryptvol: "+format+"\n", args...)
	}
}

func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "cryptvol: warning: "+format+"\n", args...)
}

func main() {
	os.Exit(run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
}

func run(args []string, a *app) int {
	args = globalFlags(a, args)
	if len(args) == 0 {
		printOverview(a.stderr)
		return exitUsage
	}
	name := args[0]
	// A command killed while writing through a stacked driver leaves
	// private mounts whose stat hangs, and itself a zombie holding the
	// volume's lock: take them down before anything looks (issue 25).
	mount.CleanPrivateMounts(os.TempDir())
	switch name {
	case "-h", "--help", "help":
		return runHelp(a, args[1:])
	case "-V", "--version":
		name = "version"
	}
	name, args = veracryptShape(name, args)
	c := lookupCommand(name)
	if c == nil {
		var names []string
		for n, c := range commands {
			if !c.hidden {
				names = append(names, n)
			}
		}
		for n := range aliases {
			names = append(names, n)
		}
		fmt.Fprintf(a.stderr, "cryptvol: unknown command %q%s (run 'cryptvol help')\n", name, didYouMean(name, names))
		return exitUsage
	}
	name = c.name
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
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		// Ctrl-C or SIGTERM: never "context canceled".
		code, err = exitCancelled, errors.New(interruptedText(err))
	}
	fmt.Fprintf(a.stderr, "cryptvol %s: %v\n", name, err)
	if usageHint(err) {
		fmt.Fprintf(a.stderr, "run 'cryptvol help %s' for usage\n", name)
	}
	return code
}

// lookupCommand finds a command by its name or another name (aliases).
func lookupCommand(name string) *command {
	if c, ok := commands[name]; ok {
		return c
	}
	return commands[aliases[name]]
}

// globalFlags takes -q/--quiet and -v/--verbose given before the command
// name (after it, every command's flag set takes them).
func globalFlags(a *app, args []string) []string {
	for len(args) > 0 {
		switch args[0] {
		case "-q", "--quiet":
			a.quiet = true
		case "-v", "--verbose":
			a.verbose = true
		default:
			return args
		}
		args = args[1:]
	}
	return args
}

// runHelp is `cryptvol help [COMMAND [SUBCOMMAND]]` and `help --man`: a
// command's help is what its own --help prints, so there is one text.
func runHelp(a *app, args []string) int {
	if len(args) == 0 {
		printOverview(a.stdout)
		return exitOK
	}
	if args[0] == "--man" {
		return writeManPage(a)
	}
	c := lookupCommand(args[0])
	if c == nil {
		fmt.Fprintf(a.stderr, "cryptvol help: unknown command %q (run 'cryptvol help')\n", args[0])
		return exitUsage
	}
	return helpOf(a, c, args[1:])
}

// helpOf prints c's help by running it with --help (after any subcommand
// names), before anything else it would do.
func helpOf(a *app, c *command, sub []string) int {
	err := c.run(context.Background(), a, append(append([]string(nil), sub...), "--help"))
	if err != nil && !errors.Is(err, errHelpShown) {
		fmt.Fprintf(a.stderr, "cryptvol help %s: %v\n", c.name, err)
		return exitCodeFor(err)
	}
	return exitOK
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

Exit codes: 0 success; 1 usage error (also a path in the volume that names
nothing, or for mkdir exists, a name the filesystem cannot hold, and mv into
itself); 2 wrong password, keyfile or PIM, or not a recognised volume; 3
damaged or unsupported volume; 4 I/O error (also a full filesystem, a missing
local file); 5 refused because it would destroy data (a file exists, a
protected hidden volume) or the volume is in use by another process; 6 a
program the filesystem needs (its mkfs or checker, e.g. mkfs.ext4, ntfsfix)
is not installed; 130
interrupted (Ctrl-C or SIGTERM: the command stops at the next file or chunk
and says what it had done).
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

// interruptedText is the message of a command stopped by a signal: its own
// "interrupted: ..." account when it gave one, else "interrupted", never
// Go's "context canceled".
func interruptedText(err error) string {
	msg := strings.ReplaceAll(err.Error(), ": context canceled", "")
	if strings.HasPrefix(msg, "interrupted") && !strings.Contains(msg, "context canceled") {
		return msg
	}
	return "interrupted"
}
