package main

// VeraCrypt's and Unix's other names for commands, so a user's habits and
// scripts work: `cryptvol umount DIR`, and VeraCrypt's text-mode shapes
// `cryptvol [--text] [OPTIONS] --mount VOLUME DIR`, `-d|--dismount DIR`
// and `-l|--list`.

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
			return cmd, out
		}
	}
	return name, args
}
