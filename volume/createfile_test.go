package volume_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// TestCreateFile makes a real VeraCrypt container through CreateFile,
// opens it, replaces it, and checks that a failed build and a volume in
// use leave the file as it was and nothing beside it.
func TestCreateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.hc")
	creds := volume.Credentials{Password: []byte("create file"), PIM: 1}
	build := func(dev *volume.FileDevice) error {
		_, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: true})
		return err
	}
	if err := volume.CreateFile(path, 1<<20, nil, build); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Windows has no such modes.
	unix := runtime.GOOS != "windows"
	if fi.Size() != 1<<20 || unix && fi.Mode().Perm() != 0o600 {
		t.Fatalf("created %d bytes, mode %v", fi.Size(), fi.Mode())
	}
	v, err := volume.OpenWith(context.Background(), path, creds, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()

	// A failed build leaves the old file.
	boom := errors.New("build failed")
	if err := volume.CreateFile(path, 2<<20, nil, func(*volume.FileDevice) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed build: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("after a failed build: %v, %v", fi, err)
	}

	// A volume in use is not replaced.
	held, err := volume.OpenDevice(path, false)
	if err != nil {
		t.Fatal(err)
	}
	err = volume.CreateFile(path, 2<<20, nil, build)
	held.Close()
	if !errors.Is(err, volume.ErrLocked) {
		t.Fatalf("replacing a volume in use: %v", err)
	}

	// Replaced: a new file of the new size, the old mode kept.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := volume.CreateFile(path, 2<<20, nil, build); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 2<<20 || unix && fi.Mode().Perm() != 0o640 {
		t.Fatalf("replaced: %v, %v", fi, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("left in the directory: %v", entries)
	}
}

// TestCreateNewFile: a new file appears under its name only on Commit,
// with what was written to its device; Discard leaves nothing.
func TestCreateNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.hdr")
	nf, err := volume.CreateNewFile(path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nf.WriteAt([]byte("discarded"), 0); err != nil {
		t.Fatal(err)
	}
	nf.Discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left after Discard: %v", entries)
	}
	nf, err = volume.CreateNewFile(path, 4096, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nf.Discard()
	if _, err := nf.WriteAt([]byte("header"), 512); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file appeared before Commit: %v", err)
	}
	if err := nf.Commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 4096 || string(b[512:518]) != "header" {
		t.Fatalf("committed file: %d bytes, %v", len(b), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("beside the committed file: %v", entries)
	}
}
