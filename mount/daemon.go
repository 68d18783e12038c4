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
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding this program to start the mount daemon: %w", err)
	}
	secretR, secretW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		secretR.Close()
		secretW.Close()
		return 0, err
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        args,
		Env:         append(os.Environ(), DaemonEnv+"=1"),
		ExtraFiles:  []*os.File{secretR, statusW},
		SysProcAttr: DetachedProcAttr(),
	}
	err = cmd.Start()
	secretR.Close()
	statusW.Close()
	if err != nil {
		secretW.Close()
		statusR.Close()
		return 0, fmt.Errorf("starting the mount daemon: %w", err)
	}
	// The pipe holds 64 KiB; a secret is far smaller, so this never
	// blocks on a daemon that does not read.
	go func() {
		secretW.Write(secret)
		secretW.Close()
	}()

	type result struct {
		ready bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		defer statusR.Close()
		sc := bufio.NewScanner(statusR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var m daemonMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue
			}
			switch {
			case m.Msg != "":
				io.WriteString(msgs, m.Msg)
			case m.Ready:
				done <- result{ready: true}
				return
			case m.Error != "":
				done <- result{err: &DaemonError{Msg: m.Error, Code: m.Code}}
				return
			}
		}
		done <- result{}
	}()
	select {
	case r := <-done:
		if r.ready {
			pid := cmd.Process.Pid
			cmd.Process.Release()
			return pid, nil
		}
		werr := cmd.Wait()
		if r.err != nil {
			return 0, r.err
		}
		return 0, fmt.Errorf("the mount daemon exited before mounting (%v)", werr)
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		return 0, ctx.Err()
	}
}

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
