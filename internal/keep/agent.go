//go:build unix || windows

package keep

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// SocketName is the agent's socket in RuntimeDir.
const SocketName = "unlock-agent.sock"

// agent is the client side of the per-user agent.
type agent struct {
	dir  string
	path string
	args []string
}

func openAgent(o Options) (Store, error) {
	return &agent{dir: RuntimeDir(), path: o.AgentPath, args: o.AgentArgs}, nil
}

// StopAgent empties the agent serving dir, if one does, which then exits.
func StopAgent(dir string) error {
	_, err := (&agent{dir: dir}).DeleteAll()
	return err
}

func (a *agent) Where() string {
	return "the cryptvol agent (socket " + filepath.Join(a.dir, SocketName) + ")"
}

// request is one call; the secret of a put travels in its own frame.
type request struct {
	Op    string        `json:"op"` // put, get, delete, list, delete-all
	File  volume.FileID `json:"file"`
	Entry *Entry        `json:"entry,omitempty"`
}

type response struct {
	Err     string  `json:"err,omitempty"`
	Found   bool    `json:"found,omitempty"`
	Count   int     `json:"count,omitempty"`
	Entry   *Entry  `json:"entry,omitempty"`
	Entries []Entry `json:"entries,omitempty"`
}

// writeFrame writes a length-prefixed frame.
func writeFrame(w io.Writer, b []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(n[:]); err != nil || len(b) == 0 {
		// No empty write: the peer may have its answer and be gone.
		return err
	}
	_, err := w.Write(b)
	return err
}

// maxFrame bounds what either side reads.
const maxFrame = 1 << 20

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return nil, fmt.Errorf("keep: frame of %d bytes", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		clear(b)
		return nil, err
	}
	return b, nil
}

func (a *agent) sock() string { return filepath.Join(a.dir, SocketName) }

// call sends one request; startAgent starts the agent if none answers. A
// request that met an agent on its way out (it answered "exiting", closed
// the connection unanswered, or was gone right after it answered a start)
// goes again, to the next agent.
func (a *agent) call(req request, secret []byte, startAgent bool) (*response, []byte, error) {
	for try := 1; ; try++ {
		resp, sec, err := a.callOnce(req, secret, startAgent)
		// A put that found no agent even after starting one met an
		// agent that answered the start and then exited: go again too.
		var gone errAgentGone
		if try < 20 && (errors.As(err, &gone) || startAgent && errors.As(err, new(errNoAgent))) {
			time.Sleep(time.Duration(try) * 5 * time.Millisecond)
			continue
		}
		return resp, sec, err
	}
}

// errAgentGone: the agent exited while it had the request.
type errAgentGone struct{ err error }

func (e errAgentGone) Error() string { return "the agent did not answer: " + e.err.Error() }
func (e errAgentGone) Unwrap() error { return e.err }

