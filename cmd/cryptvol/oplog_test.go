package main

// The cryptvol-oplog test command: cryptvol with its container's writes
// and flushes streamed to a log, for the power-cut explorers that record
// a process (the mount daemon) rather than a call.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
)

// streamDevice logs each write and flush to w as it passes (kind 'w' or
// 'f', offset, length, data) before passing it on, so that a test reading
// the log after an fsync returned sees the flush that answered it.
type streamDevice struct {
	volume.Device
	mu sync.Mutex
	w  io.Writer
}

func (s *streamDevice) log(kind byte, off int64, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var h [13]byte
	h[0] = kind
	binary.LittleEndian.PutUint64(h[1:], uint64(off))
	binary.LittleEndian.PutUint32(h[9:], uint32(len(p)))
	s.w.Write(append(h[:], p...))
}

func (s *streamDevice) WriteAt(p []byte, off int64) (int, error) {
	s.log('w', off, p)
	return s.Device.WriteAt(p, off)
}

func (s *streamDevice) Sync() error {
	s.log('f', 0, nil)
	return s.Device.Sync()
}

// runOplog is the cryptvol-oplog test command.
func runOplog() int {
	f, err := os.OpenFile(os.Getenv("CRYPTVOL_TEST_OPLOG"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 99
	}
	defer f.Close()
	testWrapDevice = func(d volume.Device) volume.Device { return &streamDevice{Device: d, w: f} }
	return run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
}

// readOplog decodes a streamed log.
func readOplog(t *testing.T, path string) []crashsim.Op {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	var ops []crashsim.Op
	for {
		var h [13]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return ops
		}
		p := make([]byte, binary.LittleEndian.Uint32(h[9:]))
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatalf("the op log is cut: %v", err)
		}
		if h[0] == 'f' {
			ops = append(ops, crashsim.Op{Flush: true})
		} else {
			ops = append(ops, crashsim.Op{Off: int64(binary.LittleEndian.Uint64(h[1:])), Data: p})
		}
	}
}
