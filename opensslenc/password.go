package opensslenc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Line limits of OpenSSL's readers: -pass sources read one line of at most
// 1023 bytes, -kfile at most 127.
const (
	passLineMax  = 1023
	kfileLineMax = 127
)

// PasswordSource is where ReadPassword may look.
type PasswordSource struct {
	// Stdin is read by "stdin" (one line, byte by byte, so the data that
	// follows stays unread); nil means os.Stdin.
	Stdin io.Reader
	// Getenv looks up "env:" variables; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
}

// ReadPassword reads the password as `openssl enc -pass ARG` does:
// pass:TEXT, env:VAR, file:PATH or fd:N (their first line), or stdin. As
// in OpenSSL, only the newline is removed from a line read, so a
// carriage return before it stays part of the password.
func (s PasswordSource) ReadPassword(arg string) ([]byte, error) {
	kind, rest, _ := strings.Cut(arg, ":")
	switch {
	case kind == "pass" && strings.Contains(arg, ":"):
		return []byte(rest), nil
	case kind == "env" && strings.Contains(arg, ":"):
		get := s.Getenv
		if get == nil {
			get = os.LookupEnv
		}
		v, ok := get(rest)
		if !ok {
			return nil, fmt.Errorf("-pass env:%s: no such environment variable", rest)
		}
		return []byte(v), nil
	case kind == "file" && strings.Contains(arg, ":"):
		f, err := os.Open(rest)
		if err != nil {
			return nil, fmt.Errorf("-pass file: %w", err)
		}
		defer f.Close()
		return passLine(f, arg)
	case kind == "fd" && strings.Contains(arg, ":"):
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-pass fd:%s: not a file descriptor number", rest)
		}
		f := os.NewFile(uintptr(n), "fd:"+rest)
		if f == nil {
			return nil, fmt.Errorf("-pass fd:%s: not an open file descriptor", rest)
		}
		return passLine(f, arg)
	case arg == "stdin":
		in := s.Stdin
		if in == nil {
			in = os.Stdin
		}
		return passLine(in, arg)
	}
	return nil, fmt.Errorf("-pass %q: want pass:TEXT, env:VAR, file:PATH, fd:N or stdin", arg)
}

// passLine reads OpenSSL's first line: up to passLineMax bytes, cut at
// the first newline; an empty source is an error, an empty line is not.
func passLine(r io.Reader, arg string) ([]byte, error) {
	line, n, err := readLine(r, passLineMax)
	if err != nil {
		return nil, fmt.Errorf("-pass %s: %w", arg, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("-pass %s: nothing to read", arg)
	}
	line, _, _ = strings.Cut(line, "\n")
	return []byte(line), nil
}

// ReadKeyFile reads the password of -kfile FILE: its first line (at most
// 127 bytes) with trailing carriage returns and newlines removed.
func ReadKeyFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-kfile: %w", err)
	}
	defer f.Close()
	line, _, err := readLine(f, kfileLineMax)
	if err != nil {
		return nil, fmt.Errorf("-kfile %s: %w", name, err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("-kfile %s: zero length password", name)
	}
	return []byte(line), nil
}

// readLine reads byte by byte up to and including the first newline, or
// max bytes, so nothing after the line is consumed.
func readLine(r io.Reader, max int) (string, int, error) {
	var b strings.Builder
	var c [1]byte
	for b.Len() < max {
		n, err := r.Read(c[:])
		if n == 1 {
			b.WriteByte(c[0])
			if c[0] == '\n' {
				break
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", 0, err
		}
	}
	return b.String(), b.Len(), nil
}
