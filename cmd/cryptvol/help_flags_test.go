package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// optionWord is an option as help texts spell one: -k, --password-file,
// --volume-type=hidden (the value is cut off).
var optionWord = regexp.MustCompile(`(^|[\s(\[|,'"/])(--?[a-zA-Z][a-zA-Z0-9-]*)`)

// otherCommand is a command line quoted in a help text that is not this
// command's: 'cryptvol mount --raw', cryptsetup luksFormat --type luks1,
// `openssl enc -pbkdf2`. Its options belong to that command.
var otherCommand = regexp.MustCompile(`'cryptvol [^']*'|(cryptsetup|openssl|veracrypt|mkfs\.[a-z0-9]+|fsck\.[a-z0-9]+|e2fsck|dislocker|ntfs-3g|ntfsfix|mkntfs|mount|truncate|dd)( [a-zA-Z0-9.,=/_-]+)+`)

// helpOptions lists the options a help text names, outside the command
// lines of other commands it quotes.
func helpOptions(name, text string) map[string]bool {
	own := "'cryptvol " + name
	text = otherCommand.ReplaceAllStringFunc(text, func(s string) string {
		if strings.HasPrefix(s, own+" ") || s == own+"'" {
			return s
		}
		return ""
	})
	names := map[string]bool{}
	for _, m := range optionWord.FindAllStringSubmatch(text, -1) {
		names[m[2]] = true
	}
	return names
}

// acceptedOptions lists every spelling fs parses, hidden ones included.
func acceptedOptions(fs *pflag.FlagSet) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		names["--"+f.Name] = true
		if f.Shorthand != "" {
			names["-"+f.Shorthand] = true
		}
	})
	return names
}

// TestHelpNamesExactlyTheAcceptedOptions: for every command, every option
// its help text names is one its flag set accepts, and every option the
// flag set accepts is named in the help text (issue 29, item 5: help
// create listed --recovery-password, --startup-key and --type bitlk,
// which create ignored or refused). enc takes openssl's option syntax and
// has no flag set.
func TestHelpNamesExactlyTheAcceptedOptions(t *testing.T) {
	type entry struct {
		name string
		c    *command
		sub  []string
	}
	var all []entry
	for _, c := range visibleCommands() {
		if c.name == "enc" {
			continue
		}
		all = append(all, entry{c.name, c, nil})
	}
	for _, sub := range archiveSubcommandNames() {
		all = append(all, entry{"archive " + sub, commands["archive"], []string{sub}})
	}
	for _, e := range all {
		t.Run(strings.ReplaceAll(e.name, " ", "_"), func(t *testing.T) {
			h := helpOfCommand(e.c, e.sub...)
			if h.flags == nil {
				t.Fatalf("help %s: no flag set was shown", e.name)
			}
			named := helpOptions(e.name, h.text)
			accepted := acceptedOptions(h.flags)
			overview := map[string]bool{}
			if e.name == "archive" { // the overview of the subcommands names theirs
				for _, sub := range archiveSubcommandNames() {
					for o := range acceptedOptions(helpOfCommand(e.c, sub).flags) {
						overview[o] = !accepted[o]
					}
				}
			}
			var unknown, unnamed []string
			for o := range named {
				if !accepted[o] && !overview[o] {
					unknown = append(unknown, o)
				}
			}
			for o := range accepted {
				if !named[o] {
					unnamed = append(unnamed, o)
				}
			}
			sort.Strings(unknown)
			sort.Strings(unnamed)
			if len(unknown) > 0 {
				t.Errorf("help %s names options %s accepts none of: %v", e.name, e.name, unknown)
			}
			if len(unnamed) > 0 {
				t.Errorf("%s accepts options its help never names: %v", e.name, unnamed)
			}
		})
	}
}

// TestCreateHelpDescribesCreating: help create words its options for a new
// volume and lists none of the opening-only ones (issue 29, item 5: it
// said --hidden "open[s] the hidden volume", --hash "only try", and listed
// --type bitlk/fvault2, --recovery-password, --startup-key and --system,
// which create ignored or refused).
func TestCreateHelpDescribesCreating(t *testing.T) {
	h := helpOfCommand(commands["create"])
	opts := h.text[strings.Index(h.text, "\nOptions:\n"):]
	for _, bad := range []string{"open the", "only try", "bitlk", "fvault2", "--recovery-password", "--startup-key", "--system", "--mount-options", "--bekfile"} {
		if strings.Contains(opts, bad) {
			t.Errorf("help create's options say %q:\n%s", bad, opts)
		}
	}
	for _, name := range []string{"recovery-password", "startup-key", "bekfile", "system", "mount-options", "protect-hidden"} {
		if h.flags.Lookup(name) != nil {
			t.Errorf("create accepts --%s, which has nothing to do when creating", name)
		}
	}
	for _, o := range []string{"--hidden", "--hash", "--encryption", "--type"} {
		line := optionLine(opts, o)
		if !strings.Contains(line, "new volume") && !strings.Contains(line, "create") {
			t.Errorf("help create: %s is not worded for creating: %q", o, line)
		}
	}
}

// optionLine is the line of an Options section that lists option o.
func optionLine(opts, o string) string {
	for _, l := range strings.Split(opts, "\n") {
		f := strings.Fields(strings.NewReplacer(",", " ", "[", " ").Replace(l))
		if len(f) > 0 && (f[0] == o || len(f) > 1 && f[1] == o) {
			return l
		}
	}
	return ""
}
