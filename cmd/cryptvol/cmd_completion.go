package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// `cryptvol completion bash|zsh|fish`: completion scripts made from the
// registered commands and their flag sets (the same ones their help lists),
// so they never fall behind.

func init() {
	register(&command{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish)",
		usage: `Usage: cryptvol completion bash|zsh|fish

Prints a script that completes cryptvol's commands, subcommands and flags,
and file names where an argument is a file.

Example:
  source <(cryptvol completion bash)        # in ~/.bashrc
  cryptvol completion zsh > "${fpath[1]}/_cryptvol"
  cryptvol completion fish > ~/.config/fish/completions/cryptvol.fish
`,
		run: runCompletion,
	})
}

func runCompletion(ctx context.Context, a *app, args []string) error {
	c := commands["completion"]
	fl := newFlags(c, a)
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	w := bufio.NewWriter(a.stdout)
	defer w.Flush()
	spec := completionSpec()
	switch fl.Arg(0) {
	case "bash":
		writeBashCompletion(w, spec)
	case "zsh":
		writeZshCompletion(w, spec)
	case "fish":
		writeFishCompletion(w, spec)
	default:
		return usageError(fmt.Errorf("unknown shell %q (want bash, zsh or fish)", fl.Arg(0)))
	}
	return nil
}

// completed is what the scripts know of one command.
type completed struct {
	name, summary string
	flags         []string            // --long and -s spellings
	subs          []string            // subcommands (archive, keyslot, ...)
	subFlags      map[string][]string // archive's subcommands have their own
}

// subcommandsOf are the words that may follow a command.
var subcommandsOf = map[string][]string{
	"keyslot":    {"list", "dump", "add", "remove", "kill", "change"},
	"header":     {"backup", "restore"},
	"completion": {"bash", "zsh", "fish"},
}

func completionSpec() []completed {
	var out []completed
	for _, c := range visibleCommands() {
		cc := completed{name: c.name, summary: c.summary, flags: flagNames(helpOfCommand(c).flags), subs: subcommandsOf[c.name]}
		switch c.name {
		case "archive":
			cc.subs = archiveSubcommandNames()
			cc.subFlags = map[string][]string{}
			for _, s := range cc.subs {
				cc.subFlags[s] = flagNames(helpOfCommand(c, s).flags)
			}
		case "benchmark":
			cc.subs = append(sortedKinds(), "compare")
		}
		out = append(out, cc)
	}
	names := make([]string, 0, len(out))
	for _, c := range out {
		names = append(names, c.name)
	}
	out = append(out, completed{name: "help", summary: "show a command's help", subs: names, flags: []string{"--man"}})
	for alias, target := range aliases {
		for _, c := range out {
			if c.name == target {
				c.name, c.summary = alias, "same as "+target
				out = append(out, c)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func writeBashCompletion(w io.Writer, spec []completed) {
	var names []string
	for _, c := range spec {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, `# bash completion for cryptvol: source <(cryptvol completion bash)
_cryptvol() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" sub="" i n=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
        -*) ;;
        *) if [[ -z "$cmd" ]]; then cmd="${COMP_WORDS[i]}"; n=$i; elif [[ -z "$sub" ]]; then sub="${COMP_WORDS[i]}"; fi ;;
        esac
    done
    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "-q --quiet -v --verbose %s" -- "$cur"))
        return
    fi
    local opts="" subs=""
    case "$cmd" in
`, strings.Join(names, " "))
	for _, c := range spec {
		fmt.Fprintf(w, "    %s)\n        subs=%q\n        opts=%q\n", c.name, strings.Join(c.subs, " "), strings.Join(c.flags, " "))
		if len(c.subFlags) > 0 {
			fmt.Fprint(w, "        case \"$sub\" in\n")
			for _, s := range c.subs {
				fmt.Fprintf(w, "        %s) opts=%q ;;\n", s, strings.Join(c.subFlags[s], " "))
			}
			fmt.Fprint(w, "        esac\n")
		}
		fmt.Fprint(w, "        ;;\n")
	}
	fmt.Fprint(w, `    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n "$subs" && -z "$sub" && $COMP_CWORD -eq $((n + 1)) ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -o bashdefault -F _cryptvol cryptvol
`)
}

// zshQuote puts s in single quotes for zsh.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeZshCompletion(w io.Writer, spec []completed) {
	fmt.Fprint(w, "#compdef cryptvol\n# zsh completion for cryptvol: cryptvol completion zsh > \"${fpath[1]}/_cryptvol\"\n_cryptvol() {\n    local -a cmds opts subs\n    cmds=(\n")
	for _, c := range spec {
		fmt.Fprintf(w, "        %s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, "    )\n    if (( CURRENT == 2 )); then\n        _describe -t commands 'cryptvol command' cmds\n        return\n    fi\n    case $words[2] in\n")
	for _, c := range spec {
		fmt.Fprintf(w, "    %s)\n        subs=(%s)\n        opts=(%s)\n", c.name, strings.Join(c.subs, " "), strings.Join(c.flags, " "))
		if len(c.subFlags) > 0 {
			fmt.Fprint(w, "        case $words[3] in\n")
			for _, s := range c.subs {
				fmt.Fprintf(w, "        %s) opts=(%s) ;;\n", s, strings.Join(c.subFlags[s], " "))
			}
			fmt.Fprint(w, "        esac\n")
		}
		fmt.Fprint(w, "        ;;\n")
	}
	fmt.Fprint(w, `    esac
    if [[ $PREFIX == -* ]]; then
        compadd -a opts
    elif (( CURRENT == 3 && ${#subs} )); then
        compadd -a subs
    else
        _files
    fi
}
if (( $+functions[compdef] )) && [[ $funcstack[1] != _cryptvol ]]; then
    compdef _cryptvol cryptvol
else
    _cryptvol "$@"
fi
`)
}

// fishQuote puts s in single quotes for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func writeFishCompletion(w io.Writer, spec []completed) {
	fmt.Fprint(w, "# fish completion for cryptvol: cryptvol completion fish > ~/.config/fish/completions/cryptvol.fish\ncomplete -c cryptvol -s q -l quiet -d 'no progress lines'\ncomplete -c cryptvol -s v -l verbose -d 'say what is tried and done'\n")
	for _, c := range spec {
		fmt.Fprintf(w, "complete -c cryptvol -f -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "complete -c cryptvol -f -n %s -a %s\n", cond, fishQuote(strings.Join(c.subs, " ")))
		}
		for _, f := range c.flags {
			if long, ok := strings.CutPrefix(f, "--"); ok {
				fmt.Fprintf(w, "complete -c cryptvol -n %s -l %s\n", cond, long)
			} else {
				fmt.Fprintf(w, "complete -c cryptvol -n %s -s %s\n", cond, strings.TrimPrefix(f, "-"))
			}
		}
	}
}
