package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// processStart is the start time of process pid in clock ticks since boot
// (field 22 of /proc/PID/stat), in base 36; "0" if unknown.
func processStart(pid int) string {
	t, err := procStart(pid)
	if err != nil {
		return "0"
	}
	return strconv.FormatUint(t, 36)
}

func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// or parentheses itself: count fields after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, errors.New("unexpected /proc stat format")
	}
	return strconv.ParseUint(string(f[19]), 10, 64) // field 22: 3 + 19
}

// ownerAlive reports whether the process that recorded (pid, start) runs,
// and whether that answer is sure (a reused PID has another start time).
func ownerAlive(pid int, start string) (alive, sure bool) {
	t, err := procStart(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, perr := os.Stat("/proc/self/stat"); perr == nil {
			return false, true
		}
		return killAlive(pid)
	case err != nil:
		return killAlive(pid)
	case start == "0":
		return true, false
	}
	return strconv.FormatUint(t, 36) == start, true
}
