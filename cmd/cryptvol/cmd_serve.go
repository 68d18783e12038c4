package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "serve a volume's files over WebDAV or NFSv3 to the desktop's own client (no driver, no admin)",
		usage: `Usage: cryptvol serve VOLUME --webdav [--listen 127.0.0.1:0] [--read-only] [--json]
                      [--tls-cert FILE --tls-key FILE] [credentials]
       cryptvol serve VOLUME --nfs [--listen 127.0.0.1:0] [--read-only] [--json] [credentials]
       ... [--protect-hidden --hidden-password-file FILE]

Serves the files inside the volume over WebDAV (class 1 and 2: locking)
or NFSv3 until Ctrl-C, SIGTERM or 'cryptvol unmount VOLUME' ('cryptvol
list' shows the server, its URL as the mount point), holding the volume's
lock like 'mount' (a second writer is refused with exit 5). FAT, exFAT and
ext2/3/4 are served read-write (ext4 through its journal); NTFS is
read-only in process, so it is served read-only. With --protect-hidden
(and the hidden volume's credentials), a request that would write into
the hidden volume inside the outer one is refused (WebDAV 403 Forbidden, NFS
NFS3ERR_PERM), and so is every write after it until the server stops.

WebDAV: when ready it prints the URL, a user and a password made for this
serve (128 random bits), and how to connect; with --json, one line on
stdout: {"url": ..., "user": ..., "password": ..., "pid": ...}.

Durability: a client's success for PUT, MKCOL, DELETE, MOVE or COPY means
the change is on the disk (the filesystem is synced before the answer), so
killing the server loses nothing a client was told succeeded. Properties
set with PROPPATCH live only as long as the server.

Security: the server listens on loopback only unless --listen names another
address; then it serves https only, with --tls-cert/--tls-key or else a
self-signed certificate made at start, whose SHA-256 fingerprint is printed
for clients to check. Authentication is HTTP Digest (offered first) or
Basic. Windows' WebClient sends Basic over plain http only if the registry
value HKLM\SYSTEM\CurrentControlSet\Services\WebClient\Parameters
BasicAuthLevel is 2 (the default 1 allows it over https only, 0 never); it
uses Digest without any change. Its FileSizeLimitInBytes (default
50000000) caps the size of a file it transfers. No path leaves the volume.
--read-only answers every method that writes with 405.

NFS (version 3 over TCP; MOUNT and NFS on the one port printed): NFSv3 has
no real authentication, a client states its own uid. The only protection it
offers is the export path, 128 random bits made per serve and printed when
ready: MOUNT of any other path is refused, the export list is empty, and
file handles are random, so only who knows the path reaches the files; keep
it as you would a password. It listens on loopback only unless --listen
names another address, and has no TLS: on another address anyone on that
network who sees the traffic learns the path. With --json, one line on
stdout: {"url": ..., "export": ..., "port": ..., "pid": ...}; the URL is in
libnfs's form (nfs-ls, nfs-cp). Every WRITE is answered only after the
filesystem is synced (FILE_SYNC), as is every other change. On ext2/3/4 a
non-empty file that existed before the serve is changed only by replacing
it (truncate or write anew, or write another and rename it over); writing
into the middle of it is refused (FAT and exFAT allow it). --read-only
refuses every change.

Connect with:
  Windows:   net use Z: http://127.0.0.1:PORT/ /user:cryptvol PASSWORD
  macOS:     Finder, Go, Connect to Server, http://127.0.0.1:PORT/
             or NFS: mount -t nfs -o vers=3,tcp,port=PORT,mountport=PORT 127.0.0.1:/EXPORT DIR
  Linux:     gio mount dav://127.0.0.1:PORT/, or davfs2, or rclone
             or NFS: nfs-ls 'nfs://127.0.0.1/EXPORT?version=3&nfsport=PORT&mountport=PORT'

Examples:
  cryptvol serve secret.hc --webdav --password-file pw.txt
  cryptvol serve disk.luks --webdav --read-only --json
  cryptvol serve secret.hc --webdav --listen 192.0.2.10:8443
  cryptvol serve secret.hc --nfs --password-file pw.txt
  cryptvol serve disk.luks --nfs --read-only --json
`,
		run: runServe,
	})
}

func runServe(ctx context.Context, a *app, args []string) error {
	c := commands["serve"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	useWebDAV := fl.Bool("webdav", false, "serve over WebDAV")
	useNFS := fl.Bool("nfs", false, "serve over NFSv3 (the export path is the only secret)")
	var cfg webdav.Config
	fl.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "address to listen on (a port of 0 picks a free one)")
	fl.BoolVarP(&cfg.ReadOnly, "read-only", "r", false, "refuse every change")
	fl.StringVar(&cfg.TLSCert, "tls-cert", "", "serve https with this PEM certificate")
	fl.StringVar(&cfg.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	asJSON := fl.Bool("json", false, "print the URL and credentials as one line of JSON")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	switch {
	case *useNFS && *useWebDAV:
		return usageError(errors.New("say one protocol: --webdav or --nfs"))
	case !*useNFS && !*useWebDAV:
		return usageError(errors.New("say which protocol: --webdav or --nfs"))
	case *useNFS && (cfg.TLSCert != "" || cfg.TLSKey != ""):
		return usageError(errors.New("NFSv3 has no TLS: --tls-cert and --tls-key are for --webdav"))
	}
	cfg.ReadOnly = cfg.ReadOnly || cf.compat.readOnly
	volPath, err := filepath.Abs(fl.Arg(0))
	if err != nil {
		return err
	}
	volume.SetLockHolder("cryptvol serve", "")
	v, err := openVolume(ctx, a, fl, cf, volPath, cfg.ReadOnly)
	if err != nil {
		return err
	}
	defer v.Close()
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{Writable: !cfg.ReadOnly})
	if err != nil {
		return fsError(err)
	}
	if _, ok := fsys.(filesystem.Writer); !ok && !cfg.ReadOnly {
		a.warnf("%s is read-only in cryptvol: serving it read-only", fsys.Type())
	}
	err = mount.ServeProtocol(ctx, v, fsys, mount.ProtocolOptions{NFS: *useNFS, Config: cfg, JSON: *asJSON,
		Verbose: a.verbose, Out: a.stdout, Log: a.stderr, Warn: func(msg string) { a.warnf("%s", msg) },
		Volume: volPath, Table: mount.DefaultTable()})
	if err != nil {
		return fromMount(err)
	}
	if !*asJSON {
		fmt.Fprintln(a.stderr, "Stopped; the volume is closed.")
	}
	return nil
}
