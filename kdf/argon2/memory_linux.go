package argon2

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// systemAvailableMemory reads MemAvailable from /proc/meminfo (the kernel's
// estimate of memory available without swapping) and lowers it to the
// cgroup v2 limit of the process when one is set (containers, systemd
// units), since exceeding that also ends in the OOM killer.
func systemAvailableMemory() (uint64, string) {
	avail, source := uint64(0), "unknown"
	if v, ok := meminfoAvailable(); ok {
		avail, source = v, "MemAvailable in /proc/meminfo"
	}
	if limit, ok := cgroupRemaining(); ok && (source == "unknown" || limit < avail) {
		avail, source = limit, "cgroup memory.max minus memory.current"
	}
	if source == "unknown" {
		return fallbackAvailable, "unknown on this system, assumed " + fallbackDesc
	}
	return avail, source
}

func meminfoAvailable() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// cgroupRemaining returns memory.max - memory.current of the cgroup v2 the
// process is in, when a limit is set.
func cgroupRemaining() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	var path string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			path = string(p)
		}
	}
	if path == "" {
		return 0, false
	}
	dir := "/sys/fs/cgroup" + path
	read := func(name string) (uint64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	max, ok := read("memory.max") // "max" (no limit) fails to parse
	if !ok {
		return 0, false
	}
	cur, _ := read("memory.current")
	if cur >= max {
		return 0, true
	}
	return max - cur, true
}
