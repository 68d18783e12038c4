package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// callArgs returns a stopped system call's number and first arguments.
func callArgs(r *syscall.PtraceRegs) (uint64, [4]uint64) {
	return r.Orig_rax, [4]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10}
}

// withArchPathCalls adds the calls only amd64 has.
func withArchPathCalls(m map[uint64]string) map[uint64]string {
	for nr, name := range map[uint64]string{unix.SYS_RENAME: "rename", unix.SYS_UNLINK: "unlink",
		unix.SYS_MKDIR: "mkdir", unix.SYS_RMDIR: "rmdir", unix.SYS_LINK: "link", unix.SYS_SYMLINK: "symlink",
		unix.SYS_CHMOD: "chmod", unix.SYS_CREAT: "creat"} {
		m[nr] = name
	}
	return m
}

// openCreate reports open(2) with O_CREAT or O_TRUNC.
func openCreate(nr uint64, a [4]uint64) (string, bool) {
	if nr == unix.SYS_OPEN && a[1]&(unix.O_CREAT|unix.O_TRUNC) != 0 {
		return "open(O_CREAT)", true
	}
	return "", false
}
