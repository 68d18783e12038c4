package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// spreadWarnAt is the range, relative to the median, past which a figure
// is reported as noisy: beyond it a difference between two runs says more
// about the machine than about the code.
const spreadWarnAt = 0.10

// busyPerCore is the load average per core at the start of a run from
// which the machine counts as busy.
const busyPerCore = 0.5

// cpuTimes is the machine's CPU time so far, from /proc/stat (Linux):
// the steal time (what a hypervisor gave other guests) and the total.
type cpuTimes struct {
	steal, total uint64
	ok           bool
}

func readCPUTimes() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		if i < 8 { // user nice system idle iowait irq softirq steal; guest is in user
			t.total += v
		}
		if i == 7 {
			t.steal = v
		}
	}
	t.ok = true
	return t
}

// loadAverage is the one-minute load average, or -1 where the system does
// not tell (it is read from /proc/loadavg).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// Finish records how busy the machine was during the run and lists the
// warnings a reader of the figures needs: a busy machine, CPU time stolen
// by the hypervisor, and every figure whose range exceeds 10% of its
// median. Call it once the results are in.
func (r *Report) Finish() {
	if end := readCPUTimes(); end.ok && r.start.ok && end.total > r.start.total {
		r.StealPercent = round2(100 * float64(end.steal-r.start.steal) / float64(end.total-r.start.total))
	}
	r.Warnings = nil
	if r.LoadAverage >= 0 && r.Cores > 0 && r.LoadAverage > busyPerCore*float64(r.Cores) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the machine was busy when the run started (load average %.2f on %d cores): the figures are lower and noisier than on a quiet machine", r.LoadAverage, r.Cores))
	}
	if r.StealPercent > 2 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the hypervisor took %.1f%% of the CPU time during the run (steal): other guests were busy", r.StealPercent))
	}
	noisy := func(name string, spread float64) {
		if spread > spreadWarnAt {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s varied by %.0f%% between samples (min–max): a difference from another run within that range means nothing", name, 100*spread))
		}
	}
	for _, c := range r.Ciphers {
		noisy(c.Name, c.Spread())
	}
	for _, k := range r.KDF {
		noisy(k.PRF, k.Spread())
	}
}
