package atomicfile

import (
	"errors"
	"io/fs"
	"strconv"

	"golang.org/x/sys/windows"
)

const stillActive = 259

// processStart is the creation time of process pid (100 ns units since
// 1601), in base 36; "0" if unknown.
func processStart(pid int) string {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return "0"
	}
	defer windows.CloseHandle(h)
	t, err := creationTime(h)
	if err != nil {
		return "0"
	}
	return strconv.FormatInt(t, 36)
}

func creationTime(h windows.Handle) (int64, error) {
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &e, &k, &u); err != nil {
		return 0, err
	}
	return int64(c.HighDateTime)<<32 | int64(c.LowDateTime), nil
}

// ownerAlive reports whether the process that recorded (pid, start) runs,
// and whether that answer is sure.
func ownerAlive(pid int, start string) (alive, sure bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return false, true
		}
		return true, false // e.g. access denied: it exists
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err == nil && code != stillActive {
		return false, true
	}
	t, err := creationTime(h)
	if err != nil || start == "0" {
		return true, false
	}
	return strconv.FormatInt(t, 36) == start, true
}

func fileOwner(fs.FileInfo) *owner { return nil }
