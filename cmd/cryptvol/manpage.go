package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// writeManPage prints cryptvol(1) in roff, made from the overview and every
// command's help text, so the page never disagrees with `help CMD`:
//
//	cryptvol help --man > cryptvol.1 && man -l cryptvol.1
func writeManPage(a *app) int {
	w := bufio.NewWriter(a.stdout)
	defer w.Flush()
	fmt.Fprint(w, `.TH CRYPTVOL 1 "" "cryptvol" "User Commands"
.SH NAME
cryptvol \- TrueCrypt, VeraCrypt and LUKS volumes without root, and their benchmark
.SH SYNOPSIS
.B cryptvol
[\fB\-q\fR|\fB\-v\fR]
.I COMMAND
[\fIARGS\fR] [\fIOPTIONS\fR]
.SH DESCRIPTION
`)
	var ov strings.Builder
	printOverview(&ov)
	roffLiteral(w, ov.String())
	fmt.Fprint(w, ".SH COMMANDS\n")
	for _, c := range visibleCommands() {
		fmt.Fprintf(w, ".SS %s\n", roffEscape(c.name))
		roffLiteral(w, helpOfCommand(c).text)
		if c.name == "archive" {
			for _, sub := range archiveSubcommandNames() {
				fmt.Fprintf(w, ".SS archive %s\n", sub)
				roffLiteral(w, helpOfCommand(c, sub).text)
			}
		}
	}
	fmt.Fprint(w, `.SH EXIT STATUS
0 success; 1 usage error (also a path in the volume that names nothing, or
for mkdir exists already, and mv of a directory into itself); 2 wrong password, keyfile or PIM, or not a
recognised volume; 3 damaged or unsupported volume; 4 I/O error; 5 refused
because it would destroy data; 6 a program the filesystem needs (its mkfs
or checker) is not installed; 130 interrupted. fsck: 0 clean, 1 everything
found was repaired, 3 errors left, 6 no checker for the filesystem installed.
.SH SEE ALSO
.BR veracrypt (1),
.BR cryptsetup (8),
.BR openssl-enc (1),
.BR fsck.fat (8)
`)
	return exitOK
}

// roffLiteral writes text as a no-fill block, so the help's own layout
// (columns, examples) stays as it is on the terminal.
func roffLiteral(w io.Writer, text string) {
	fmt.Fprint(w, ".nf\n")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, roffEscape(line))
	}
	fmt.Fprint(w, ".fi\n")
}

// roffEscape makes a line of plain text safe for roff: backslashes and
// minus signs escaped, a leading control character neutralised.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	// Beyond ASCII as groff's own escapes, so the page needs no preconv.
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return b.String()
}
