package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

func init() {
	register(&command{
		name:    "mount",
		summary: "mount a volume's files as a folder (FUSE, no root), or its raw data area",
		usage: `Usage: cryptvol mount VOLUME DIR [--raw [--loop]] [--read-only] [--foreground]
                      [--via fuse|winfsp|webdav|nfs] [credentials]

Makes the volume appear at DIR, an existing empty directory:

  (default)     the files inside as an ordinary folder, read-write, without
                root (FUSE; fusermount3 from fuse3). FAT is served by
                cryptvol itself; ext2/3/4 and NTFS by their own user-space
                drivers, fuse2fs (package fuse2fs) and ntfs-3g (package
                ntfs-3g), run on the decrypted data area that cryptvol
                serves in a private raw mount ('cryptvol list' shows them
                as "driver"). A setuid-root ntfs-3g (Debian's) run by a user
                needs user_allow_other in /etc/fuse.conf.
  --raw         DIR holds one file, "volume": the decrypted data area, byte
                for byte, read-write. Format or inspect it with any tool
                (mkfs.ext4 DIR/volume, mtools, e2fsck ...).
  --loop        (root, Linux) as --raw, with the file kept in a private
                directory, attached to a loop device and mounted on DIR by
                the kernel (ext4 and any filesystem the kernel knows), the
                way TrueCrypt and VeraCrypt mount on Linux.

The mount runs in a background process and is ready when the command
returns; 'cryptvol unmount DIR' ends it, 'cryptvol list' shows what is
mounted. With --foreground it stays in the foreground until Ctrl-C.
SIGINT and SIGTERM unmount cleanly: every write that returned is in the
container, open files are committed, and a busy mount is detached.

The mount holds the volume's lock until it ends (exclusive unless
--read-only): other cryptvol commands on the volume are refused with exit 5
and told where it is mounted; use the folder.

Writes are queued and applied in order while the next ones arrive, so an
error such as a full volume is reported by the next write, close or fsync
of the same file; fsync returns once the data is on the disk.

Front ends (--via; the default is the first one this system has, none of
them needs admin rights):
  fuse     Linux (always the default there), macOS with macFUSE or FUSE-T:
           everything above.
  winfsp   Windows with WinFsp installed (winfsp-x64.dll on the DLL path,
           or under the InstallDir that HKLM\SOFTWARE\WinFsp records): DIR
           is a drive letter (Z:) or a folder that does not exist yet. FAT,
           exFAT and ext2/3/4 read-write, NTFS read-only; the files are the
           mounting user's. On ext2/3/4 a file that existed before is
           changed only by replacing it (truncate or write anew); writing
           into its middle fails.
  webdav   Windows without WinFsp: a WebDAV serve on 127.0.0.1 and the exact
           'net use' line that attaches it (DIR a drive letter, else the
           next free one). It offers Digest, which Windows' WebClient uses
           over plain http as it is; Basic over http would need the
           registry value BasicAuthLevel=2, and the WebClient refuses files
           larger than FileSizeLimitInBytes (50000000 bytes unless raised).
  nfs      macOS without FUSE: an NFSv3 serve on 127.0.0.1 and the
           'mount_nfs' line for the system's own client (DIR a folder you
           own); the random export path is the only secret NFSv3 has.
The winfsp, webdav and nfs mounts stay in the foreground until Ctrl-C or
'cryptvol unmount VOLUME'; --raw, --loop and --allow-other are FUSE's. See
'cryptvol help serve' for the servers' durability and security.

Every format opens: VeraCrypt, TrueCrypt, LUKS1/2, BitLocker (--raw: the NTFS
or FAT inside for ntfs-3g or mtools), FileVault 2, hidden volumes (--hidden),
and --protect-hidden makes an outer volume refuse writes that would land in
its hidden volume (the writing program gets EPERM and the filesystem then
refuses all writes until unmounted, as TrueCrypt does).

Examples:
  cryptvol mount secret.hc ~/secret --password-file pw.txt
  cryptvol mount disk.luks /mnt/data --raw --loop
  cryptvol mount outer.hc ~/outer --protect-hidden --hidden-password-file hpw
  cryptvol mount secret.hc Z: --password-file pw.txt          (Windows)
  cryptvol mount secret.hc ~/secret --via nfs --password-file pw.txt
`,
		run: runMount,
	})
	register(&command{
		name:    "unmount",
		summary: "unmount a volume mounted with 'cryptvol mount' (flushing every write)",
		usage: `Usage: cryptvol unmount DIR|VOLUME|--all [--force]

Unmounts the volume mounted at DIR (or the mount of VOLUME), or with --all
every volume mounted with 'cryptvol mount' (VeraCrypt's 'cryptvol -d'
without a DIR does the same), and waits until each background process has
written everything to the container and exited.
A mount with files in use is refused (exit 4) unless --force, which commits
open files as they are, detaches the mount point and makes the programs
still using it get I/O errors.

Example:
  cryptvol unmount ~/secret
`,
		run: runUnmount,
	})
	register(&command{
		name:    "list",
		summary: "list the volumes mounted with 'cryptvol mount' and those unlocked with 'cryptvol unlock'",
		usage: `Usage: cryptvol list [--json] [--unlocked]

One line per mount: mount point, volume, mode (files, raw or loop),
read-write or read-only, and the background process's PID; then one line
per volume unlocked with 'cryptvol unlock': the volume, normal or hidden,
and when it locks. --json prints the mounts (with --unlocked, the unlocked
volumes) as a JSON array; --unlocked alone lists only the unlocked volumes.

Example:
  cryptvol list --json
`,
		run: runList,
	})
}

