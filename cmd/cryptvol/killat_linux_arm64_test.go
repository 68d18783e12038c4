package main

import "syscall"

// callArgs returns a stopped system call's number (x8) and first
// arguments.
func callArgs(r *syscall.PtraceRegs) (uint64, [4]uint64) {
	return r.Regs[8], [4]uint64{r.Regs[0], r.Regs[1], r.Regs[2], r.Regs[3]}
}

// withArchPathCalls: arm64 has only the *at calls.
func withArchPathCalls(m map[uint64]string) map[uint64]string { return m }

func openCreate(nr uint64, a [4]uint64) (string, bool) { return "", false }
