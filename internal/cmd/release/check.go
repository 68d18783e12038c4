package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// inspectBinary checks, without running it, that the file at p is what
// target t needs: the executable format and CPU of t (and, for Linux,
// statically linked), build settings saying GOOS/GOARCH/GOARM,
// CGO_ENABLED=0 and -trimpath, and the version string inside. This is the only
// check possible for binaries of an OS this host cannot run.
func inspectBinary(t target, p, version string) error {
	if err := checkExecutableFormat(t, p); err != nil {
		return err
	}
	bi, err := buildinfo.ReadFile(p)
	if err != nil {
		return fmt.Errorf("reading build info: %w", err)
	}
	want := map[string]string{"GOOS": t.GOOS, "GOARCH": t.GOARCH, "CGO_ENABLED": "0", "-trimpath": "true"}
	if t.GOARM != "" {
		want["GOARM"] = t.GOARM
	}
	got := map[string]string{}
	for _, s := range bi.Settings {
		got[s.Key] = s.Value
	}
	for _, k := range []string{"GOOS", "GOARCH", "GOARM", "CGO_ENABLED", "-trimpath"} {
		if v, ok := want[k]; ok && got[k] != v {
			return fmt.Errorf("build setting %s is %q, want %q", k, got[k], v)
		}
	}
	// -trimpath leaves -ldflags out of the build info, so look for the
	// version string itself in the file (running `version` is the full
	// check, where this host can).
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(version)) {
		return fmt.Errorf("the version string %q is not in the binary", version)
	}
	return nil
}

// checkExecutableFormat opens p as the executable format of t.GOOS and
// compares its machine type (and byte order) with t.GOARCH.
func checkExecutableFormat(t target, p string) error {
	switch t.GOOS {
	case "linux":
		f, err := elf.Open(p)
		if err != nil {
			return fmt.Errorf("not an ELF file: %w", err)
		}
		defer f.Close()
		m, order := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm": elf.EM_ARM, "arm64": elf.EM_AARCH64, "mips64": elf.EM_MIPS, "riscv64": elf.EM_RISCV}[t.GOARCH], elf.ELFDATA2LSB
		if t.GOARCH == "mips64" {
			order = elf.ELFDATA2MSB
		}
		if f.Machine != m || f.Data != order {
			return fmt.Errorf("ELF machine %v, %v; want %v, %v", f.Machine, f.Data, m, order)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				return errors.New("dynamically linked (has an ELF interpreter)")
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			return fmt.Errorf("dynamically linked against %v", libs)
		}
	case "darwin":
		f, err := macho.Open(p)
		if err != nil {
			return fmt.Errorf("not a Mach-O file: %w", err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[t.GOARCH]
		if f.Cpu != want {
			return fmt.Errorf("Mach-O CPU %v, want %v", f.Cpu, want)
		}
	case "windows":
		f, err := pe.Open(p)
		if err != nil {
			return fmt.Errorf("not a PE file: %w", err)
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[t.GOARCH]
		if f.Machine != want {
			return fmt.Errorf("PE machine %#x, want %#x", f.Machine, want)
		}
	default:
		return fmt.Errorf("no format check for %s", t.GOOS)
	}
	return nil
}

// executor is how this host runs a target's binaries: directly (no
// prefix), under qemu-user or under Wine, with extra environment.
type executor struct {
	prefix []string
	env    []string
}

func (e executor) String() string {
	if len(e.prefix) == 0 {
		return "natively"
	}
	return "under " + strings.Join(e.prefix, " ")
}

// runner returns how to execute t's binaries on this host, or why they
// cannot run here.
func runner(t target) (executor, string) {
	if t.GOOS == runtime.GOOS && t.GOARCH == runtime.GOARCH {
		return executor{}, ""
	}
	if t.GOOS == "windows" && t.GOARCH == "amd64" {
		return wineExecutor()
	}
	if t.GOOS != runtime.GOOS || runtime.GOOS != "linux" || len(t.Qemu) == 0 {
		return executor{}, fmt.Sprintf("cannot execute %s binaries on %s/%s", t.Name(), runtime.GOOS, runtime.GOARCH)
	}
	if _, err := exec.LookPath(t.Qemu[0]); err != nil {
		return executor{}, t.Qemu[0] + " is not installed (apt-get install qemu-user-static)"
	}
	return executor{prefix: t.Qemu}, ""
}

// runVersion runs `BINARY version` (under prefix) and checks that it names
// the version, the commit and the target's platform. It returns the
// output.
func runVersion(t target, ex executor, p string, st stamp) (string, error) {
	version := st.Version
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append(append([]string(nil), ex.prefix...), p, "version")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), ex.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	s := out.String()
	if first, _, _ := strings.Cut(s, "\n"); first != "cryptvol "+version {
		return s, fmt.Errorf("first line %q, want %q", first, "cryptvol "+version)
	}
	if st.Commit != "" && !strings.Contains(s, "\ncommit "+st.Commit) {
		return s, fmt.Errorf("output does not name the commit %s", st.Commit)
	}
	if !strings.Contains(s, " "+t.GOOS+"/"+t.GOARCH+"\n") {
		return s, fmt.Errorf("output does not name the platform %s/%s", t.GOOS, t.GOARCH)
	}
	return s, nil
}
