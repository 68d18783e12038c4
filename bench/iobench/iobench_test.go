package iobench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/mount"
)

// run measures a small target with o's Via, and checks what every run
// must report: the target it was given, as a file, removed afterwards;
// both passes with a speed (timedRead has compared the data read back
// with the data written); a FAT filesystem inside the test volume.
func run(t *testing.T, via string) Result {
	t.Helper()
	target := filepath.Join(t.TempDir(), "target")
	var phases []string
	r, err := Run(context.Background(), Options{
		Target: target, Size: 2 << 20, BlockSize: 64 << 10, Encryption: "AES", Via: via, Runs: 1,
		Progress: func(p string) { phases = append(phases, p) },
	})
	if err != nil {
		t.Fatalf("Run via %s: %v", via, err)
	}
	if r.TargetKind != "file" || r.Target != target || r.Via != via || r.Format != "veracrypt" || r.Encryption != "AES" || r.Runs != 1 {
		t.Errorf("result describes the wrong run: %+v", r)
	}
	if !strings.HasPrefix(r.Filesystem, "FAT") {
		t.Errorf("filesystem %q, want a FAT type", r.Filesystem)
	}
	for name, s := range map[string]Speed{"raw": r.Raw, "encrypted": r.Encrypted} {
		if !(s.WriteBPS > 0 && s.ReadBPS > 0) {
			t.Errorf("%s pass: %+v, want both speeds measured", name, s)
		}
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file target is left behind (stat: %v)", err)
	}
	if len(phases) == 0 {
		t.Error("Progress was never told a phase")
	}
	return r
}

// TestRunAPI goes through the fat package in process: needs no FUSE.
func TestRunAPI(t *testing.T) { run(t, "api") }

// TestRunMount goes through a FUSE mount of the test volume, which Run
// unmounts before it returns.
func TestRunMount(t *testing.T) {
	if err := mount.Available(); err != nil {
		t.Skipf("FUSE is not usable here: %v", err)
	}
	run(t, "mount")
}

// TestRunServed goes through the WebDAV and the NFS serve on loopback,
// with the FUSE mount measured beside them where FUSE is usable.
func TestRunServed(t *testing.T) {
	for _, via := range []string{"webdav", "nfs"} {
		t.Run(via, func(t *testing.T) {
			r := run(t, via)
			if mount.Available() != nil {
				if r.Mount != nil {
					t.Errorf("a mount pass without FUSE: %+v", r.Mount)
				}
				return
			}
			if r.Mount == nil || !(r.Mount.WriteBPS > 0 && r.Mount.ReadBPS > 0) {
				t.Errorf("the FUSE mount beside %s: %+v, want both speeds measured", via, r.Mount)
			}
		})
	}
}

// TestRunRefusesBadOptions: options the benchmark cannot measure are
// refused with ErrOptions before anything is written.
func TestRunRefusesBadOptions(t *testing.T) {
	dir := t.TempDir()
	good := Options{Target: filepath.Join(dir, "t"), Size: 1 << 20, BlockSize: 4096, Via: "api"}
	for name, change := range map[string]func(*Options){
		"block size not a multiple of 512": func(o *Options) { o.BlockSize = 1000 },
		"size below one block":             func(o *Options) { o.Size = 100 },
		"unknown encryption":               func(o *Options) { o.Encryption = "ROT13" },
		"via none of the front ends":       func(o *Options) { o.Via = "smb" },
		"target a directory":               func(o *Options) { o.Target = dir },
	} {
		o := good
		change(&o)
		if _, err := Run(context.Background(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: err = %v, want ErrOptions", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused runs left %d files in the target directory", len(entries))
	}
}
