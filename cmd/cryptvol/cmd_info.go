package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/internal/progress"
)

func init() {
	register(&command{
		name:    "info",
		summary: "unlock a volume and print its header facts (--json)",
		usage: `Usage: cryptvol info VOLUME [--json] [--show-key [--batch]] [credentials]

Unlocks VOLUME (trying every format, PRF and cipher unless --type, --hash or
--encryption narrow the search) and prints what its header says, and the
filesystem found inside. Nothing is written.

JSON (--json) fields (those marked * only where they apply):
  format               veracrypt, truecrypt, luks1, luks2, bitlk or fvault2
  version              the header version (0 where the format has none)
  min_program_version* VeraCrypt/TrueCrypt: the oldest program that opens it
  encryption           the cipher or cascade (AES, AES-Twofish, aes, ...)
  mode                 the sector mode (xts, cbc, lrw, cbc-essiv:sha256, ...)
  hash                 the PRF or KDF (SHA-512, Whirlpool, argon2id, ...)
  iterations*          its iteration count (PBKDF2) or time cost (Argon2)
  memory_kib*          Argon2: its memory cost in KiB
  parallelism*         Argon2: its threads
  pim*                 VeraCrypt: the PIM given
  key_size             master key bits
  sector_size          encryption sector bytes
  data_offset          where the data area starts, in bytes
  data_size            the data area's bytes
  hidden               whether this is a hidden volume
  system*              system encryption
  hidden_volume_size*  the hidden volume's size, where the header records it
  backup_header*       the backup header opened it (the primary is damaged)
  read_only*           the volume was opened read-only
  uuid*                LUKS (and BitLocker, FileVault 2): the volume's UUID
  label*               LUKS2: the header label
  keyslot*             LUKS: the keyslot that opened it
  filesystem*          the filesystem inside: type, label, serial or uuid, version
  master_key*          --show-key: the master key, hex
  details*             format-specific facts (keyslots, segments, flags) as
                       a list of {key, value}

Example:
  cryptvol info secret.hc --password-file pw.txt --json
`,
		run: runInfo,
	})
}

func runInfo(ctx context.Context, a *app, args []string) error {
	c := commands["info"]
	fs := newFlags(c, a)
	cf := addCredFlags(fs)
	asJSON := fs.Bool("json", false, "print the fields below as one JSON object")
	showKey := fs.Bool("show-key", false, "also print the master key (asks for confirmation unless --batch)")
	batch := fs.Bool("batch", false, "do not ask for confirmation")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 1, 1); err != nil {
		return err
	}
	if *showKey && !*batch {
		if cf.nonInteractive || !stdinIsTerminal() {
			return usageError(errors.New("--show-key prints secret key material: add --batch to confirm when not on a terminal"))
		}
	}
	v, err := openVolume(ctx, a, fs, cf, fs.Arg(0), true)
	if err != nil {
		return err
	}
	defer v.Close()
	info := v.Info()
	info.Filesystem = probeFilesystem(v)
	if *showKey {
		if !*batch {
			ok, err := confirm(a, "Print the master key to the screen? Anyone who sees it can decrypt the volume [y/N]: ")
			if err != nil || !ok {
				return withCode(exitUsage, errors.New("not confirmed"))
			}
		}
		mk := v.MasterKey()
		info.MasterKey = hex.EncodeToString(mk)
		clear(mk)
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	info.WriteText(a.stdout)
	return nil
}

// humanSize prints a byte count with a binary unit.
func humanSize(n int64) string { return progress.FormatSize(n) }

// confirm asks a yes/no question on the terminal.
func confirm(a *app, q string) (bool, error) {
	fmt.Fprint(a.stderr, q)
	var line string
	_, err := fmt.Fscanln(a.stdin, &line)
	if err != nil && err.Error() != "unexpected newline" {
		return false, err
	}
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes", nil
}
