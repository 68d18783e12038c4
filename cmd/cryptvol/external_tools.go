package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/filesystem/external"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// The filesystems' own programs (package filesystem/external) as the
// command line runs them: with its progress bars, and its exit codes.

// externalEnv gives the tools' runs this command's progress bars and the
// process check that sweeps the scratch images of killed commands.
func (a *app) externalEnv() external.Env {
	return external.Env{
		Progress: func(label string, total int64) external.Bar {
			return progress.New(a.stderr, label, total, a.showProgress())
		},
		Alive: mount.ProcessAlive,
	}
}

// toolError gives an external tool's error its exit code.
func toolError(err error) error {
	switch {
	case errors.Is(err, external.ErrNoTool):
		return withCode(exitNoTool, err)
	case errors.Is(err, external.ErrUnfixable):
		return withCode(exitDamaged, err)
	case errors.Is(err, external.ErrRefused):
		return withCode(exitDestroy, err)
	}
	return err
}

// externalResizer is the resize.Tool of the command line: resize2fs and
// ntfsresize on a scratch copy, as fsck runs e2fsck and ntfsfix.
type externalResizer struct{ a *app }

func (externalResizer) Resizes(typ string) bool { return external.Resizes(typ) }

func (e externalResizer) Resize(ctx context.Context, v *volume.Volume, typ string, size int64) (string, error) {
	msg, err := external.Resize(ctx, v, typ, size, e.a.externalEnv())
	return msg, toolError(err)
}

// externalCheckers are what fsck --external runs on FAT and exFAT.
var externalCheckers = map[string]*external.Checker{"vfat": external.FsckFAT, "exfat": external.FsckExFAT}

// checkExternal is fsck through the filesystem's own checker c.
func checkExternal(c *external.Checker) func(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error {
	return func(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error {
		rep, outcome, err := c.Run(ctx, v, o.repair, a.externalEnv())
		switch {
		case errors.Is(err, external.ErrNoTool):
			return withCode(exitNoTool, err)
		case errors.Is(err, context.Canceled):
			return interrupted("fsck stopped")
		case err != nil:
			return withCode(exitIO, err)
		}
		var result error
		switch outcome {
		case external.Found:
			result = withCode(exitDamaged, fmt.Errorf("%s found problems; 'cryptvol fsck %s --repair' runs %s", c.Tool.Name, o.volPath, c.FixCommand()))
		case external.Repaired:
			result = repairedAll(fmt.Errorf("problems found and repaired by %s (%s of the volume rewritten)", c.Tool.Name, humanSize(rep.RepairedBytes)))
		case external.Remain:
			result = withCode(exitDamaged, fmt.Errorf("problems remain after %s (listed above)", c.Tool.Name))
		}
		if o.json {
			if err := writeJSON(a.stdout, rep); err != nil {
				return err
			}
			return result
		}
		rep.WriteText(a.stdout)
		return result
	}
}
