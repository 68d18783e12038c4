package mount

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// A mount daemon is the running binary started again, in its own session,
// with DaemonEnv set. The parent passes it a secret (the credentials) on
// file descriptor 3 and reads its progress from file descriptor 4: lines
// of JSON, messages to show, then either "ready" or an error with an exit
// code. The parent returns only then, so the mount is in place (or the
// error known) when `cryptvol mount` exits.

// DaemonEnv is the environment variable that marks a process as a mount
// daemon started by StartDaemon.
const DaemonEnv = "CRYPTVOL_MOUNT_DAEMON"

// daemonMsg is one line of the status pipe.
type daemonMsg struct {
	Msg   string `json:"msg,omitempty"`
	Ready bool   `json:"ready,omitempty"`
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
	// Info rides with Ready: what a Child tells its parent (ReadyWith).
	Info json.RawMessage `json:"info,omitempty"`
}

// DaemonError is a failure the daemon reported before it was ready.
type DaemonError struct {
	Msg  string
	Code int // the exit code the daemon chose
}

func (e *DaemonError) Error() string { return e.Msg }

// StartDaemon starts the running executable with args (args[0] is the
// program name) as a detached daemon, writes secret to it, copies its
// messages to msgs, and waits until it reports ready (returning its PID)
// or fails (a *DaemonError, or an error saying it died). Cancelling ctx
// kills it. The daemon's standard streams are /dev/null.
func StartDaemon(ctx context.Context, args []string, secret []byte, msgs io.Writer) (int, error) {
	c, err := startChild(ctx, args, secret, msgs, ChildOptions{}, false)
	if err != nil {
		return 0, err
	}
	return c.PID(), nil
}

// ChildOptions tune StartChild.
type ChildOptions struct {
	// Files are passed to the child as file descriptors 5, 6, ... (after
	// the secret on 3 and the status on 4); DaemonFile opens them there.
	Files []*os.File
	// PrivateMounts (Linux, root) starts the child in a mount namespace
	// of its own: what it mounts no other process sees, and the kernel
	// takes it down when the last process in the namespace ends.
	PrivateMounts bool
}

// A Child is a supervised helper process started by StartChild: the same
// mechanism as a mount daemon (this program again, the secret on a pipe,
// JSON status lines back), except that the parent keeps it as its child,
// keeps reading its status after "ready", and sees it end (Done). The
// child, for its part, sees the parent end through a pipe of the parent's
// that reaches EOF (see Lifeline).
type Child struct {
	cmd  *exec.Cmd
	info json.RawMessage
	done chan struct{}
	err  error // once done: how it ended

	mu   sync.Mutex
	last error // an error it reported after ready
}

// StartChild starts the running executable with args as a supervised
// child (see Child) and waits until it reports ready, as StartDaemon.
func StartChild(ctx context.Context, args []string, secret []byte, msgs io.Writer, o ChildOptions) (*Child, error) {
	return startChild(ctx, args, secret, msgs, o, true)
}

// Lifeline makes the pipe whose far end a child watches: the child gets
// r (pass it in ChildOptions.Files and close it here once started); the
// parent keeps w open for as long as it lives. When the parent closes w,
// or is killed and the kernel closes it, the child reads EOF.
func Lifeline() (r, w *os.File, err error) { return os.Pipe() }

