package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
)

// externalChecker is a filesystem's own checker, run on a decrypted copy
// of the data area in a scratch image: check finds, repair mends the
// copy, and what the repair changed is written back through the volume.
type externalChecker struct {
	fs    string
	tool  externalTool
	check []string // arguments before the image: look, change nothing
	fix   []string // arguments before the image: repair without asking
	// found tells the exit codes of check and of fix that mean
	// "problems" (found, or found and repaired); any other but 0 is the
	// tool failing to run, and nothing is written back.
	found func(code int) bool
}

// fsckCodes is the exit status of e2fsck and fsck.exfat: bits 1 and 2
// errors corrected, 4 errors left, 8 operational error (set beside 4
// when e2fsck -n gives up on a damaged filesystem), 16 and up usage or
// library errors.
func fsckCodes(code int) bool { return code < 16 && code&7 != 0 }

// one is the exit status of fsck.fat and ntfsfix: 1 for problems.
func one(code int) bool { return code == 1 }

var (
	e2fsck  = &externalChecker{fs: "ext4", tool: externalTool{"e2fsck", "e2fsprogs"}, check: []string{"-fn"}, fix: []string{"-fy"}, found: fsckCodes}
	ntfsfix = &externalChecker{fs: "NTFS", tool: externalTool{"ntfsfix", "ntfs-3g"}, check: []string{"-n"}, fix: []string{}, found: one}
)

// externalCheckers are what fsck --external runs on FAT and exFAT.
var externalCheckers = map[string]*externalChecker{
	"vfat":  {fs: "FAT", tool: externalTool{"fsck.fat", "dosfstools"}, check: []string{"-n"}, fix: []string{"-a"}, found: one},
	"exfat": {fs: "exFAT", tool: externalTool{"fsck.exfat", "exfatprogs"}, check: []string{"-n"}, fix: []string{"-y"}, found: fsckCodes},
}

// jsonToolFsck is fsck --json for a filesystem checked by its own tool.
type jsonToolFsck struct {
	Filesystem string   `json:"filesystem"`
	Checker    string   `json:"checker"` // the command line, the image as IMAGE
	ExitCode   int      `json:"checker_exit_code"`
	Clean      bool     `json:"clean"`
	Errors     bool     `json:"errors"`
	Output     []string `json:"output"`
	// RepairedBytes is how much of the volume the repair rewrote.
	RepairedBytes int64         `json:"repaired_bytes,omitempty"`
	Repair        *jsonToolFsck `json:"repair,omitempty"`
	After         *jsonToolFsck `json:"after_repair,omitempty"`
}

// toolRun is one run of the checker.
type toolRun struct {
	args []string
	code int
	out  string
}

func (r *toolRun) json(fs string, tool string) *jsonToolFsck {
	lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if r.out == "" {
		lines = []string{}
	}
	return &jsonToolFsck{Filesystem: fs, Checker: strings.Join(append([]string{tool}, r.args...), " ") + " IMAGE",
		ExitCode: r.code, Clean: r.code == 0, Errors: r.code != 0, Output: lines}
}

// run is fsck on v through the checker.
func (c *externalChecker) run(ctx context.Context, a *app, v *volume.Volume, o *fsckOptions) error {
	if err := c.tool.missing("checking " + c.fs); err != nil {
		return err
	}
	img, err := newScratchImage(v.Size())
	if err != nil {
		return withCode(exitIO, fmt.Errorf("scratch image for %s: %w", c.tool.name, err))
	}
	defer img.Close()
	if err := img.copyOut(ctx, a, "Reading", v); err != nil {
		return c.stopped(err)
	}
	first, err := c.runTool(ctx, img, c.check)
	if err != nil {
		return c.stopped(err)
	}
	rep := first.json(c.fs, c.tool.name)
	var result error
	switch {
	case first.code == 0:
	case !o.repair:
		result = withCode(exitDamaged, fmt.Errorf("%s found problems; 'cryptvol fsck %s --repair' runs %s", c.tool.name, o.volPath, strings.Join(append([]string{c.tool.name}, c.fix...), " ")))
	default:
		fix, err := c.runTool(ctx, img, c.fix)
		if err != nil {
			return c.stopped(err)
		}
		rep.Repair = fix.json(c.fs, c.tool.name)
		// The volume gets what the tool wrote into the copy, block by
		// block, under the lock openVolume took.
		changed, err := img.writeBack(ctx, v)
		if err != nil {
			return c.stopped(fmt.Errorf("writing the repair back (%d bytes written): %w", changed, err))
		}
		rep.RepairedBytes = changed
		after, err := c.runTool(ctx, img, c.check)
		if err != nil {
			return c.stopped(err)
		}
		rep.After = after.json(c.fs, c.tool.name)
		if after.code == 0 {
			result = repairedAll(fmt.Errorf("problems found and repaired by %s (%s of the volume rewritten)", c.tool.name, humanSize(changed)))
		} else {
			result = withCode(exitDamaged, fmt.Errorf("problems remain after %s (listed above)", c.tool.name))
		}
	}
	if o.json {
		if err := writeJSON(a.stdout, rep); err != nil {
			return err
		}
		return result
	}
	c.print(a, rep)
	return result
}

// runTool runs the checker with args on the image; an exit code outside
// 0 and c.found is an error.
func (c *externalChecker) runTool(ctx context.Context, img *scratchImage, args []string) (*toolRun, error) {
	args = slices.Clip(args)
	code, out, err := img.run(ctx, c.tool, append(args, img.path)...)
	if err != nil {
		return nil, err
	}
	r := &toolRun{args: args, code: code, out: toolLines(out, img.path)}
	if code != 0 && !c.found(code) {
		return nil, fmt.Errorf("%s %s failed (exit %d):%s", c.tool.name, strings.Join(args, " "), code, toolOutput(r.out))
	}
	return r, nil
}

func (c *externalChecker) print(a *app, rep *jsonToolFsck) {
	for _, r := range []*jsonToolFsck{rep, rep.Repair, rep.After} {
		if r == nil {
			continue
		}
		fmt.Fprintf(a.stdout, "%s (exit %d):\n", r.Checker, r.ExitCode)
		for _, l := range r.Output {
			fmt.Fprintf(a.stdout, "  %s\n", l)
		}
	}
	if rep.Clean {
		fmt.Fprintf(a.stdout, "%s: clean\n", c.fs)
	}
}

// stopped gives an interrupted or failed run its exit code; the volume
// is as it was unless the write back was under way.
func (c *externalChecker) stopped(err error) error {
	if errors.Is(err, context.Canceled) {
		return interrupted("fsck stopped")
	}
	return withCode(exitIO, err)
}

// toolLines is a checker's output with the image named IMAGE, less the
// ntfs-3g tools' complaint that a /dev/fd path is not in /proc/mounts.
func toolLines(out, imgPath string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(l, "Failed to determine whether "+imgPath+" is mounted") {
			continue
		}
		b.WriteString(strings.ReplaceAll(l, imgPath, "IMAGE"))
	}
	return b.String()
}
