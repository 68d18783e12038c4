package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Windows/amd64 binaries run on a linux/amd64 host under Wine. Go (since
// 1.24) seeds its runtime from ProcessPrng in bcryptprimitives.dll, which
// Wine 8 (Debian 12) does not ship, so a Go program dies at start-up
// there ("bcryptprimitives.dll not found"). The prefix this check uses
// gets that one function, built from shimSource with MinGW: it fills the
// buffer from RtlGenRandom (advapi32's SystemFunction036), which is what
// ProcessPrng is documented to provide. Nothing else is changed: the
// binary under test is the release binary, byte for byte.
const shimSource = `#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!RtlGenRandom(data, n)) return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
`

const shimDef = "LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n"

var wine struct {
	once sync.Once
	dir  string   // the temporary WINEPREFIX and shim sources
	run  executor // set when usable
	why  string   // else why not
}

// wineExecutor returns how to run windows/amd64 binaries here, setting up
// a Wine prefix on first use, or why it cannot.
func wineExecutor() (executor, string) {
	wine.once.Do(func() {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			wine.why = fmt.Sprintf("Wine runs windows/amd64 binaries on linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
			return
		}
		dir, err := os.MkdirTemp("", "cryptvol-wine-")
		if err != nil {
			wine.why = err.Error()
			return
		}
		wine.dir = dir
		ex, err := setUpWinePrefix(filepath.Join(dir, "prefix"))
		if err != nil {
			wine.why = err.Error()
			return
		}
		wine.run = ex
	})
	return wine.run, wine.why
}

// prepareWinePrefix is -wine-prefix: it sets up dir for good.
func prepareWinePrefix(dir string) error {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return fmt.Errorf("Wine runs windows/amd64 binaries on linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	ex, err := setUpWinePrefix(abs)
	if err != nil {
		return err
	}
	overlay, err := writeDeleteOverlay(abs)
	if err != nil {
		return err
	}
	fmt.Printf("Wine prefix ready: %s %s\n", strings.Join(ex.env, " "), ex.prefix[0])
	fmt.Printf("build test binaries with: go test -overlay %s\n", overlay)
	return nil
}

// Go 1.26's os.Remove and os.RemoveAll on Windows delete with
// NtSetInformationFile(FileDispositionInformationEx, POSIX semantics) and
// fall back to the classic delete when the system says it does not
// support that, but Wine 8 answers with a status that is none of those
// and that Go reports as ERROR_INVALID_FUNCTION ("unlinkat ...: Invalid
// function": STATUS_NOT_IMPLEMENTED or STATUS_INVALID_DEVICE_REQUEST);
// every test's TempDir cleanup then fails. The overlay written here adds Wine's answers
// to the fallback cases, in a copy of the standard library file passed to
// `go test -overlay`; real Windows never returns them there, so the code
// under test runs as it would on Windows.
const (
	deleteFile   = "internal/syscall/windows/at_windows.go"
	deleteAnchor = "\t\tSTATUS_NOT_SUPPORTED:     // the file system doesn't support FILE_DISPOSITION_INFORMATION_EX or one of the flags\n\t\treturn deleteatFallback(h)\n"
	deletePatch  = "\tcase NTStatus(0xC0000002), NTStatus(0xC0000010): // Wine 8: STATUS_NOT_IMPLEMENTED, STATUS_INVALID_DEVICE_REQUEST\n\t\treturn deleteatFallback(h)\n"
)

// writeDeleteOverlay writes the patched file and overlay.json into dir
// and returns the overlay's path.
func writeDeleteOverlay(dir string) (string, error) {
	out, err := exec.Command(goTool(), "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %v", err)
	}
	orig := filepath.Join(strings.TrimSpace(string(out)), "src", filepath.FromSlash(deleteFile))
	b, err := os.ReadFile(orig)
	if err != nil {
		return "", err
	}
	src := string(b)
	if strings.Count(src, deleteAnchor) != 1 {
		return "", fmt.Errorf("%s is not the Go 1.26 file the Wine delete overlay patches: update wine.go for this Go version", orig)
	}
	patched := filepath.Join(dir, "at_windows.go")
	if err := os.WriteFile(patched, []byte(strings.Replace(src, deleteAnchor, deleteAnchor+deletePatch, 1)), 0o644); err != nil {
		return "", err
	}
	j, err := json.Marshal(map[string]map[string]string{"Replace": {orig: patched}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, j, 0o644)
}

// setUpWinePrefix creates a Wine prefix at prefix and installs the shim
// DLL into its system32, where Go's runtime looks for it. It returns how
// to run programs in it.
func setUpWinePrefix(prefix string) (executor, error) {
	wine64 := lookFirst("wine64", "/usr/lib/wine/wine64")
	if wine64 == "" {
		return executor{}, fmt.Errorf("wine64 is not installed (apt-get install wine64)")
	}
	gcc := lookFirst("x86_64-w64-mingw32-gcc")
	if gcc == "" {
		return executor{}, fmt.Errorf("x86_64-w64-mingw32-gcc is not installed (apt-get install gcc-mingw-w64-x86-64-win32), needed for Wine 8's missing bcryptprimitives.dll")
	}
	env := []string{"WINEPREFIX=" + prefix, "WINEDEBUG=-all"}
	if err := installShim(wine64, gcc, prefix, env); err != nil {
		return executor{}, fmt.Errorf("setting up Wine: %v", err)
	}
	return executor{prefix: []string{wine64}, env: env}, nil
}

func installShim(wine64, gcc, prefix string, env []string) error {
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	boot := exec.Command(wine64, "wineboot", "--init")
	boot.Env = append(os.Environ(), env...)
	if out, err := boot.CombinedOutput(); err != nil {
		return fmt.Errorf("wineboot: %v\n%s", err, out)
	}
	src, err := os.MkdirTemp("", "cryptvol-wine-shim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	c, def := filepath.Join(src, "bcryptprimitives.c"), filepath.Join(src, "bcryptprimitives.def")
	if err := os.WriteFile(c, []byte(shimSource), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(def, []byte(shimDef), 0o644); err != nil {
		return err
	}
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if _, err := os.Stat(dll); err == nil {
		return nil // a Wine that ships it
	}
	cc := exec.Command(gcc, "-O2", "-shared", "-o", dll, c, def, "-ladvapi32")
	if out, err := cc.CombinedOutput(); err != nil {
		return fmt.Errorf("building bcryptprimitives.dll: %v\n%s", err, out)
	}
	return nil
}

func cleanUpWine() {
	if wine.dir != "" {
		// wineserver keeps the prefix busy for a few seconds after the
		// last program; stop it before removing the prefix.
		if ws := lookFirst("wineserver", "/usr/lib/wine/wineserver"); ws != "" {
			k := exec.Command(ws, "-k")
			k.Env = append(os.Environ(), wine.run.env...)
			k.Run()
		}
		os.RemoveAll(wine.dir)
	}
}

// lookFirst returns the first of names found on PATH (or, for an absolute
// path, existing), or "".
func lookFirst(names ...string) string {
	for _, n := range names {
		if strings.HasPrefix(n, "/") {
			if _, err := os.Stat(n); err == nil {
				return n
			}
			continue
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}
