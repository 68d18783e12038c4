package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// put, rm, mkdir and mv on a filesystem written through a user-space
// driver (NTFS), and mount of such a filesystem, run the driver under a
// helper process that serves the raw file: this program again, as
// serve-raw (mount.StartRawHelper and mount.ServeRaw say why).

func init() {
	register(&command{
		name:    "serve-raw",
		summary: "the helper process that serves a volume's raw file to a stacked driver",
		hidden:  true,
		usage: `Usage: cryptvol serve-raw

Started by put, rm, mkdir and mv on a filesystem written through a
user-space driver (NTFS); not for use on its own.
`,
		run: runServeRaw,
	})
}

// rawServeSecret is what the command hands the helper.
type rawServeSecret = mount.RawServeRequest

// rawHelperArgs start this program as the helper.
func rawHelperArgs() []string { return []string{os.Args[0], "serve-raw"} }

// rawHelper is the command's handle on a running helper, with its
// failures given their exit codes.
type rawHelper struct{ h *mount.RawHelper }

// startRawHelper starts the helper on v and returns once the driver's
// mount is up; the helper's messages go to msgs.
func startRawHelper(ctx context.Context, msgs io.Writer, v *volume.Volume, s rawServeSecret) (*rawHelper, error) {
	h, err := mount.StartRawHelper(ctx, rawHelperArgs(), msgs, v, s)
	if err != nil {
		return nil, fromMount(err)
	}
	return &rawHelper{h}, nil
}

// filesDir is where the command reaches the driver's files.
func (h *rawHelper) filesDir() string { return h.h.FilesDir() }

// finish ends the helper, the driver's writes in the container first.
func (h *rawHelper) finish() error { return fromMount(h.h.Finish()) }

// runServeRaw is the helper.
func runServeRaw(ctx context.Context, a *app, args []string) error {
	if !mount.IsDaemon() {
		return usageError(errors.New("serve-raw is started by put, rm, mkdir and mv; it is not a command of its own"))
	}
	secret, d, err := mount.DaemonStart()
	if err != nil {
		return err
	}
	// The helper holds no directory busy, and a Ctrl-C meant for the
	// command (its own session already keeps the terminal's away) does
	// not cut a teardown short: only the lifeline ends it.
	os.Chdir("/")
	err = fromMount(mount.ServeRaw(ctx, secret, d))
	clear(secret)
	if err != nil {
		d.Fail(err, exitCodeFor(err))
	}
	return err
}
