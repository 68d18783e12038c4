package mount

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes the table of mounts that `cryptvol list` shows: a
// header, then one aligned line per entry with its mode's details and
// whether its process failed or is gone.
func WriteList(w io.Writer, es []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MOUNTPOINT\tVOLUME\tMODE\tACCESS\tPID")
	for _, e := range es {
		access := "rw"
		if e.ReadOnly {
			access = "ro"
		}
		mode := e.Mode
		switch e.Mode {
		case ModeLoop:
			mode += " (" + e.FSType + " on " + e.LoopDevice + ")"
		case ModeDriver:
			mode += " (" + e.FSType + ")"
		}
		pid := fmt.Sprint(e.PID)
		switch {
		case e.Error != "":
			pid += " (failed: " + e.Error + ")"
		case !e.Alive:
			pid += " (gone: run 'cryptvol unmount " + e.MountPoint + "')"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.MountPoint, e.Volume, mode, access, pid)
	}
	return tw.Flush()
}
