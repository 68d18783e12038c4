package nfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"

	gonfs "github.com/willscott/go-nfs"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Config is what Start needs beside the filesystem.
type Config struct {
	// Listen is the address, "127.0.0.1:0" when empty (port 0 picks one).
	Listen string
	// ReadOnly refuses every change, whatever the filesystem allows.
	ReadOnly bool
	// Verbose lets go-nfs log its errors (to the standard logger; the
	// setting is process-wide). Otherwise it logs only a panic.
	Verbose bool
}

// Server is a running NFS server.
type Server struct {
	// URL is the libnfs form (nfs-ls, nfs-cp, nfs-cat):
	// nfs://HOST/EXPORT?version=3&nfsport=PORT&mountport=PORT; a file's URL
	// puts its path after EXPORT.
	URL string
	// Addr is the address listened on; Port its port (MOUNT and NFS both).
	Addr string
	Port int
	// Export is the secret export path ("/" and 32 hex digits).
	Export string
	// ReadOnly reports whether changes are refused.
	ReadOnly bool

	fs    *billyFS
	ln    *trackingListener
	done  chan error
	close sync.Once
}

// Start listens and serves fsys until Shutdown. The filesystem stays the
// caller's to close, after Shutdown.
func Start(fsys filesystem.FS, cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	export := "/" + hex.EncodeToString(secret)
	b := newBillyFS(fsys, cfg.ReadOnly)
	h := newHandler(b, export)
	if cfg.Verbose {
		gonfs.Log.SetLevel(gonfs.ErrorLevel)
	} else {
		gonfs.Log.SetLevel(gonfs.PanicLevel)
	}
	tl := &trackingListener{Listener: ln, conns: map[net.Conn]bool{}}
	addr := ln.Addr().(*net.TCPAddr)
	s := &Server{
		Addr: addr.String(), Port: addr.Port, Export: export, ReadOnly: b.w == nil,
		URL: fmt.Sprintf("nfs://%s%s?version=3&nfsport=%d&mountport=%d", hostForURL(addr.IP), export, addr.Port, addr.Port),
		fs:  b, ln: tl, done: make(chan error, 1),
	}
	srv := &gonfs.Server{Handler: h, ID: [8]byte(secret[:8])}
	go func() {
		err := srv.Serve(tl)
		if tl.isClosed() {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// hostForURL brackets an IPv6 address, as URLs need.
func hostForURL(ip net.IP) string {
	if ip.To4() == nil {
		return "[" + ip.String() + "]"
	}
	return ip.String()
}

// Done delivers the error that stopped serving (nil after Shutdown).
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting, drops every connection, waits for the
// operation in progress, and closes the files kept open for writing
// (syncing them). The context is unused: no operation outlasts one
// filesystem call.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.close.Do(func() {
		s.ln.closeAll()
		err = s.fs.close()
		if err == nil && s.fs.w != nil {
			err = s.fs.w.Sync()
		}
	})
	return err
}

// trackingListener remembers accepted connections, so Shutdown can end
// them: go-nfs's Serve returns when the listener closes but leaves its
// connections serving.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = true
	return &trackedConn{Conn: newExportConn(c), raw: c, l: l}, nil
}

func (l *trackingListener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.Listener.Close()
	for c := range l.conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	raw net.Conn
	l   *trackingListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.raw)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
