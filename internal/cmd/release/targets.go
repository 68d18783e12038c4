package main

import (
	"fmt"
	"strings"
)

// target is one platform a release binary is built for.
type target struct {
	GOOS, GOARCH string
	GOARM        string // "6" or "7" for linux/arm, else ""
	// Qemu is the qemu-user emulator that runs this target's binaries on
	// a linux/amd64 host, with its arguments ("" when none applies).
	Qemu []string
}

// targets are the release platforms (issue 10): the Raspberry Pis
// (ARMv6, ARMv7, arm64), a big-endian 64-bit machine (mips64), riscv64,
// macOS and Windows on both of their architectures.
var targets = []target{
	{GOOS: "linux", GOARCH: "amd64"},
	// arm1176 is the Raspberry Pi 1 / Zero core (ARMv6 + VFPv2), so the
	// check proves the binary needs nothing newer; cortex-a7 is the Pi 2.
	{GOOS: "linux", GOARCH: "arm", GOARM: "6", Qemu: []string{"qemu-arm-static", "-cpu", "arm1176"}},
	{GOOS: "linux", GOARCH: "arm", GOARM: "7", Qemu: []string{"qemu-arm-static", "-cpu", "cortex-a7"}},
	{GOOS: "linux", GOARCH: "arm64", Qemu: []string{"qemu-aarch64-static"}},
	{GOOS: "linux", GOARCH: "mips64", Qemu: []string{"qemu-mips64-static"}},
	{GOOS: "linux", GOARCH: "riscv64", Qemu: []string{"qemu-riscv64-static"}},
	{GOOS: "darwin", GOARCH: "arm64"},
	{GOOS: "darwin", GOARCH: "amd64"},
	{GOOS: "windows", GOARCH: "amd64"},
	{GOOS: "windows", GOARCH: "arm64"},
}

// Name is the target as -targets spells it: GOOS/GOARCH, with the ARM
// version folded in ("linux/armv6").
func (t target) Name() string {
	return t.GOOS + "/" + t.arch()
}

func (t target) arch() string {
	if t.GOARM != "" {
		return t.GOARCH + "v" + t.GOARM
	}
	return t.GOARCH
}

// FileName is the binary's name in the output directory.
func (t target) FileName() string {
	n := "cryptvol-" + t.GOOS + "-" + t.arch()
	if t.GOOS == "windows" {
		n += ".exe"
	}
	return n
}

// Env is the environment for `go build` for this target.
func (t target) Env() []string {
	env := []string{"CGO_ENABLED=0", "GOOS=" + t.GOOS, "GOARCH=" + t.GOARCH}
	if t.GOARM != "" {
		env = append(env, "GOARM="+t.GOARM)
	}
	return env
}

// selectTargets returns the targets named in a comma-separated list, or
// all of them for "" or "all".
func selectTargets(list string) ([]target, error) {
	if list == "" || list == "all" {
		return targets, nil
	}
	var out []target
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, t := range targets {
			if t.Name() == n {
				out = append(out, t)
				found = true
				break
			}
		}
		if !found {
			var names []string
			for _, t := range targets {
				names = append(names, t.Name())
			}
			return nil, fmt.Errorf("unknown target %q (want one of %s)", n, strings.Join(names, ", "))
		}
	}
	return out, nil
}
