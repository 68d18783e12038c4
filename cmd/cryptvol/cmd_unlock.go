package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/volume"
)

func init() {
	register(&command{
		name:    "unlock",
		summary: "unlock a volume once for the commands that follow (until lock or --timeout)",
		usage: `Usage: cryptvol unlock VOLUME [--timeout 15m] [credentials]

Unlocks VOLUME and keeps it unlocked, so that ls, get, put, rm, mkdir, mv,
df, mount, info and export on it ask for no password and derive no key,
until 'cryptvol lock VOLUME' (or 'cryptvol lock --all') or the timeout.
Giving a command credentials anyway opens the volume with them instead.

What is kept is the unlocked header (the master keys, the cipher and where
the data area is), never the password, and never on disk: on Linux in the
kernel keyring (a key "cryptvol:..." in your user keyring, with the
timeout set in the kernel), elsewhere in a cryptvol agent process that only
you can reach. It is bound to the file (device, inode, size and its header
sectors): a copy of the file, another volume put in its place or a new
password (a rewritten header) is not unlocked.

What it protects from: other users of the machine. The kept keys are
readable only by processes of your own uid — not by another uid, even one
that shares your session keyring (the kernel key grants nothing to a mere
possessor), nor through the agent's socket (mode 0600 in a 0700 directory).
What it does not protect from: root, and any program running as you, which
can read the keys as cryptvol itself does. Lock volumes you no longer use.

A password that opens the hidden volume keeps the hidden volume unlocked.
Unlocking a volume that is unlocked already extends its timeout.
'cryptvol list' shows the unlocked volumes and when they lock.

Examples:
  cryptvol unlock secret.hc --timeout 1h
  cryptvol ls secret.hc /
  cryptvol lock secret.hc
`,
		run: runUnlock,
	})
	register(&command{
		name:    "lock",
		summary: "forget an unlocked volume's keys (or --all)",
		usage: `Usage: cryptvol lock VOLUME... | --all

Locks volumes unlocked with 'cryptvol unlock': their keys are removed, and
the next command on them asks for the password again. Mounts keep running
(unmount them with 'cryptvol unmount'). Name the volumes or give --all,
not both.

Example:
  cryptvol lock --all
`,
		run: runLock,
	})
	register(&command{
		name:    "unlock-agent",
		summary: "the background process that keeps unlocked volumes where there is no kernel keyring",
		hidden:  true,
		usage: `Usage: cryptvol unlock-agent

Started by 'cryptvol unlock' where the kernel keyring is not available; it
exits when it holds no volume.
`,
		run: runUnlockAgent,
	})
}

// openStore opens where unlocked volumes are kept.
func openStore() (keep.Store, error) {
	// The agent is this program again; argv[0] stays as it was run, so
	// that a multi-call binary (the test binary of testscript) still
	// knows it is cryptvol.
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return keep.Open(keep.Options{AgentPath: exe, AgentArgs: []string{os.Args[0], "unlock-agent"}})
}

func runUnlock(ctx context.Context, a *app, args []string) error {
	c := commands["unlock"]
	fs := newFlags(c, a)
	cf := addCredFlags(fs)
	cf.addProtectFlags(fs)
	timeout := fs.Duration("timeout", 15*time.Minute, "lock again after this long (e.g. 90s, 15m, 8h)")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 1, 1); err != nil {
		return err
	}
	if *timeout < time.Second {
		return usageError(fmt.Errorf("--timeout %v: want at least 1s", *timeout))
	}
	path, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return err
	}
	st, err := openStore()
	if err != nil {
		return withCode(exitIO, err)
	}
	expires := time.Now().Add(*timeout).Round(time.Second)
	if e, _ := cachedEntry(st, fs, cf, path); e != nil {
		// Unlocked already: a new timeout, no password.
		defer e.Wipe()
		if err := keep.Extend(st, e, path, expires); err == nil {
			fmt.Fprintf(a.stdout, "%s was unlocked already; it now locks at %s (in %v).\n", path, expires.Format("15:04:05"), *timeout)
			return nil
		}
	}
	v, err := openVolume(ctx, a, fs, cf, path, true)
	if err != nil {
		return err
	}
	defer v.Close()
	snap, err := v.Snapshot()
	if err != nil {
		return withCode(exitDamaged, err)
	}
	defer snap.Wipe()
	if err := keep.Keep(st, path, v, snap, expires); err != nil {
		return withCode(exitIO, err)
	}
	info := v.Info()
	what := info.Format + ", " + info.Encryption + ", " + info.Hash
	if info.Hidden {
		what += ", hidden volume"
	}
	fmt.Fprintf(a.stdout, "Unlocked %s (%s) until %s (%v), in %s.\nLock it now with: cryptvol lock %s\n",
		path, what, expires.Format("15:04:05"), *timeout, st.Where(), fs.Arg(0))
	return nil
}

