package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/serve/nfs"
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

// modeNFS is the mount table's mode of 'serve --nfs' (MountPoint is the
// URL), beside mount.ModeWebDAV.
const modeNFS = "nfs"

// protoServer is what runServe needs of either server.
type protoServer struct {
	url      string
	readOnly bool
	done     <-chan error
	shutdown func(context.Context) error
	print    func()
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
	var srv protoServer
	mode := mount.ModeWebDAV
	if *useNFS {
		mode = modeNFS
		srv, err = startNFS(a, fsys, cfg, *asJSON)
	} else {
		srv, err = startWebDAV(a, fsys, cfg, *asJSON)
	}
	if err != nil {
		fsys.Close()
		return usageError(err)
	}
	table := mount.DefaultTable()
	info := v.Info()
	e := mount.Entry{PID: os.Getpid(), Volume: volPath, MountPoint: srv.url, Mode: mode,
		ReadOnly: srv.readOnly, Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second)}
	terr := table.Init()
	if terr == nil {
		terr = table.Put(e)
	}
	if terr != nil {
		a.warnf("%v ('cryptvol list' will not show this server)", terr)
	}
	defer table.Remove(e.PID)
	srv.print()

	var serveErr error
	select {
	case serveErr = <-srv.done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		serveErr = srv.shutdown(sctx)
		cancel()
	}
	if err := fsys.Close(); serveErr == nil && !v.ProtectionTriggered() {
		serveErr = err
	}
	if err := v.Close(); serveErr == nil {
		serveErr = err
	}
	if v.ProtectionTriggered() {
		// Each refused request failed then (WebDAV 403, NFS3ERR_PERM or
		// NFS3ERR_ACCES); what the filesystem still had to write on
		// closing (the NFS server syncs it) was refused too.
		if errors.Is(serveErr, volume.ErrProtected) {
			serveErr = nil
		}
		a.warnf("hidden volume protection triggered: a write that would have landed in the hidden volume was refused, and every write after it; the hidden volume is intact, the outer filesystem may need a check")
	}
	if serveErr != nil {
		return withCode(exitIO, serveErr)
	}
	if !*asJSON {
		fmt.Fprintln(a.stderr, "Stopped; the volume is closed.")
	}
	return nil
}

func startWebDAV(a *app, fsys filesystem.FS, cfg webdav.Config, asJSON bool) (protoServer, error) {
	logger := log.New(a.stderr, "cryptvol serve: ", log.LstdFlags)
	cfg.Logger = func(r *http.Request, err error) {
		if err != nil && a.verbose {
			logger.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		}
	}
	s, err := webdav.Start(fsys, cfg)
	if err != nil {
		return protoServer{}, err
	}
	return protoServer{url: s.URL, readOnly: s.ReadOnly, done: s.Done(), shutdown: s.Shutdown,
		print: func() { printServing(a, s, asJSON) }}, nil
}

func startNFS(a *app, fsys filesystem.FS, wcfg webdav.Config, asJSON bool) (protoServer, error) {
	s, err := nfs.Start(fsys, nfs.Config{Listen: wcfg.Listen, ReadOnly: wcfg.ReadOnly, Verbose: a.verbose})
	if err != nil {
		return protoServer{}, err
	}
	return protoServer{url: s.URL, readOnly: s.ReadOnly, done: s.Done(), shutdown: s.Shutdown,
		print: func() { printServingNFS(a, s, asJSON) }}, nil
}

// printServingNFS tells where the export is and how to mount it.
func printServingNFS(a *app, s *nfs.Server, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{
			"url": s.URL, "export": s.Export, "port": s.Port, "pid": os.Getpid(), "read_only": s.ReadOnly,
		})
		fmt.Fprintf(a.stdout, "%s\n", b)
		return
	}
	access := "read-write"
	if s.ReadOnly {
		access = "read-only"
	}
	host, _, _ := net.SplitHostPort(s.Addr)
	fmt.Fprintf(a.stdout, "Serving over NFSv3 (%s) at %s\n  export (the only secret NFSv3 has): %s\n", access, s.URL, s.Export)
	fmt.Fprintf(a.stdout, "Connect: macOS 'mount -t nfs -o vers=3,tcp,port=%d,mountport=%d %s:%s DIR'; Linux 'mount -t nfs -o vers=3,tcp,port=%d,mountport=%d,nolock %s:%s DIR' or libnfs 'nfs-ls %s'.\nPress Ctrl-C to stop.\n",
		s.Port, s.Port, host, s.Export, s.Port, s.Port, host, s.Export, s.URL)
}

// printServing tells the user where the files are and how to connect.
func printServing(a *app, s *webdav.Server, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{
			"url": s.URL, "user": s.User, "password": s.Password, "pid": os.Getpid(),
			"read_only": s.ReadOnly, "fingerprint": s.Fingerprint,
		})
		fmt.Fprintf(a.stdout, "%s\n", b)
		return
	}
	access := "read-write"
	if s.ReadOnly {
		access = "read-only"
	}
	fmt.Fprintf(a.stdout, "Serving over WebDAV (%s) at %s\n  user:     %s\n  password: %s\n", access, s.URL, s.User, s.Password)
	if s.Fingerprint != "" {
		fmt.Fprintf(a.stdout, "  certificate (self-signed) SHA-256 fingerprint: %s\n", s.Fingerprint)
	}
	fmt.Fprintf(a.stdout, "Connect: Windows 'net use Z: %s /user:%s %s'; macOS Finder, Connect to Server; Linux 'gio mount %s'.\nPress Ctrl-C to stop.\n",
		s.URL, s.User, s.Password, davURL(s.URL))
}

// davURL is the URL as GVfs names WebDAV (dav://, davs://).
func davURL(u string) string {
	if len(u) > 5 && u[:5] == "https" {
		return "davs" + u[5:]
	}
	return "dav" + u[4:]
}
