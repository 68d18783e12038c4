package main

// The help of `cryptvol archive` and of each of its subcommands (the
// runners are set in cmd_archive.go's init).

const archiveUsage = `Usage: cryptvol archive SUBCOMMAND ARCHIVE [ARGS] [OPTIONS]

An encrypted archive for many small files in one file: adding files appends
them and a small index, without rewriting anything; reading one member is one
read. A crash at any moment leaves the archive as it was before or after the
change. Format: archive/SPEC.md.

Subcommands:
  create ARCHIVE [PATH...] [-r]   a new archive (optionally with files in it)
  add ARCHIVE PATH... [-r]        add files (-r: directories too); --force replaces
  ls ARCHIVE [-l]                 list the members, in the order added
  get ARCHIVE [MEMBER...] [-C DIR] extract members (all by default) under DIR
  cat ARCHIVE MEMBER...           write members to standard output
  rm ARCHIVE MEMBER... [-r]       remove members (their space returns at compact)
  compact ARCHIVE                 rewrite the live members into a new file
  verify ARCHIVE [--repair]       authenticate every byte, say what a repair
                                  would keep and remove; --repair does it

Credentials: --password-file FILE (first line; - = stdin), -p PASSWORD, a
prompt on a terminal, or -k/--keyfile FILE (32 bytes to 1 MiB of random
data, e.g. from 'cryptvol keyfile FILE') instead of a password. A password is
stretched with Argon2id (64 MiB, 3 passes, 4 lanes by default).

Run 'cryptvol archive SUBCOMMAND --help' for a subcommand's options.

Examples:
  cryptvol keyfile thumbs.key
  cryptvol archive create thumbs.cva thumbnails/ -r -k thumbs.key
  cryptvol archive add thumbs.cva new.jpg -k thumbs.key
  cryptvol archive get thumbs.cva thumbnails/new.jpg -C /tmp/out -k thumbs.key
  cryptvol archive verify thumbs.cva --password-file pw
`

// archiveSubcommands maps a subcommand to its runner and help.
var archiveSubcommands = map[string]*command{
	"create": {name: "archive create", usage: `Usage: cryptvol archive create ARCHIVE [PATH...] [-r] [--cipher NAME]
                               [--argon2-memory 64M] [--argon2-passes 3] [--argon2-lanes 4]
                               [--password-file FILE | -p PASSWORD | -k KEYFILE]

Creates a new archive (it must not exist), asking for the password twice on
a terminal. PATHs given are added as by 'archive add'. The cipher is
aes-256-gcm (default) or xchacha20-poly1305 (faster without AES
instructions).

Example:
  cryptvol archive create photos.cva --password-file pw
  cryptvol archive create thumbs.cva thumbnails/ -r -k thumbs.key
`},
	"add": {name: "archive add", usage: `Usage: cryptvol archive add ARCHIVE PATH... [-r] [--force] [--name NAME] [credentials]

Adds files to the archive, in one commit. A member's name is the path as
given, with '/' separators and any leading '/' or '../' removed (as tar
does; the contents of . or / are named from there); --name NAME names a
single PATH (and is required for -, standard input). Directories need -r and are added with everything in them;
symbolic links and special files are skipped with a warning. A member that
exists is kept (exit 5) unless --force replaces it. Modification times and
permissions are kept. If anything fails, the archive is unchanged.

Example:
  cryptvol archive add thumbs.cva new.jpg more/ -r -k thumbs.key
  generate | cryptvol archive add a.cva - --name report.txt --password-file pw
`},
	"ls": {name: "archive ls", usage: `Usage: cryptvol archive ls ARCHIVE [-l] [--json] [credentials]

Lists the members in the order they were added; -l adds mode, size and
modification time. On a damaged archive it lists what the readable parts
of the index name and exits 3; so it does when the file ends with bytes
that are not a complete commit (an interrupted append, or a file cut
short), saying whether they hold a commit that 'cryptvol archive verify
--repair' can recover.

Example:
  cryptvol archive ls thumbs.cva -l -k thumbs.key
`},
	"get": {name: "archive get", usage: `Usage: cryptvol archive get ARCHIVE [MEMBER...] [-C DIR] [--force] [credentials]

Extracts the MEMBERs (a directory member with everything under it), or the
whole archive, below DIR (default: the current directory), recreating their
paths. Every byte is authenticated before it is kept: each file is written to
a temporary name beside it and renamed when complete. A member that does not
authenticate is reported and skipped, the others are extracted, and the exit
status is then 3. Existing files are kept (exit 5, before anything is
written) unless --force. Member names that would leave DIR are refused.

Example:
  cryptvol archive get thumbs.cva -C restored -k thumbs.key
  cryptvol archive get thumbs.cva thumbnails/a.jpg -k thumbs.key
`},
	"cat": {name: "archive cat", usage: `Usage: cryptvol archive cat ARCHIVE MEMBER... [credentials]

Writes the members' contents to standard output, one after another. A
member is streamed chunk by chunk: output stops at the first chunk that does
not authenticate (exit 3).

Example:
  cryptvol archive cat notes.cva todo.txt --password-file pw
`},
	"rm": {name: "archive rm", usage: `Usage: cryptvol archive rm ARCHIVE MEMBER... [-r] [credentials]

Removes members from the archive's index, in one commit. A directory member
needs -r and goes with everything under it. The removed records stay in the
file, unreadable without the index, until 'archive compact'.

Example:
  cryptvol archive rm thumbs.cva thumbnails/old.jpg -k thumbs.key
`},
	"compact": {name: "archive compact", usage: `Usage: cryptvol archive compact ARCHIVE [credentials]

Rewrites the live members into a new file beside the archive and renames it
over the archive, so removed and replaced members stop taking space. Every
record is re-encrypted (records are bound to their file). The credentials,
the file's mode and (where permitted) its owner do not change. Until the
rename the old file is untouched; the copy of a compact that was killed is
removed by the next command on the archive.

Example:
  cryptvol archive compact thumbs.cva -k thumbs.key
`},
	"verify": {name: "archive verify", usage: `Usage: cryptvol archive verify ARCHIVE [--repair] [credentials]

Authenticates every byte of the archive: header, every commit's index
segment and footer, and every record (also of removed members), and checks
that nothing is missing or left over. Exit 0 when sound, 3 when damaged or
when the file ends with bytes that are not a complete commit; it then says
what a repair would keep and remove (members and bytes), changing nothing.
--repair does that: it keeps every member whose index entry and record
still authenticate -- also those of a commit whose footer was cut short or
damaged, and those named in the readable chunks of a damaged index -- and
drops the rest. When only a torn tail is wrong it is cut off; otherwise the
kept members are written into a new file that takes the archive's place,
as compact does.

Example:
  cryptvol archive verify thumbs.cva -k thumbs.key
  cryptvol archive verify thumbs.cva --repair -k thumbs.key
`},
}
