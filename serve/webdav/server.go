package webdav

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Config is what Start serves and where.
type Config struct {
	// Listen is the address, "127.0.0.1:0" (a free loopback port) when
	// empty. An address that is not loopback is served over TLS only.
	Listen string
	// TLSCert and TLSKey are PEM files; when empty and Listen is not
	// loopback, a self-signed pair is made and its fingerprint reported.
	TLSCert, TLSKey string
	ReadOnly        bool
	Logger          func(r *http.Request, err error)
}

// Server is a running WebDAV server.
type Server struct {
	URL, User, Password string
	// Fingerprint is the SHA-256 fingerprint of a generated certificate
	// ("" when serving plain http or the user's certificate).
	Fingerprint string
	// ReadOnly says whether writes are refused (asked for, or the
	// filesystem cannot be written in process).
	ReadOnly bool

	srv  *http.Server
	done chan error
}

// newPassword is 128 random bits in hex: a credential made for one serve.
func newPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Start listens and serves fsys until Shutdown.
func Start(fsys filesystem.FS, c Config) (*Server, error) {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	pw, err := newPassword()
	if err != nil {
		return nil, err
	}
	s := &Server{User: "cryptvol", Password: pw, done: make(chan error, 1)}
	_, isWriter := fsys.(filesystem.Writer)
	s.ReadOnly = c.ReadOnly || !isWriter
	h, err := NewHandler(fsys, Options{User: s.User, Password: s.Password, ReadOnly: s.ReadOnly, Logger: c.Logger})
	if err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v", c.Listen, err)
	}
	switch {
	case c.TLSCert != "":
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, err
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case !IsLoopback(c.Listen):
		cert, fp, err := SelfSigned([]string{host})
		if err != nil {
			return nil, err
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.Fingerprint = fp
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
		scheme = "https"
	}
	addr := ln.Addr().(*net.TCPAddr)
	urlHost := host
	if urlHost == "" || net.ParseIP(urlHost) != nil && net.ParseIP(urlHost).IsUnspecified() {
		urlHost = "localhost"
	}
	s.URL = fmt.Sprintf("%s://%s/", scheme, net.JoinHostPort(urlHost, fmt.Sprint(addr.Port)))
	// No write timeout: a GET of a large file may take long. Headers
	// must come promptly.
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Shutdown stops accepting requests and waits (until ctx ends) for those
// under way, so that a PUT being written is finished and synced.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Done reports the server's end if it stops by itself (a listener
// error).
func (s *Server) Done() <-chan error { return s.done }
