//go:build unix && !linux && !darwin

package atomicfile

func processStart(int) string { return "0" }

func ownerAlive(pid int, _ string) (alive, sure bool) { return killAlive(pid) }
