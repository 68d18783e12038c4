package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/fsprobe"
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
	volPath, err := filepath.Abs(vol)
	if err != nil {
		return "", "", err
	}
	dir, err := filepath.Abs(mnt)
	if err != nil {
		return "", "", err
	}
	if err := checkMountArgs(volPath, dir); err != nil {
		return "", "", err
	}
	if err := mount.Available(); err != nil {
		return "", "", withCode(exitIO, err)
	}
	return volPath, dir, nil
}

// checkMountArgs refuses a missing volume, a mount point that is not a
// directory or is already mounted, and a volume that is already mounted.
func checkMountArgs(volPath, dir string) error {
	if _, err := os.Stat(volPath); err != nil {
		return withCode(exitIO, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return usageError(fmt.Errorf("mount point: %w (create the directory first)", err))
	}
	if !fi.IsDir() {
		return usageError(fmt.Errorf("mount point %s is not a directory", dir))
	}
	if mp, ok := mount.IsMountPoint(dir); ok {
		return usageError(fmt.Errorf("%s is already a mount point (%s from %s)", dir, mp.FSType, mp.Source))
	}
	if e, err := mount.DefaultTable().Find(volPath); err == nil && e.Volume == volPath && e.Alive {
		return withCode(exitDestroy, fmt.Errorf("%s is already mounted at %s: mounting it twice would corrupt it", volPath, e.MountPoint))
	}
	return nil
}

// daemonSecret is what the parent hands the mount daemon: the resolved
// credentials (it may have prompted for them), never on the command line,
// and the open options that go with them.
type daemonSecret struct {
	// Unlocked says the daemon opens the volume from its kept unlock
	// (cryptvol unlock) and Creds is empty.
	Unlocked bool                `json:"unlocked,omitempty"`
	Creds    volume.Credentials  `json:"creds"`
	Protect  *volume.Credentials `json:"protect,omitempty"`
	Open     openOptions         `json:"open"`
}

// openOptions are the serialisable part of volume.Options.
type openOptions struct {
	Type, Hash, Encryption, Header string
	Hidden, System, ReadOnly       bool
}

func toOpenOptions(o volume.Options) openOptions {
	return openOptions{Type: o.Type, Hash: o.Hash, Encryption: o.Encryption, Header: o.Header,
		Hidden: o.Hidden, System: o.System, ReadOnly: o.ReadOnly}
}

func (oo openOptions) options(protect *volume.Credentials) volume.Options {
	return volume.Options{Type: oo.Type, Hash: oo.Hash, Encryption: oo.Encryption, Header: oo.Header,
		Hidden: oo.Hidden, System: oo.System, ReadOnly: oo.ReadOnly, ProtectHidden: protect}
}

// startMountDaemon resolves the credentials here (prompting if needed),
// starts the mount daemon with the same arguments, and waits until the
// mount is ready.
func startMountDaemon(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, mf *mountFlags, args []string) error {
	if volPath, err := filepath.Abs(fs.Arg(0)); err == nil && unlockedFits(fs, cf, volPath) {
		return runMountDaemonProcess(ctx, a, args, daemonSecret{Unlocked: true, Open: openOptions{Hidden: cf.hidden, ReadOnly: mf.readOnly}})
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
	s := daemonSecret{Creds: c, Protect: o.ProtectHidden, Open: toOpenOptions(o)}
	if s.Protect != nil {
		defer s.Protect.Wipe()
	}
	for _, ks := range [][]string{s.Creds.Keyfiles, protectKeyfiles(s.Protect)} {
		for i, k := range ks {
			if abs, err := filepath.Abs(k); err == nil {
				ks[i] = abs
			}
		}
	}
	return runMountDaemonProcess(ctx, a, args, s)
}

// runMountDaemonProcess starts the daemon, hands it s and waits until the
// mount is ready or failed. A failure to unlock comes back wrapping
// volume.ErrWrongPassword, so that withTries can ask again.
func runMountDaemonProcess(ctx context.Context, a *app, args []string, s daemonSecret) error {
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

func protectKeyfiles(c *volume.Credentials) []string {
	if c == nil {
		return nil
	}
	return c.Keyfiles
}

// runMountDaemon is the background process: credentials from the parent,
// progress back to it until the mount is ready, then a log file.
func runMountDaemon(ctx context.Context, cf *credFlags, mf *mountFlags, vol, mnt string) error {
	secret, d, err := mount.DaemonStart()
	if err != nil {
		return err
	}
	var s daemonSecret
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
	o := s.Open.options(s.Protect)
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
// unmounted or a signal arrives. d is the daemon's pipe to its parent (nil
// in the foreground).
func serveMount(ctx context.Context, a *app, mf *mountFlags, volPath, dir string, open func(context.Context) (*volume.Volume, error), d *mount.Daemon) error {
	// A terminal that goes away ends a foreground mount cleanly too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	// The lock on the volume, exclusive for a read-write mount, is held
	// from here until the mount ends; others are told where it is mounted.
	volume.SetLockHolder("cryptvol mount", dir)
	v, err := open(ctx)
	if err != nil {
		return err
	}
	defer v.Close()

	table := mount.DefaultTable()
	if err := table.Init(); err != nil {
		return withCode(exitIO, err)
	}
	pid := os.Getpid()
	logOut := a.stderr
	var logFile *os.File
	if d != nil {
		logFile, err = os.OpenFile(table.LogPath(pid), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return withCode(exitIO, fmt.Errorf("mount log: %w", err))
		}
		defer func() {
			logFile.Close()
			// A log nobody wrote to (or of a mount that never was) goes.
			if fi, err := os.Stat(logFile.Name()); err == nil && fi.Size() == 0 {
				os.Remove(logFile.Name())
			}
		}()
		logOut = logFile
	}
	logger := log.New(logOut, "cryptvol mount: ", log.LstdFlags)
	info := v.Info()
	e := mount.Entry{
		PID: pid, Volume: volPath, MountPoint: dir, Mode: mount.ModeFiles, ReadOnly: v.ReadOnly(),
		Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second),
	}
	if logFile != nil {
		e.Log = logFile.Name()
	}
	mo := mount.Options{ReadOnly: v.ReadOnly(), FsName: volPath, Container: volPath, AllowOther: mf.allowOther, Debug: mf.debug, Logger: logger}

	m, helper, err := startMount(ctx, v, mf, &e, table, mo)
	if err != nil {
		return err
	}
	if err := table.Put(e); err != nil {
		a.warnf("%v ('cryptvol list' will not show this mount)", err)
	}
	access := "read-write"
	if e.ReadOnly {
		access = "read-only"
	}
	if d != nil {
		d.Ready()
		// From now on everything, even a crash report, goes to the log;
		// and the daemon holds no directory busy.
		mount.RedirectStderr(logFile)
		os.Chdir("/")
	} else {
		fmt.Fprintf(a.stderr, "Mounted %s at %s (%s, %s). Press Ctrl-C or run 'cryptvol unmount %s' to unmount.\n",
			volPath, dir, describeMode(e), access, dir)
	}

	var serveErr error
	if helper != nil {
		// The helper serves the raw file and runs the driver; it ends
		// when the files are unmounted, or, told by finish, unmounts
		// them (detached if busy).
		select {
		case <-helper.child.Done():
		case <-ctx.Done():
			logger.Printf("signal received: unmounting %s", dir)
		}
		serveErr = helper.finish()
	} else {
		select {
		case <-m.Done():
			serveErr = m.Wait()
		case <-ctx.Done():
			logger.Printf("signal received: unmounting %s", dir)
			serveErr = shutdownMount(m, &e, logger)
		}
	}
	if cerr := v.Close(); serveErr == nil {
		serveErr = cerr
	}
	if e.AuxDir != "" {
		os.Remove(e.AuxDir) // the private mount point, empty again
	}
	if serveErr != nil {
		logger.Printf("unmounting: %v", serveErr)
		e.Error = serveErr.Error()
		table.Put(e)
		return withCode(exitIO, serveErr)
	}
	table.Remove(pid)
	if d == nil {
		fmt.Fprintf(a.stderr, "Unmounted %s.\n", dir)
	}
	return nil
}

func describeMode(e mount.Entry) string {
	switch e.Mode {
	case mount.ModeRaw:
		return "raw data area in " + e.RawFile
	case mount.ModeLoop:
		return fmt.Sprintf("%s on %s", e.FSType, e.LoopDevice)
	case mount.ModeDriver:
		return "files through " + e.FSType
	}
	return "files"
}

// startMount mounts in the mode the flags ask for and fills in e. The
// driver is nil unless the files are served by a stacked driver (ext2/3/4,
// NTFS); a nil *mount.Driver's Done channel never fires. A stacked driver
// normally runs under a helper process that serves the raw file (the
// *rawHelper; then the Mount and the Driver are nil).
func startMount(ctx context.Context, v *volume.Volume, mf *mountFlags, e *mount.Entry, table mount.Table, mo mount.Options) (*mount.Mount, *rawHelper, error) {
	if !mf.raw {
		if r, err := fsprobe.Probe(v); err == nil && mount.DriverName(r.Type) != "" {
			h, err := startDriverMount(ctx, v, r.Type, e, mo)
			return nil, h, err
		}
		m, err := mount.MountFiles(e.MountPoint, v, mo)
		switch {
		case errors.Is(err, mount.ErrNotFiles):
			kind := "no FAT filesystem"
			if r, perr := fsprobe.Probe(v); perr == nil {
				kind = "a " + r.Type + " filesystem"
			}
			return nil, nil, withCode(exitDamaged, fmt.Errorf("the volume holds %s, which is not served as files: mount it with --raw (and --loop, as root, for filesystems the kernel knows)", kind))
		case err != nil:
			return nil, nil, mountError(err)
		}
		return m, nil, nil
	}
	if !mf.loop {
		e.Mode = mount.ModeRaw
		e.RawFile = filepath.Join(e.MountPoint, mount.RawFileName)
		m, err := mount.MountRaw(e.MountPoint, v, mo)
		if err != nil {
			return nil, nil, mountError(err)
		}
		return m, nil, nil
	}
	m, err := startLoopMount(v, mf, e, table, mo)
	return m, nil, err
}

// startDriverMount stacks the filesystem's own user-space driver
// (fuse2fs, ntfs-3g) on the volume's raw file at the mount point: the files
// with full read-write semantics, without root. A helper process serves
// the raw file and runs the driver (see rawserve.go), so that killing this
// daemon never kills the server under a driver that still holds writes:
// the helper sees it go and unmounts the driver, which writes them first.
// No process here is both the server of the raw file and a client of the
// driver's mount on it (issue 25: that deadlocks when killed).
func startDriverMount(ctx context.Context, v *volume.Volume, fstype string, e *mount.Entry, mo mount.Options) (*rawHelper, error) {
	allowRoot, err := mount.DriverNeedsAllowRoot(fstype)
	if err != nil {
		return nil, withCode(exitDamaged, err)
	}
	e.Mode, e.FSType = mount.ModeDriver, mount.DriverName(fstype)
	h, err := startRawHelper(ctx, mo.Logger.Writer(), v, rawServeSecret{
		FSType: fstype, Container: mo.Container, AllowRoot: allowRoot,
		MountPoint: e.MountPoint, ReadOnly: mo.ReadOnly, AllowOther: mo.AllowOther,
	})
	if err != nil {
		return nil, err
	}
	e.AuxDir, e.RawFile = filepath.Dir(h.info.Raw), h.info.Raw
	return h, nil
}

// startLoopMount serves the raw file in a private directory, attaches it
// to a loop device and mounts that on the mount point.
func startLoopMount(v *volume.Volume, mf *mountFlags, e *mount.Entry, table mount.Table, mo mount.Options) (*mount.Mount, error) {
	fstype := mf.fstype
	if fstype == "" {
		fstype = kernelType(v)
		if fstype == "vfat" {
			return nil, withCode(exitDamaged, errors.New("the volume holds a FAT filesystem and this kernel has no vfat driver: mount it without --loop (cryptvol serves FAT itself)"))
		}
	}
	aux := table.AuxDir(e.PID)
	if err := os.MkdirAll(aux, 0o700); err != nil {
		return nil, withCode(exitIO, err)
	}
	e.Mode, e.AuxDir = mount.ModeLoop, aux
	e.RawFile = filepath.Join(aux, mount.RawFileName)
	m, err := mount.MountRaw(aux, v, mo)
	if err != nil {
		os.Remove(aux)
		return nil, mountError(err)
	}
	fail := func(err error) (*mount.Mount, error) {
		m.Shutdown()
		os.Remove(aux)
		return nil, err
	}
	dev, lf, err := mount.AttachLoop(e.RawFile, mo.ReadOnly, 0)
	if err != nil {
		return fail(withCode(exitIO, err))
	}
	used, err := mount.MountDevice(dev, e.MountPoint, fstype, mo.ReadOnly)
	lf.Close() // the mount holds the device now; unmounting it frees the device
	if err != nil {
		return fail(withCode(exitIO, err))
	}
	e.LoopDevice, e.FSType = dev, used
	return m, nil
}

// kernelType names the kernel driver for the filesystem in v ("" if none
// is recognised: then every driver is tried).
func kernelType(v *volume.Volume) string {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return ""
	}
	switch t := r.Type; {
	case mount.KernelHas(t):
		return t
	case strings.HasPrefix(t, "ext") && mount.KernelHas("ext4"):
		return "ext4"
	case t == "ntfs" && mount.KernelHas("ntfs3"):
		return "ntfs3"
	case t == "vfat":
		return t
	}
	return ""
}

func mountError(err error) error { return withCode(exitIO, err) }

// shutdownMount ends the mount on a signal: the kernel filesystem of a loop
// mount first (detached if busy, after a sync), then the FUSE mount.
func shutdownMount(m *mount.Mount, e *mount.Entry, logger *log.Logger) error {
	if e.Mode == mount.ModeLoop {
		mount.SyncAll()
		if err := mount.Unmount(e.MountPoint, false); err != nil && !errors.Is(err, mount.ErrNotMounted) {
			logger.Printf("%v: detaching it", err)
			mount.Unmount(e.MountPoint, true)
		}
		// The loop device lets go of the raw file once the filesystem on
		// it is gone; give it a moment to.
		for i := 0; i < 200 && m.OpenCount() > 0; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return m.Shutdown()
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
		return unmountAll(ctx, a, table, *force, *timeout)
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
			return unmountError(mount.Unmount(target, *force), target)
		}
		return usageError(fmt.Errorf("%s is not mounted by cryptvol (see 'cryptvol list')", fs.Arg(0)))
	}
	return unmountRecorded(ctx, table, e, *force, *timeout)
}

// unmountAll unmounts every mount the table records, each as `unmount DIR`
// would; one that fails does not stop the others, and the first error is
// returned once all were tried.
func unmountAll(ctx context.Context, a *app, table mount.Table, force bool, timeout time.Duration) error {
	es, err := table.Entries()
	if err != nil {
		return withCode(exitIO, err)
	}
	if len(es) == 0 {
		a.infof("no volume is mounted by cryptvol")
		return nil
	}
	var first error
	for _, e := range es {
		if err := unmountRecorded(ctx, table, e, force, timeout); err != nil {
			fmt.Fprintf(a.stderr, "cryptvol unmount: %s: %v\n", e.MountPoint, err)
			if first == nil {
				first = fmt.Errorf("%s was not unmounted: %w", e.MountPoint, err)
			}
		}
	}
	return first
}

// unmountRecorded unmounts the mount of record e and waits for its
// daemon to finish writing and exit.
func unmountRecorded(ctx context.Context, table mount.Table, e mount.Entry, force bool, timeout time.Duration) error {
	if (force || e.Mode == mount.ModeWebDAV || e.Mode == modeNFS || e.Mode == modeWinFsp) && e.Alive {
		// A WebDAV or NFS server has no mount to take away: SIGTERM makes it
		// finish the requests under way, close the volume and exit.
		if err := mount.Terminate(e.PID); err != nil {
			return withCode(exitIO, err)
		}
	} else if err := unmountEntry(e, force); err != nil {
		return err
	}
	if err := waitForExit(ctx, e.PID, timeout); err != nil {
		return err
	}
	// A daemon that could not flush leaves its record with the error.
	es, _ := table.Entries()
	for _, x := range es {
		if x.PID == e.PID && x.Error != "" {
			table.Remove(e.PID)
			return withCode(exitIO, fmt.Errorf("the mount of %s ended with an error: %s", e.Volume, x.Error))
		}
	}
	table.Remove(e.PID)
	return nil
}

// unmountEntry unmounts what the record says is mounted; the daemon sees
// its FUSE mount go, flushes and exits.
func unmountEntry(e mount.Entry, lazy bool) error {
	if e.Mode == mount.ModeLoop {
		if err := mount.Unmount(e.MountPoint, lazy); err != nil && !errors.Is(err, mount.ErrNotMounted) {
			return unmountError(err, e.MountPoint)
		}
		// The loop device releases the raw file asynchronously.
		var err error
		for i := 0; i < 200; i++ {
			err = mount.Unmount(e.AuxDir, false)
			if !errors.Is(err, mount.ErrBusy) {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if errors.Is(err, mount.ErrNotMounted) {
			err = nil
		}
		return unmountError(err, e.AuxDir)
	}
	// A user-space driver the user ran on a --raw file (ntfs-3g, fuse2fs)
	// closes it just after its own unmount returns: give it two seconds
	// before calling the mount busy.
	var err error
	for i := 0; i < 80; i++ {
		if err = mount.Unmount(e.MountPoint, lazy); !errors.Is(err, mount.ErrBusy) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if errors.Is(err, mount.ErrNotMounted) && !e.Alive {
		return nil
	}
	return unmountError(err, e.MountPoint)
}

func unmountError(err error, dir string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mount.ErrBusy):
		return withCode(exitIO, fmt.Errorf("%s is busy: close the files and shells using it (fuser -vm %s shows them), or use --force", dir, dir))
	case errors.Is(err, mount.ErrNotMounted):
		return usageError(err)
	}
	return withCode(exitIO, err)
}

// waitForExit waits until the mount's process has flushed and exited.
func waitForExit(ctx context.Context, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for mount.ProcessAlive(pid) {
		if time.Now().After(deadline) {
			return withCode(exitIO, fmt.Errorf("the mount's process (PID %d) is still running after %v; see 'cryptvol list'", pid, timeout))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
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
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MOUNTPOINT\tVOLUME\tMODE\tACCESS\tPID")
	for _, e := range es {
		access := "rw"
		if e.ReadOnly {
			access = "ro"
		}
		mode := e.Mode
		switch e.Mode {
		case mount.ModeLoop:
			mode += " (" + e.FSType + " on " + e.LoopDevice + ")"
		case mount.ModeDriver:
			mode += " (" + e.FSType + ")"
		}
		pid := fmt.Sprint(e.PID)
		switch {
		case e.Error != "":
			pid += " (failed: " + e.Error + ")"
		case !e.Alive:
			pid += " (gone: run 'cryptvol unmount " + e.MountPoint + "')"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", e.MountPoint, e.Volume, mode, access, pid)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return listUnlocked(a, false, true)
}
