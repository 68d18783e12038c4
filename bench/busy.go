package bench

import (
	"fmt"
	"os"
	"runtime"
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

// Watch notes how busy the machine is over a run of any benchmark kind
// (io, enc, matrix, archive use it directly; Report embeds the same
// figures): the load average at the start and the CPU steal until
// Warnings is called.
type Watch struct {
	LoadAverage float64 // one-minute load average at the start, -1 if unknown
	Cores       int
	start       cpuTimes
}

// StartWatch starts watching.
func StartWatch() *Watch {
	return &Watch{LoadAverage: loadAverage(), Cores: runtime.NumCPU(), start: readCPUTimes()}
}

// StealPercent is the share of CPU time the hypervisor gave other guests
// since the watch started (0 where /proc/stat is not there).
func (w *Watch) StealPercent() float64 {
	if end := readCPUTimes(); end.ok && w.start.ok && end.total > w.start.total {
		return round2(100 * float64(end.steal-w.start.steal) / float64(end.total-w.start.total))
	}
	return 0
}

// Warnings says what made the machine a poor place to measure: a load
// average over busyPerCore per core at the start, CPU steal over 2%.
func (w *Watch) Warnings() []string {
	return busyWarnings(w.LoadAverage, w.Cores, w.StealPercent())
}

func busyWarnings(load float64, cores int, steal float64) []string {
	var out []string
	if load >= 0 && cores > 0 && load > busyPerCore*float64(cores) {
		out = append(out, fmt.Sprintf("the machine was busy when the run started (load average %.2f on %d cores): the figures are lower and noisier than on a quiet machine", load, cores))
	}
	if steal > 2 {
		out = append(out, fmt.Sprintf("the hypervisor took %.1f%% of the CPU time during the run (steal): other guests were busy", steal))
	}
	return out
}

// SpreadWarning is the warning for a figure whose range (lo to hi)
// exceeds spreadWarnAt of its median, and "" for one within it.
func SpreadWarning(name string, median, lo, hi float64) string {
	if median <= 0 || (hi-lo)/median <= spreadWarnAt {
		return ""
	}
	return spreadWarning(name, (hi-lo)/median)
}

func spreadWarning(name string, spread float64) string {
	return fmt.Sprintf("%s varied by %.0f%% between samples (min–max): a difference from another run within that range means nothing", name, 100*spread)
}

// Finish records how busy the machine was during the run and lists the
// warnings a reader of the figures needs: a busy machine, CPU time stolen
// by the hypervisor, and every figure whose range exceeds 10% of its
// median. Call it once the results are in.
func (r *Report) Finish() {
	if end := readCPUTimes(); end.ok && r.start.ok && end.total > r.start.total {
		r.StealPercent = round2(100 * float64(end.steal-r.start.steal) / float64(end.total-r.start.total))
	}
	r.Warnings = busyWarnings(r.LoadAverage, r.Cores, r.StealPercent)
	noisy := func(name string, spread float64) {
		if spread > spreadWarnAt {
			r.Warnings = append(r.Warnings, spreadWarning(name, spread))
		}
	}
	for _, c := range r.Ciphers {
		noisy(c.Name, c.Spread())
	}
	for _, k := range r.KDF {
		noisy(k.PRF, k.Spread())
	}
}