func (a *agent) callOnce(req request, secret []byte, startAgent bool) (*response, []byte, error) {
	c, err := net.DialTimeout("unix", a.sock(), 2*time.Second)
	if err != nil && startAgent && a.path != "" {
		if err = a.launch(); err == nil {
			c, err = net.DialTimeout("unix", a.sock(), 2*time.Second)
		}
	}
	if err != nil {
		return nil, nil, errNoAgent{err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	head, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	if err := writeFrame(c, head); err != nil {
		return nil, nil, errAgentGone{err}
	}
	if err := writeFrame(c, secret); err != nil {
		return nil, nil, errAgentGone{err}
	}
	r := bufio.NewReader(c)
	rb, err := readFrame(r)
	if err != nil {
		return nil, nil, errAgentGone{err}
	}
	var resp response
	if err := json.Unmarshal(rb, &resp); err != nil {
		return nil, nil, fmt.Errorf("the agent's answer: %w", err)
	}
	sec, err := readFrame(r)
	if err != nil {
		return nil, nil, fmt.Errorf("the agent did not answer: %w", err)
	}
	if resp.Err == errExiting {
		return nil, nil, errAgentGone{errors.New("it was exiting")}
	}
	if resp.Err != "" {
		clear(sec)
		return nil, nil, errors.New("agent: " + resp.Err)
	}
	return &resp, sec, nil
}

// errNoAgent: no agent runs (so nothing is unlocked).
type errNoAgent struct{ err error }

func (e errNoAgent) Error() string { return "no cryptvol agent is running: " + e.err.Error() }

// launch starts the agent in the background and waits for its socket. An
// agent that exits at once (another one holds the lock: it answers soon,
// or it is exiting) is started again until one answers. When another
// agent answers while the one started here is still starting, launch
// waits for it to find the lock taken and exit: left behind, it would
// run on after the command, recreate the runtime directory and, once the
// other agent had gone, serve nothing until its idle time ran out.
func (a *agent) launch() error {
	deadline := time.Now().Add(5 * time.Second)
	answered := false
	for time.Now().Before(deadline) {
		pid, exited, err := a.start()
		if err != nil {
			return err
		}
		for running := true; running && time.Now().Before(deadline); {
			if c, err := net.Dial("unix", a.sock()); err == nil {
				server := peerPID(c)
				c.Close()
				if server == 0 || server == pid {
					return nil // ours serves, or this system cannot tell
				}
				answered = true
			}
			select {
			case <-exited:
				if answered {
					return nil
				}
				running = false
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if answered {
		return nil
	}
	return errors.New("the agent did not start within 5 s")
}

// start starts one agent process and returns its pid; the channel closes
// when it exits.
func (a *agent) start() (int, <-chan struct{}, error) {
	cmd := &exec.Cmd{Path: a.path, Args: a.args, Env: os.Environ()}
	cmd.SysProcAttr = detached()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, nil, err
	}
	defer devnull.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("starting the agent: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }() // reaped even if we still run
	return cmd.Process.Pid, exited, nil
}

func (a *agent) Put(e *Entry) error {
	meta := *e
	meta.Secret = nil
	_, _, err := a.call(request{Op: "put", File: e.File, Entry: &meta}, e.Secret, true)
	return err
}

func (a *agent) Get(id volume.FileID) (*Entry, error) {
	resp, sec, err := a.call(request{Op: "get", File: id}, nil, false)
	if errors.As(err, new(errNoAgent)) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !resp.Found || resp.Entry == nil {
		clear(sec)
		return nil, ErrNotFound
	}
	e := resp.Entry
	e.Secret = sec
	return e, nil
}

func (a *agent) Delete(id volume.FileID) (bool, error) {
	resp, _, err := a.call(request{Op: "delete", File: id}, nil, false)
	if errors.As(err, new(errNoAgent)) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return resp.Found, nil
}

func (a *agent) List() ([]Entry, error) {
	resp, _, err := a.call(request{Op: "list"}, nil, false)
	if errors.As(err, new(errNoAgent)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return resp.Entries, nil
}

func (a *agent) DeleteAll() (int, error) {
	resp, _, err := a.call(request{Op: "delete-all"}, nil, false)
	if errors.As(err, new(errNoAgent)) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// ServeAgent is the agent process (`cryptvol unlock-agent`): it listens on
// the socket in RuntimeDir, keeps entries in memory until they are deleted
// or time out, and returns when it holds nothing, after idle (so a start
// whose put never came does not leave it running), or when ctx ends.
func ServeAgent(ctx context.Context, idle time.Duration) error {
	harden()
	dir := RuntimeDir()
	if err := privateDir(dir); err != nil {
		return err
	}
	sock := filepath.Join(dir, SocketName)
	// One agent at a time: the one that holds the lock file. Two commands
	// that found no agent each start one; without the lock the second
	// removed the first one's socket and took its place, and what the
	// first held was lost. A new agent waits while an old one finishes
	// exiting.
	lock, err := os.OpenFile(filepath.Join(dir, agentLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("agent lock: %w", err)
	}
	defer lock.Close()
	if !tryLockFile(lock) {
		return errors.New("an agent already runs")
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		return errors.New("an agent already runs")
	}
	os.Remove(sock) // a stale socket of an agent that died
	l, err := listenPrivate(sock)
	if err != nil {
		return err
	}
	s := &server{entries: map[volume.FileID]*served{}, empty: make(chan struct{}, 1)}
	var handlers sync.WaitGroup
	defer handlers.Wait() // every accepted request is answered before the exit
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		timer := time.NewTimer(idle)
		defer timer.Stop()
		for {
			// From the close on a put is refused (the client retries
			// with the next agent): an entry put into an exiting agent
			// was lost with it, although the put had succeeded.
			select {
			case <-ctx.Done():
				s.close(true)
			case <-s.empty:
				if !s.close(false) {
					continue
				}
			case <-timer.C:
				if !s.close(false) {
					continue
				}
			}
			// The path goes first, so that an agent started from now
			// on never has its socket removed by this one.
			os.Remove(sock)
			l.Close()
			return
		}
	}()
	defer s.wipeAll()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || s.count() == 0 {
				return nil
			}
			return err
		}
		if !peerIsOwner(c) {
			c.Close()
			continue
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			s.handle(c)
		}()
	}
}

type served struct {
	e     Entry
	timer *time.Timer
}

type server struct {
	mu      sync.Mutex
	entries map[volume.FileID]*served
	empty   chan struct{}
	closing bool // empty and about to exit: puts are refused
}

// errExiting is the answer to a put that reached an agent on its way out.
const errExiting = "exiting"

// agentLockName is the file in RuntimeDir whose lock the serving agent
// holds.
const agentLockName = "unlock-agent.lock"

// close marks the server as exiting if it holds nothing (or if force),
// and says whether it did.
func (s *server) close(force bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) > 0 && !force {
		return false
	}
	s.closing = true
	return true
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// removeLocked wipes and drops an entry; s.mu is held.
func (s *server) removeLocked(id volume.FileID) bool {
	x, ok := s.entries[id]
	if !ok {
		return false
	}
	x.timer.Stop()
	unlockMemory(x.e.Secret)
	x.e.Wipe()
	delete(s.entries, id)
	if len(s.entries) == 0 {
		select {
		case s.empty <- struct{}{}:
		default:
		}
	}
	return true
}

func (s *server) wipeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.entries {
		s.removeLocked(id)
	}
}

func (s *server) handle(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	head, err := readFrame(r)
	if err != nil {
		return
	}
	secret, err := readFrame(r)
	if err != nil {
		return
	}
	var req request
	var resp response
	var out []byte
	if err := json.Unmarshal(head, &req); err != nil {
		resp.Err = "malformed request"
	}
	s.mu.Lock()
	switch {
	case resp.Err != "":
	case req.Op == "put" && s.closing:
		resp.Err = errExiting
	case req.Op == "put" && req.Entry != nil:
		s.removeLocked(req.File)
		e := *req.Entry
		e.Secret = secret
		secret = nil
		lockMemory(e.Secret)
		id := req.File
		x := &served{e: e}
		x.timer = time.AfterFunc(time.Duration(timeoutSeconds(e.Expires))*time.Second, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.entries[id] == x {
				s.removeLocked(id)
			}
		})
		s.entries[id] = x
	case req.Op == "get":
		if x, ok := s.entries[req.File]; ok {
			meta := x.e
			meta.Secret = nil
			resp.Found, resp.Entry = true, &meta
			out = x.e.Secret
		}
	case req.Op == "delete":
		resp.Found = s.removeLocked(req.File)
	case req.Op == "list":
		for _, x := range s.entries {
			meta := x.e
			meta.Secret = nil
			resp.Entries = append(resp.Entries, meta)
		}
		sort.Slice(resp.Entries, func(i, j int) bool { return resp.Entries[i].Expires.Before(resp.Entries[j].Expires) })
	case req.Op == "delete-all":
		for id := range s.entries {
			s.removeLocked(id)
			resp.Count++
		}
	default:
		resp.Err = "unknown request " + req.Op
	}
	// Answer under the lock: a concurrent delete must not wipe out while
	// it is written.
	defer s.mu.Unlock()
	clear(secret)
	b, _ := json.Marshal(resp)
	if writeFrame(c, b) == nil {
		writeFrame(c, out)
	}
}

// privateDir makes dir (mode 0700) or checks that it is this user's and
// closed to others.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("agent directory: %w", err)
	}
	return checkPrivate(dir)
}
