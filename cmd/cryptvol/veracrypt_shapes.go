package main

// VeraCrypt's and Unix's other names for commands, so a user's habits and
// scripts work: `cryptvol umount DIR`, and VeraCrypt's text-mode shapes
// `cryptvol [--text] [OPTIONS] --mount VOLUME DIR`, `-d|--dismount DIR`
// and `-l|--list`.

import "strings"

// aliases maps another name of a command to its own.
var aliases = map[string]string{
	"umount":   "unmount",
	"dismount": "unmount",
}

// veracryptActions maps VeraCrypt's action options to commands.
var veracryptActions = map[string]string{
	"--mount": "mount", "--dismount": "unmount", "-d": "unmount",
	"--list": "list", "-l": "list",
}

// veracryptShape turns `[--text|-t] [OPTIONS] ACTION ARGS` (args[0] is
// name) into the command's own name and arguments; other command lines
// are returned as they are.
func veracryptShape(name string, args []string) (string, []string) {
	rest := args
	if name == "--text" || name == "-t" {
		rest = args[1:]
	} else if _, ok := veracryptActions[name]; !ok {
		return name, args
	}
	for i, arg := range rest {
		if cmd, ok := veracryptActions[arg]; ok {
			out := []string{cmd}
			out = append(out, rest[:i]...)
			out = append(out, rest[i+1:]...)
			if cmd == "unmount" && !hasOperand(out[1:]) {
				// VeraCrypt's -d without a mount point dismounts all.
				out = append(out, "--all")
			}
			return cmd, out
		}
	}
	return name, args
}

// hasOperand reports whether unmount's arguments name a mount (a word
// that is not an option, nor --timeout's value).
func hasOperand(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--timeout":
			i++
		case a == "--":
			return i+1 < len(args)
		case !strings.HasPrefix(a, "-"):
			return true
		}
	}
	return false
}
