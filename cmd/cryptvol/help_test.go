package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// runCaptured runs the CLI in-process and returns its exit code and output.
func runCaptured(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &app{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

// TestEveryCommandHelp checks that every registered command (and every
// archive subcommand) has one help text with Usage, Options and an
// Example, the same from `help CMD` and `CMD --help`.
func TestEveryCommandHelp(t *testing.T) {
	type entry struct{ args []string }
	var all [][]string
	for _, c := range visibleCommands() {
		all = append(all, []string{c.name})
	}
	for _, sub := range archiveSubcommandNames() {
		all = append(all, []string{"archive", sub})
	}
	if len(all) < 20 {
		t.Fatalf("only %d commands registered", len(all))
	}
	for _, words := range all {
		name := strings.Join(words, " ")
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			code, viaHelp, stderr := runCaptured(append([]string{"help"}, words...)...)
			if code != 0 {
				t.Fatalf("help %s: exit %d: %s", name, code, stderr)
			}
			code, viaFlag, stderr := runCaptured(append(append([]string(nil), words...), "--help")...)
			if code != 0 {
				t.Fatalf("%s --help: exit %d: %s", name, code, stderr)
			}
			if viaHelp != viaFlag {
				t.Errorf("help %s and %s --help differ:\n%s\n----\n%s", name, name, viaHelp, viaFlag)
			}
			if !strings.HasPrefix(viaHelp, "Usage: cryptvol "+name) {
				t.Errorf("help %s does not start with its usage line:\n%s", name, viaHelp)
			}
			usage := strings.Index(viaHelp, "Usage:")
			opts := strings.Index(viaHelp, "\nOptions:\n")
			example := strings.Index(viaHelp, "\nExample")
			if opts < 0 || example < 0 || !(usage < opts && opts < example) {
				t.Errorf("help %s lacks Usage, Options and Example in that order (at %d, %d, %d):\n%s", name, usage, opts, example, viaHelp)
			}
			// The example runs the command itself.
			if ex := viaHelp[max(example, 0):]; !strings.Contains(ex, "cryptvol "+words[0]) {
				t.Errorf("help %s: the example does not show the command:\n%s", name, ex)
			}
			if c := commands[words[0]]; len(words) == 1 && c.name != "enc" {
				if h := helpOfCommand(c); h.flags == nil || !strings.Contains(viaHelp, "--help") {
					t.Errorf("help %s: options are not generated from its flag set", name)
				}
			}
		})
	}
}

// TestInterruptedText: after Ctrl-C the user reads "interrupted" (or the
// command's own account of what it had done), never "context canceled".
func TestInterruptedText(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"context canceled", "interrupted"},
		{"writing /a: context canceled", "interrupted"},
		{"interrupted: 3 of 5 files copied", "interrupted: 3 of 5 files copied"},
		{"interrupted: 3 of 5 files copied: context canceled", "interrupted: 3 of 5 files copied"},
	} {
		if got := interruptedText(errors.New(c.err)); got != c.want {
			t.Errorf("interruptedText(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestReadmeWalk checks that testdata/script/readme_walk.txtar runs every
// example line of README.md (each indented line that calls ./cryptvol), in
// order, exactly as written, and nothing else through sh -c.
func TestReadmeWalk(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "    ") && strings.Contains(l, "./cryptvol") {
			want = append(want, l[4:])
		}
	}
	script, err := os.ReadFile("testdata/script/readme_walk.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(string(script), "\n") {
		if rest, ok := strings.CutPrefix(l, "exec sh -c '"); ok && strings.HasPrefix(rest, "./cryptvol") {
			got = append(got, strings.ReplaceAll(strings.TrimSuffix(rest, "'"), "''", "'"))
		}
	}
	if len(want) < 10 {
		t.Fatalf("only %d example lines found in README.md", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("readme_walk.txtar does not run the README's examples as written:\nREADME:\n%s\n\nscript:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}
