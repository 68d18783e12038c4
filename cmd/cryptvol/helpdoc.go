package main

import (
	"bytes"
	"io"
	"sort"

	"github.com/spf13/pflag"
)

// commandHelp is a command's help text and flag set, as its --help shows
// them (flags is nil for a command with its own option syntax, enc).
type commandHelp struct {
	cmd   *command
	text  string
	flags *pflag.FlagSet
}

// helpOfCommand runs c with --help (after sub) into a buffer.
func helpOfCommand(c *command, sub ...string) commandHelp {
	var out bytes.Buffer
	a := &app{stdin: bytes.NewReader(nil), stdout: &out, stderr: io.Discard}
	shownFlags = nil
	helpOf(a, c, sub)
	h := commandHelp{cmd: c, text: out.String(), flags: shownFlags}
	shownFlags = nil
	return h
}

// visibleCommands are the commands the overview lists, by name.
func visibleCommands() []*command {
	var cs []*command
	for _, c := range commands {
		if !c.hidden {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}

// archiveSubcommandNames are archive's subcommands, sorted.
func archiveSubcommandNames() []string {
	var names []string
	for n := range archiveSubcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// flagNames lists a flag set's visible spellings, long and short.
func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names = append(names, "--"+f.Name)
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand)
		}
	})
	return names
}
