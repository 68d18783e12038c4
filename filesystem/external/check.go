package external

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Checker is a filesystem's own checker, run on a decrypted copy of the
// data area in a scratch image: Check finds, Fix mends the copy, and
// what the repair changed is written back through the volume.
type Checker struct {
	FS    string // the filesystem's name in messages ("ext4")
	Tool  Tool
	Check []string // arguments before the image: look, change nothing
	Fix   []string // arguments before the image: repair without asking
	// Found tells the exit codes of Check and of Fix that mean
	// "problems" (found, or found and repaired); any other but 0 is the
	// tool failing to run, and nothing is written back.
	Found func(code int) bool
}

// fsckCodes is the exit status of e2fsck and fsck.exfat: bits 1 and 2
// errors corrected, 4 errors left, 8 operational error (set beside 4
// when e2fsck -n gives up on a damaged filesystem), 16 and up usage or
// library errors.
func fsckCodes(code int) bool { return code < 16 && code&7 != 0 }

// one is the exit status of fsck.fat and ntfsfix: 1 for problems.
func one(code int) bool { return code == 1 }

// The checkers: E2fsck and Ntfsfix are what fsck runs on ext2/3/4 and
// NTFS; FsckFAT and FsckExFAT what it runs on FAT and exFAT when asked
// for the external checker.
var (
	E2fsck    = &Checker{FS: "ext4", Tool: Tool{"e2fsck", "e2fsprogs"}, Check: []string{"-fn"}, Fix: []string{"-fy"}, Found: fsckCodes}
	Ntfsfix   = &Checker{FS: "NTFS", Tool: Tool{"ntfsfix", "ntfs-3g"}, Check: []string{"-n"}, Fix: []string{}, Found: one}
	FsckFAT   = &Checker{FS: "FAT", Tool: Tool{"fsck.fat", "dosfstools"}, Check: []string{"-n"}, Fix: []string{"-a"}, Found: one}
	FsckExFAT = &Checker{FS: "exFAT", Tool: Tool{"fsck.exfat", "exfatprogs"}, Check: []string{"-n"}, Fix: []string{"-y"}, Found: fsckCodes}
)

// Report is one run of a checker, and of the repair and the check after
// it where there were. Its JSON is `cryptvol fsck --json` for a
// filesystem checked by its own tool.
type Report struct {
	Filesystem string   `json:"filesystem"`
	Checker    string   `json:"checker"` // the command line, the image as IMAGE
	ExitCode   int      `json:"checker_exit_code"`
	Clean      bool     `json:"clean"`
	Errors     bool     `json:"errors"`
	Output     []string `json:"output"`
	// RepairedBytes is how much of the volume the repair rewrote.
	RepairedBytes int64   `json:"repaired_bytes,omitempty"`
	Repair        *Report `json:"repair,omitempty"`
	After         *Report `json:"after_repair,omitempty"`
}

// Outcome is what a check came to.
type Outcome int

const (
	Clean    Outcome = iota // nothing found
	Found                   // problems found, not repaired (no repair asked)
	Repaired                // problems found and all repaired
	Remain                  // problems remain after the repair
)

// run is one run of the checker.
type run struct {
	args []string
	code int
	out  string
}

func (r *run) report(fs string, tool string) *Report {
	lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if r.out == "" {
		lines = []string{}
	}
	return &Report{Filesystem: fs, Checker: strings.Join(append([]string{tool}, r.args...), " ") + " IMAGE",
		ExitCode: r.code, Clean: r.code == 0, Errors: r.code != 0, Output: lines}
}

// Run checks v with the checker and, with repair, mends what it finds
// and checks again. v is written only by the repair's write back (under
// whatever lock the caller holds). An error is the tool missing
// (ErrNoTool), failing to run, an interruption, or I/O.
func (c *Checker) Run(ctx context.Context, v Target, repair bool, env Env) (*Report, Outcome, error) {
	if err := c.Tool.Missing("checking " + c.FS); err != nil {
		return nil, 0, err
	}
	img, err := NewImage(v.Size())
	if err != nil {
		return nil, 0, fmt.Errorf("scratch image for %s: %w", c.Tool.Name, err)
	}
	defer img.Close()
	if err := img.CopyOut(ctx, v, "Reading", env); err != nil {
		return nil, 0, err
	}
	first, err := c.runTool(ctx, img, c.Check)
	if err != nil {
		return nil, 0, err
	}
	rep := first.report(c.FS, c.Tool.Name)
	switch {
	case first.code == 0:
		return rep, Clean, nil
	case !repair:
		return rep, Found, nil
	}
	fix, err := c.runTool(ctx, img, c.Fix)
	if err != nil {
		return nil, 0, err
	}
	rep.Repair = fix.report(c.FS, c.Tool.Name)
	changed, err := img.WriteBack(ctx, v)
	if err != nil {
		return nil, 0, fmt.Errorf("writing the repair back (%d bytes written): %w", changed, err)
	}
	rep.RepairedBytes = changed
	after, err := c.runTool(ctx, img, c.Check)
	if err != nil {
		return nil, 0, err
	}
	rep.After = after.report(c.FS, c.Tool.Name)
	if after.code == 0 {
		return rep, Repaired, nil
	}
	return rep, Remain, nil
}

// FixCommand is the repair's command line without the image.
func (c *Checker) FixCommand() string {
	return strings.Join(append([]string{c.Tool.Name}, c.Fix...), " ")
}

// runTool runs the checker with args on the image; an exit code outside
// 0 and c.Found is an error.
func (c *Checker) runTool(ctx context.Context, img *Image, args []string) (*run, error) {
	args = slices.Clip(args)
	code, out, err := img.Run(ctx, c.Tool, append(args, img.path)...)
	if err != nil {
		return nil, err
	}
	r := &run{args: args, code: code, out: toolLines(out, img.path)}
	if code != 0 && !c.Found(code) {
		return nil, fmt.Errorf("%s %s failed (exit %d):%s", c.Tool.Name, strings.Join(args, " "), code, Indent(r.out))
	}
	return r, nil
}

// WriteText writes each run's command line, exit code and output, and
// "FS: clean" when the first run found nothing.
func (r *Report) WriteText(w io.Writer) {
	for _, x := range []*Report{r, r.Repair, r.After} {
		if x == nil {
			continue
		}
		fmt.Fprintf(w, "%s (exit %d):\n", x.Checker, x.ExitCode)
		for _, l := range x.Output {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if r.Clean {
		fmt.Fprintf(w, "%s: clean\n", r.Filesystem)
	}
}