// mountFlags are mount's own options.
type mountFlags struct {
	raw, loop, readOnly, foreground, allowOther, debug bool
	fstype                                             string
	via                                                string // --via: the front end (mount.ChooseFrontEnd)
}

func runMount(ctx context.Context, a *app, args []string) error {
	c := commands["mount"]
	fs := newFlags(c, a)
	cf := addCredFlags(fs)
	cf.addProtectFlags(fs)
	var mf mountFlags
	fs.BoolVar(&mf.raw, "raw", false, "serve the decrypted data area as DIR/volume instead of the files")
	fs.BoolVar(&mf.loop, "loop", false, "root, Linux: attach the raw data area to a loop device and mount it on DIR (implies --raw)")
	fs.StringVar(&mf.fstype, "fstype", "", "with --loop: the kernel filesystem type (default: detected)")
	fs.BoolVarP(&mf.readOnly, "read-only", "r", false, "mount read-only")
	fs.BoolVarP(&mf.foreground, "foreground", "f", false, "stay in the foreground until unmounted or interrupted")
	fs.BoolVar(&mf.allowOther, "allow-other", false, "let other users see the mount (needs user_allow_other in /etc/fuse.conf)")
	fs.BoolVar(&mf.debug, "debug", false, "log every FUSE request (to stderr with --foreground, else to the mount's log)")
	fs.StringVar(&mf.via, "via", "", "front end: fuse, winfsp, webdav or nfs (default: the one this system has, see above)")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	mf.readOnly = mf.readOnly || cf.compat.readOnly // VeraCrypt's -m ro
	if err := wantArgs(fs, 2, 2); err != nil {
		return err
	}
	front, why, err := mount.ChooseFrontEnd(mf.via)
	if err != nil {
		return usageError(err)
	}
	if front != mount.FrontFUSE && !mount.IsDaemon() {
		return runMountVia(ctx, a, fs, cf, &mf, front, why, fs.Arg(0), fs.Arg(1))
	}
	if mount.IsDaemon() {
		return runMountDaemon(ctx, cf, &mf, fs.Arg(0), fs.Arg(1))
	}
	volPath, dir, err := prepareMount(cf, &mf, fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	if mf.foreground {
		if unlockedFits(fs, cf, volPath) {
			return serveMount(ctx, a, &mf, volPath, dir, func(ctx context.Context) (*volume.Volume, error) {
				return openKeptForMount(ctx, a, fs, cf, volPath, mf.readOnly)
			}, nil)
		}
		_, err := withTries(a, cf, func() (struct{}, error) {
			c, o, err := cf.resolve(a, fs, mf.readOnly)
			if err != nil {
				return struct{}{}, err
			}
			defer c.Wipe()
			o.WrapDevice = testWrapDevice // nil but in tests
			return struct{}{}, serveMount(ctx, a, &mf, volPath, dir, func(ctx context.Context) (*volume.Volume, error) {
				defer a.progressLine(&o)()
				return volume.OpenWith(ctx, volPath, c, o)
			}, nil)
		})
		return err
	}
	return startMountDaemon(ctx, a, fs, cf, &mf, args)
}

// unlockedFits reports whether the volume has a kept unlock that a mount
// with these flags would use.
func unlockedFits(fs *pflag.FlagSet, cf *credFlags, volPath string) bool {
	st, err := openStore()
	if err != nil {
		return false
	}
	e, _ := cachedEntry(st, fs, cf, volPath)
	if e == nil {
		return false
	}
	e.Wipe()
	return true
}

// openKeptForMount opens the volume from its kept unlock; the unlock may
// have been locked or have timed out since unlockedFits saw it.
func openKeptForMount(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, volPath string, readOnly bool) (*volume.Volume, error) {
	v, err := openUnlocked(ctx, a, fs, cf, volPath, readOnly)
	if v == nil && err == nil {
		err = fmt.Errorf("%w: %s was locked meanwhile: run the mount again to be asked for its password", volume.ErrWrongPassword, volPath)
	}
	return v, err
}

// prepareMount checks the options and arguments, and returns the absolute
// paths of the volume and the mount point.
func prepareMount(cf *credFlags, mf *mountFlags, vol, mnt string) (string, string, error) {
	if err := mount.Supported(); err != nil {
		return "", "", withCode(exitIO, err)
	}
	if mf.loop {
		mf.raw = true
		if runtime.GOOS != "linux" {
			return "", "", usageError(errors.New("--loop needs Linux loop devices"))
		}
		if os.Geteuid() != 0 {
			return "", "", usageError(errors.New("--loop needs root (loop devices and mount(2)); without root use the default files mount, or --raw"))
		}
	} else if mf.fstype != "" {
		return "", "", usageError(errors.New("--fstype goes with --loop"))
	}
	if mf.readOnly && cf.protectHidden {
		return "", "", usageError(errors.New("--protect-hidden guards writes, and --read-only makes none"))
	}
	volPath, dir, err := mount.MountPaths(mount.DefaultTable(), vol, mnt)
	return volPath, dir, fromMount(err)
}

// startMountDaemon resolves the credentials here (prompting if needed),
// starts the mount daemon with the same arguments, and waits until the
// mount is ready.
func startMountDaemon(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, mf *mountFlags, args []string) error {
	if volPath, err := filepath.Abs(fs.Arg(0)); err == nil && unlockedFits(fs, cf, volPath) {
		return runMountDaemonProcess(ctx, a, args, mount.DaemonSecret{Unlocked: true, Open: mount.OpenOptions{Hidden: cf.hidden, ReadOnly: mf.readOnly}})
	}
	_, err := withTries(a, cf, func() (struct{}, error) {
		return struct{}{}, startMountDaemonWith(ctx, a, fs, cf, mf, args)
	})
	return err
}

// startMountDaemonWith resolves the credentials and starts the daemon
// with them.
func startMountDaemonWith(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, mf *mountFlags, args []string) error {
	c, o, err := cf.resolve(a, fs, mf.readOnly)
	if err != nil {
		return err
	}
	defer c.Wipe()
	s := mount.NewDaemonSecret(c, o)
	if s.Protect != nil {
		defer s.Protect.Wipe()
	}
	return runMountDaemonProcess(ctx, a, args, s)
}

// runMountDaemonProcess starts the daemon, hands it s and waits until the
// mount is ready or failed. A failure to unlock comes back wrapping
// volume.ErrWrongPassword, so that withTries can ask again.
func runMountDaemonProcess(ctx context.Context, a *app, args []string, s mount.DaemonSecret) error {
	secret, err := json.Marshal(s)
	if err != nil {
		return err
	}
	defer clear(secret)
	_, err = mount.StartDaemon(ctx, append([]string{os.Args[0], "mount"}, args...), secret, a.stderr)
	var de *mount.DaemonError
	if errors.As(err, &de) {
		if de.Code == exitAuth {
			// The daemon's message already says "wrong password ...":
			// keep it as it is, only classify it.
			return authError{de.Msg}
		}
		return withCode(de.Code, errors.New(de.Msg))
	}
	return err
}

// authError is the mount daemon's failure to unlock: its message as the
// daemon printed it, classified as volume.ErrWrongPassword (exit 2, and
// withTries asks again).
type authError struct{ msg string }

func (e authError) Error() string { return e.msg }
func (e authError) Unwrap() error { return volume.ErrWrongPassword }

// runMountDaemon is the background process: credentials from the parent,
// progress back to it until the mount is ready, then a log file.
func runMountDaemon(ctx context.Context, cf *credFlags, mf *mountFlags, vol, mnt string) error {
	secret, d, err := mount.DaemonStart()
	if err != nil {
		return err
	}
	var s mount.DaemonSecret
	err = json.Unmarshal(secret, &s)
	clear(secret)
	if err != nil {
		err = fmt.Errorf("reading credentials from the parent: %v", err)
		d.Fail(err, exitIO)
		return err
	}
	defer s.Creds.Wipe()
	volPath, dir, err := prepareMount(cf, mf, vol, mnt)
	if err != nil {
		d.Fail(err, exitCodeFor(err))
		return err
	}
	o := s.Options()
	da := &app{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: d}
	o.Warn = func(msg string) { da.warnf("%s", msg) }
	o.WrapDevice = testWrapDevice // nil but in tests
	open := func(ctx context.Context) (*volume.Volume, error) { return volume.OpenWith(ctx, volPath, s.Creds, o) }
	if s.Unlocked {
		open = func(ctx context.Context) (*volume.Volume, error) {
			return openKeptForMount(ctx, da, pflag.NewFlagSet("mount", pflag.ContinueOnError), &credFlags{hidden: s.Open.Hidden}, volPath, s.Open.ReadOnly)
		}
	}
	err = serveMount(ctx, da, mf, volPath, dir, open, d)
	if err != nil {
		d.Fail(err, exitCodeFor(err)) // dropped if already ready
	}
	return err
}

// serveMount unlocks the volume, mounts it and serves until it is
// unmounted or a signal arrives (mount.Serve). d is the daemon's pipe to
// its parent (nil in the foreground).
func serveMount(ctx context.Context, a *app, mf *mountFlags, volPath, dir string, open func(context.Context) (*volume.Volume, error), d *mount.Daemon) error {
	// A terminal that goes away ends a foreground mount cleanly too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	return fromMount(mount.Serve(ctx, mount.ServeOptions{
		Volume: volPath, MountPoint: dir, Raw: mf.raw, Loop: mf.loop, FSType: mf.fstype,
		AllowOther: mf.allowOther, Debug: mf.debug, Open: open, Daemon: d,
		Messages: a.stderr, Warn: func(msg string) { a.warnf("%s", msg) },
		HelperArgs: rawHelperArgs(), Table: mount.DefaultTable(),
	}))
}

