package atomicfile

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// processStart is the start time of process pid in microseconds, in base
// 36; "0" if unknown.
func processStart(pid int) string {
	t, err := kinfoStart(pid)
	if err != nil || t == 0 {
		return "0"
	}
	return strconv.FormatInt(t, 36)
}

func kinfoStart(pid int) (int64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, errors.New("no such process")
	}
	tv := kp.Proc.P_starttime
	return int64(tv.Sec)*1e6 + int64(tv.Usec), nil
}

// ownerAlive reports whether the process that recorded (pid, start) runs,
// and whether that answer is sure.
func ownerAlive(pid int, start string) (alive, sure bool) {
	if alive, _ := killAlive(pid); !alive {
		return false, true
	}
	t, err := kinfoStart(pid)
	if err != nil || t == 0 || start == "0" {
		return true, false
	}
	return strconv.FormatInt(t, 36) == start, true
}