func startChild(ctx context.Context, args []string, secret []byte, msgs io.Writer, o ChildOptions, keep bool) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start the mount daemon: %w", err)
	}
	secretR, secretW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		secretR.Close()
		secretW.Close()
		return nil, err
	}
	attr := DetachedProcAttr()
	if o.PrivateMounts {
		attr = privateMountsProcAttr(attr)
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        args,
		Env:         append(os.Environ(), DaemonEnv+"=1"),
		ExtraFiles:  append([]*os.File{secretR, statusW}, o.Files...),
		SysProcAttr: attr,
	}
	err = cmd.Start()
	secretR.Close()
	statusW.Close()
	if err != nil {
		secretW.Close()
		statusR.Close()
		return nil, fmt.Errorf("starting %s: %w", childName(keep), err)
	}
	// The pipe holds 64 KiB; a secret is far smaller, so this never
	// blocks on a daemon that does not read.
	go func() {
		secretW.Write(secret)
		secretW.Close()
	}()

	c := &Child{cmd: cmd, done: make(chan struct{})}
	type result struct {
		ready bool
		err   error
	}
	first := make(chan result, 1)
	go func() {
		defer statusR.Close()
		sc := bufio.NewScanner(statusR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		ready := false
		for sc.Scan() {
			var m daemonMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue
			}
			switch {
			case m.Msg != "":
				io.WriteString(msgs, m.Msg)
			case m.Ready && !ready:
				ready = true
				c.info = m.Info
				first <- result{ready: true}
				if !keep {
					return
				}
			case m.Error != "" && !ready:
				first <- result{err: &DaemonError{Msg: m.Error, Code: m.Code}}
				return
			case m.Error != "":
				c.mu.Lock()
				c.last = &DaemonError{Msg: m.Error, Code: m.Code}
				c.mu.Unlock()
			}
		}
		if !ready {
			first <- result{}
		}
	}()
	select {
	case r := <-first:
		if r.ready {
			if !keep {
				cmd.Process.Release()
				return c, nil
			}
			go func() {
				c.err = cmd.Wait()
				close(c.done)
			}()
			return c, nil
		}
		werr := cmd.Wait()
		if r.err != nil {
			return nil, r.err
		}
		return nil, fmt.Errorf("the %s exited before it was ready (%v)", childName(keep), werr)
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		return nil, ctx.Err()
	}
}

func childName(keep bool) string {
	if keep {
		return "helper process"
	}
	return "mount daemon"
}

// PID is the child's process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Info decodes what the child sent with ReadyWith into v.
func (c *Child) Info(v any) error { return json.Unmarshal(c.info, v) }

// Done is closed when the child has exited (and been reaped).
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait waits for the child to exit and returns why it failed: the error it
// reported after ready, else its exit status; nil for a clean exit.
func (c *Child) Wait() error {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil {
		return c.last
	}
	return c.err
}

// Kill kills the child (SIGKILL).
func (c *Child) Kill() { c.cmd.Process.Kill() }

// Daemon is the daemon's end of the pipes.
type Daemon struct {
	mu     sync.Mutex
	status *os.File
}

// IsDaemon reports whether this process was started by StartDaemon.
func IsDaemon() bool { return os.Getenv(DaemonEnv) == "1" }

// DaemonStart, in a process started by StartDaemon, reads the secret and
// returns the status channel. It unsets DaemonEnv so that programs the
// daemon runs are not mistaken for daemons.
func DaemonStart() ([]byte, *Daemon, error) {
	os.Unsetenv(DaemonEnv)
	secretR := os.NewFile(3, "secret")
	status := os.NewFile(4, "status")
	if secretR == nil || status == nil {
		return nil, nil, errors.New("not started by 'cryptvol mount' (no status pipe)")
	}
	secret, err := io.ReadAll(io.LimitReader(secretR, 1<<20))
	secretR.Close()
	if err != nil {
		status.Close()
		return nil, nil, fmt.Errorf("reading credentials from the parent: %w", err)
	}
	return secret, &Daemon{status: status}, nil
}

func (d *Daemon) send(m daemonMsg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.status == nil {
		return
	}
	b, _ := json.Marshal(m)
	d.status.Write(append(b, '\n'))
}

// Write passes text to the parent, which prints it (warnings while
// unlocking). After Ready or Fail it is dropped.
func (d *Daemon) Write(p []byte) (int, error) {
	d.send(daemonMsg{Msg: string(p)})
	return len(p), nil
}

// Ready tells the parent the mount is in place and closes the pipe.
func (d *Daemon) Ready() { d.finish(daemonMsg{Ready: true}) }

// ReadyWith, in a Child, tells the parent it is ready along with info
// (JSON), and keeps the pipe open: later messages and a Fail still reach
// the parent, which reads them until the child exits.
func (d *Daemon) ReadyWith(info any) {
	b, err := json.Marshal(info)
	if err != nil {
		d.Fail(err, 1)
		return
	}
	d.send(daemonMsg{Ready: true, Info: b})
}

// DaemonFile is the i-th file (from 0) of ChildOptions.Files, as the child
// inherited it.
func DaemonFile(i int, name string) *os.File { return os.NewFile(uintptr(5+i), name) }

// Fail tells the parent the mount failed, with the exit code to use.
func (d *Daemon) Fail(err error, code int) { d.finish(daemonMsg{Error: err.Error(), Code: code}) }

func (d *Daemon) finish(m daemonMsg) {
	d.send(m)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.status != nil {
		d.status.Close()
		d.status = nil
	}
}