// fromMount gives a failure of package mount its exit code; other errors
// (the volume's, a cancelled context) keep theirs.
func fromMount(err error) error {
	var f *mount.Failure
	var ce *cliError
	if errors.As(err, &ce) || !errors.As(err, &f) {
		return err
	}
	switch f.Kind {
	case mount.KindUnservable:
		return withCode(exitDamaged, err)
	case mount.KindInUse:
		return withCode(exitDestroy, err)
	case mount.KindUsage:
		return usageError(err)
	case mount.KindChild:
		return withCode(f.Code, err)
	}
	return withCode(exitIO, err)
}

func runUnmount(ctx context.Context, a *app, args []string) error {
	c := commands["unmount"]
	fs := newFlags(c, a)
	force := fs.BoolP("force", "f", false, "unmount even if busy: commit open files, detach, and let their users get I/O errors")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the mount's process to finish writing")
	all := fs.Bool("all", false, "unmount every volume mounted with 'cryptvol mount'")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if *all {
		if fs.NArg() > 0 {
			return usageError(errors.New("--all unmounts every cryptvol mount: do not also name one (or leave out --all)"))
		}
	} else if err := wantArgs(fs, 1, 1); err != nil {
		return err
	}
	if err := mount.Supported(); err != nil {
		return withCode(exitIO, err)
	}
	table := mount.DefaultTable()
	if *all {
		n, err := mount.UnmountAll(ctx, table, *force, *timeout, func(e mount.Entry, err error) {
			fmt.Fprintf(a.stderr, "cryptvol unmount: %s: %v\n", e.MountPoint, err)
		})
		if n == 0 && err == nil {
			a.infof("no volume is mounted by cryptvol")
		}
		return fromMount(err)
	}
	target, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return err
	}
	e, err := table.Find(target)
	if err != nil {
		// No record (another runtime directory, or a crashed daemon):
		// unmount a cryptvol FUSE mount all the same.
		if mp, ok := mount.IsMountPoint(target); ok && strings.Contains(mp.FSType, "cryptvol") {
			return fromMount(mount.UnmountUnrecorded(target, *force))
		}
		return usageError(fmt.Errorf("%s is not mounted by cryptvol (see 'cryptvol list')", fs.Arg(0)))
	}
	return fromMount(mount.UnmountRecorded(ctx, table, e, *force, *timeout))
}

func runList(ctx context.Context, a *app, args []string) error {
	c := commands["list"]
	fs := newFlags(c, a)
	asJSON := fs.Bool("json", false, "print JSON")
	onlyUnlocked := fs.Bool("unlocked", false, "list only the volumes unlocked with 'cryptvol unlock'")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 0, 0); err != nil {
		return err
	}
	if *onlyUnlocked {
		return listUnlocked(a, *asJSON, false)
	}
	es, err := mount.DefaultTable().Entries()
	if err != nil {
		return withCode(exitIO, err)
	}
	if *asJSON {
		if es == nil {
			es = []mount.Entry{}
		}
		return writeJSON(a.stdout, es)
	}
	if len(es) == 0 {
		return listUnlocked(a, false, false)
	}
	if err := mount.WriteList(a.stdout, es); err != nil {
		return err
	}
	return listUnlocked(a, false, true)
}