func runLock(ctx context.Context, a *app, args []string) error {
	c := commands["lock"]
	fs := newFlags(c, a)
	all := fs.Bool("all", false, "lock every unlocked volume")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	// Names and --all exclude each other: `lock vol --all` may mean
	// either, and locking more than was named is not a guess to make.
	switch {
	case *all && fs.NArg() > 0:
		return usageError(errors.New("--all locks every unlocked volume: do not also name volumes (or leave out --all)"))
	case !*all && fs.NArg() == 0:
		return usageError(errors.New("name the volumes to lock, or give --all"))
	}
	st, err := openStore()
	if err != nil {
		return withCode(exitIO, err)
	}
	if *all {
		n, err := st.DeleteAll()
		if err != nil {
			return withCode(exitIO, err)
		}
		fmt.Fprintf(a.stdout, "Locked %d volume(s).\n", n)
		return nil
	}
	for _, p := range fs.Args() {
		ok, err := keep.Lock(st, p)
		if err != nil {
			return withCode(exitIO, err)
		}
		if ok {
			fmt.Fprintf(a.stdout, "Locked %s.\n", p)
		} else {
			fmt.Fprintf(a.stdout, "%s was not unlocked.\n", p)
		}
	}
	return nil
}

func runUnlockAgent(ctx context.Context, a *app, args []string) error {
	return keep.ServeAgent(ctx, 10*time.Second)
}

// credentialsGiven reports whether the command line names credentials,
// which then win over a kept unlock.
func credentialsGiven(fs *pflag.FlagSet) bool {
	for _, name := range []string{"password-file", "password", "keyfile", "pim", "header", "key-slot", "keyfile-offset", "keyfile-size"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return true
		}
	}
	return false
}

// cachedEntry returns the kept unlock of path that fits the flags: no
// credentials given, the hidden volume if --hidden, a protected outer
// volume if --protect-hidden. nil when there is none.
// (The error is always nil; mount's caller still takes it.)
func cachedEntry(st keep.Store, fs *pflag.FlagSet, cf *credFlags, path string) (*keep.Entry, error) {
	if credentialsGiven(fs) {
		return nil, nil
	}
	return keep.Lookup(st, path, keep.Want{Hidden: cf.hidden, ProtectHidden: cf.protectHidden}), nil
}

// openUnlocked opens path from its kept unlock, or returns nil, nil when
// there is none that fits (the caller then asks for credentials). A kept
// unlock that no longer matches the file (replaced, or a new header) is
// removed.
func openUnlocked(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, readOnly bool) (*volume.Volume, error) {
	st, err := openStore()
	if err != nil {
		return nil, nil
	}
	e, _ := cachedEntry(st, fs, cf, path)
	if e == nil {
		return nil, nil
	}
	defer e.Wipe()
	want := keep.Want{Hidden: cf.hidden, ProtectHidden: cf.protectHidden}
	v, err := e.Reopen(ctx, st, path, want, volume.Options{ReadOnly: readOnly, Warn: func(msg string) { a.warnf("%s", msg) }})
	switch {
	case errors.Is(err, keep.ErrNotFound):
		return nil, nil
	case errors.Is(err, volume.ErrNotSameVolume):
		a.warnf("%s is not the file that was unlocked (replaced, copied or given a new header): locked it", path)
		return nil, nil
	}
	return v, err
}

// unlockedJSON is one line of 'list --unlocked --json'.
type unlockedJSON struct {
	Volume  string    `json:"volume"`
	Format  string    `json:"format,omitempty"`
	Hidden  bool      `json:"hidden"`
	Expires time.Time `json:"locks_at"`
}

// listUnlocked prints the volumes kept unlocked; gap puts an empty line
// before the table (after the mounts).
func listUnlocked(a *app, asJSON, gap bool) error {
	st, err := openStore()
	if err != nil {
		if asJSON {
			return writeJSON(a.stdout, []unlockedJSON{})
		}
		return nil // nothing can be unlocked here
	}
	es, err := st.List()
	if err != nil {
		return withCode(exitIO, err)
	}
	if asJSON {
		out := []unlockedJSON{}
		for _, e := range es {
			out = append(out, unlockedJSON{Volume: e.Volume, Format: e.Format, Hidden: e.Hidden, Expires: e.Expires})
		}
		return writeJSON(a.stdout, out)
	}
	if len(es) == 0 {
		return nil
	}
	if gap {
		fmt.Fprintln(a.stdout)
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "UNLOCKED VOLUME\tFORMAT\tVOLUME TYPE\tLOCKS AT")
	for _, e := range es {
		kind := "normal"
		if e.Hidden {
			kind = "hidden"
		}
		left := time.Until(e.Expires).Round(time.Second)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s (in %v)\n", e.Volume, e.Format, kind, e.Expires.Format("15:04:05"), max(left, 0))
	}
	return w.Flush()
}
