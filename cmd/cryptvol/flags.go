package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// newFlags makes a GNU-style flag set: flags may come before or after the
// positional arguments, `--flag=value` and `--flag value` both work. Every
// command's set has --help and the global -q/--quiet and -v/--verbose, so
// they may be given before or after the command name.
func newFlags(c *command, a *app) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolP("help", "h", false, "show this help")
	fs.BoolVarP(&a.quiet, "quiet", "q", a.quiet, "no progress lines and no informational messages (errors and warnings stay)")
	fs.BoolVarP(&a.verbose, "verbose", "v", a.verbose, "say what is being tried and done, on standard error")
	return fs
}

// parseFlags parses args; on --help it prints the command's help (see
// helpText) and returns errHelpShown.
func parseFlags(fs *pflag.FlagSet, c *command, a *app, args []string) error {
	cf := credFlagsOf[fs]
	if cf != nil {
		cf.addCompatFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return usageError(suggestFlag(fs, err))
	}
	if h, _ := fs.GetBool("help"); h {
		shownFlags = fs
		fmt.Fprint(a.stdout, helpText(c, fs))
		return errHelpShown
	}
	if a.quiet && a.verbose {
		return usageError(errors.New("-q/--quiet and -v/--verbose contradict each other"))
	}
	if err := onePasswordSource(fs); err != nil {
		return err
	}
	if cf != nil {
		delete(credFlagsOf, fs)
		return cf.applyCompat(a, fs)
	}
	return nil
}

// passwordSources are the flags that each give the whole password; two
// of them are a mistake (which one was meant?), never silently one.
var passwordSources = []string{"password-file", "password", "key-file"}

// onePasswordSource refuses a command line that gives the password twice.
func onePasswordSource(fs *pflag.FlagSet) error {
	var given []string
	for _, name := range passwordSources {
		f := fs.Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		spelling := "--" + name
		if f.Shorthand != "" {
			spelling = "-" + f.Shorthand + "/" + spelling
		}
		given = append(given, spelling)
	}
	if len(given) > 1 {
		return usageError(fmt.Errorf("%s each give the password: give only one", strings.Join(given, " and ")))
	}
	return nil
}

// shownFlags is the flag set of the last help printed: how the man page
// and the completion scripts learn a command's flags from the command.
var shownFlags *pflag.FlagSet

// helpText is a command's one help text, shown by `help CMD`, `CMD --help`
// and the man page: the hand-written usage with an "Options:" section made
// from the flag set put before its example.
func helpText(c *command, fs *pflag.FlagSet) string {
	u := trimUsage(c.usage)
	if fs == nil || strings.Contains(u, "\nOptions:\n") {
		return u
	}
	opts := "Options:\n" + fs.FlagUsages() + otherSpellings(fs)
	if i := strings.Index(u, "\nExample"); i >= 0 {
		return u[:i+1] + opts + u[i:]
	}
	return u + "\n" + opts
}

// otherSpellings lists the hidden flags of fs (other tools' spellings,
// kept out of the option list above): every option a command accepts is
// named in its help.
func otherSpellings(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	shown.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			g := *f
			g.Hidden = false
			shown.AddFlag(&g)
		}
	})
	if !shown.HasFlags() {
		return ""
	}
	return "Also accepted, as other tools spell them:\n" + shown.FlagUsages()
}

// wantArgs checks the number of positional arguments; the error names what
// is missing by the command's usage line.
func wantArgs(fs *pflag.FlagSet, min, max int) error {
	n := fs.NArg()
	if n >= min && (max < 0 || n <= max) {
		return nil
	}
	what := "missing arguments"
	if n > min && max >= 0 {
		what = fmt.Sprintf("too many arguments (%d)", n)
	}
	if u := usageLine(fs.Name()); u != "" {
		return usageError(fmt.Errorf("%s\n%s", what, u))
	}
	return usageError(errors.New(what))
}

// usageLine is the first line of a command's help ("Usage: cryptvol ...").
func usageLine(name string) string {
	c := commands[name]
	if c == nil {
		if sub, ok := strings.CutPrefix(name, "archive "); ok {
			c = archiveSubcommands[sub]
		}
	}
	if c == nil {
		return ""
	}
	line, _, _ := strings.Cut(trimUsage(c.usage), "\n")
	return line
}

// suggestFlag adds "did you mean --X?" to pflag's unknown-flag error.
func suggestFlag(fs *pflag.FlagSet, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := closest(name, names); s != "" {
		return fmt.Errorf("%s (did you mean --%s?)", msg, s)
	}
	return err
}

// didYouMean is "; did you mean X?" for a mistyped word, or "".
func didYouMean(word string, candidates []string) string {
	if s := closest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// closest is the candidate nearest to word by edit distance, when it is
// near enough to be a typo (at most a third of the word wrong), or one that
// word is a prefix of.
func closest(word string, candidates []string) string {
	best, bestD := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD || (d == bestD && best == "" && strings.HasPrefix(c, word)) {
			best, bestD = c, d
		}
	}
	if best == "" {
		for _, c := range candidates {
			if len(word) >= 3 && strings.HasPrefix(c, word) {
				return c
			}
		}
	}
	return best
}

// editDistance is the edit distance of a and b counting a swap of two
// neighbours as one edit (the commonest typo).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
