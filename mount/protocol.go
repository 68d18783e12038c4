package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/serve/nfs"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

// ProtocolOptions say how ServeProtocol serves a volume's files.
type ProtocolOptions struct {
	NFS bool // NFSv3; else WebDAV
	// Config is the WebDAV server's (NFS takes its Listen and ReadOnly).
	Config  webdav.Config
	JSON    bool      // the ready message as one line of JSON
	Verbose bool      // log every request's error
	Out     io.Writer // the ready message: where, and how to connect
	Log     io.Writer // the request log under Verbose
	Warn    func(string)
	Volume  string // the container's absolute path, for the table
	Table   Table
}

// protoServer is what ServeProtocol needs of either server.
type protoServer struct {
	url      string
	readOnly bool
	done     <-chan error
	shutdown func(context.Context) error
	print    func()
}

// ServeProtocol serves fsys, the filesystem of v, over WebDAV or NFSv3
// (`cryptvol serve`) until ctx is cancelled or the server fails, recorded
// in the table meanwhile, then closes fsys and v. A server that does not
// start is KindUsage (its address or certificate was wrong).
func ServeProtocol(ctx context.Context, v *volume.Volume, fsys filesystem.FS, o ProtocolOptions) error {
	var srv protoServer
	var err error
	mode := ModeWebDAV
	if o.NFS {
		mode = ModeNFS
		srv, err = startNFS(fsys, o)
	} else {
		srv, err = startWebDAV(fsys, o)
	}
	if err != nil {
		fsys.Close()
		return fail(KindUsage, err)
	}
	info := v.Info()
	e := Entry{PID: os.Getpid(), Volume: o.Volume, MountPoint: srv.url, Mode: mode,
		ReadOnly: srv.readOnly, Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second)}
	defer record(o.Table, e, "server", o.Warn)()
	srv.print()

	var serveErr error
	select {
	case serveErr = <-srv.done:
	case <-ctx.Done():
		serveErr = shutdownWithin(srv.shutdown)
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
		if o.Warn != nil {
			o.Warn("hidden volume protection triggered: a write that would have landed in the hidden volume was refused, and every write after it; the hidden volume is intact, the outer filesystem may need a check")
		}
	}
	return fail(KindIO, serveErr)
}

func startWebDAV(fsys filesystem.FS, o ProtocolOptions) (protoServer, error) {
	logger := log.New(o.Log, "cryptvol serve: ", log.LstdFlags)
	cfg := o.Config
	cfg.Logger = func(r *http.Request, err error) {
		if err != nil && o.Verbose {
			logger.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		}
	}
	s, err := webdav.Start(fsys, cfg)
	if err != nil {
		return protoServer{}, err
	}
	return protoServer{url: s.URL, readOnly: s.ReadOnly, done: s.Done(), shutdown: s.Shutdown,
		print: func() { printServingWebDAV(o.Out, s, o.JSON) }}, nil
}

func startNFS(fsys filesystem.FS, o ProtocolOptions) (protoServer, error) {
	s, err := nfs.Start(fsys, nfs.Config{Listen: o.Config.Listen, ReadOnly: o.Config.ReadOnly, Verbose: o.Verbose})
	if err != nil {
		return protoServer{}, err
	}
	return protoServer{url: s.URL, readOnly: s.ReadOnly, done: s.Done(), shutdown: s.Shutdown,
		print: func() { printServingNFS(o.Out, s, o.JSON) }}, nil
}

// printServingNFS tells where the export is and how to mount it.
func printServingNFS(w io.Writer, s *nfs.Server, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{
			"url": s.URL, "export": s.Export, "port": s.Port, "pid": os.Getpid(), "read_only": s.ReadOnly,
		})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	access := "read-write"
	if s.ReadOnly {
		access = "read-only"
	}
	host, _, _ := net.SplitHostPort(s.Addr)
	fmt.Fprintf(w, "Serving over NFSv3 (%s) at %s\n  export (the only secret NFSv3 has): %s\n", access, s.URL, s.Export)
	fmt.Fprintf(w, "Connect: macOS 'mount -t nfs -o vers=3,tcp,port=%d,mountport=%d %s:%s DIR'; Linux 'mount -t nfs -o vers=3,tcp,port=%d,mountport=%d,nolock %s:%s DIR' or libnfs 'nfs-ls %s'.\nPress Ctrl-C to stop.\n",
		s.Port, s.Port, host, s.Export, s.Port, s.Port, host, s.Export, s.URL)
}

// printServingWebDAV tells the user where the files are and how to
// connect.
func printServingWebDAV(w io.Writer, s *webdav.Server, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{
			"url": s.URL, "user": s.User, "password": s.Password, "pid": os.Getpid(),
			"read_only": s.ReadOnly, "fingerprint": s.Fingerprint,
		})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	access := "read-write"
	if s.ReadOnly {
		access = "read-only"
	}
	fmt.Fprintf(w, "Serving over WebDAV (%s) at %s\n  user:     %s\n  password: %s\n", access, s.URL, s.User, s.Password)
	if s.Fingerprint != "" {
		fmt.Fprintf(w, "  certificate (self-signed) SHA-256 fingerprint: %s\n", s.Fingerprint)
	}
	fmt.Fprintf(w, "Connect: Windows 'net use Z: %s /user:%s %s'; macOS Finder, Connect to Server; Linux 'gio mount %s'.\nPress Ctrl-C to stop.\n",
		s.URL, s.User, s.Password, davURL(s.URL))
}

// davURL is the URL as GVfs names WebDAV (dav://, davs://).
func davURL(u string) string {
	if len(u) > 5 && u[:5] == "https" {
		return "davs" + u[5:]
	}
	return "dav" + u[4:]
}
