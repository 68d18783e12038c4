//go:build unix

package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
)

// TestServeNFSTreeWithNfsCp copies a tree of 1,000 files (0 B to 20 MiB,
// Unicode names, in nested directories) into a FAT volume through 'serve
// --nfs' with libnfs's nfs-cp, one process a file as a user would, copies
// every file back out with nfs-cp, and compares each byte for byte with
// its source; then kills the server with SIGKILL and reads the tree with
// 'cryptvol get -r' (diff -r with the source) and checks it with 'cryptvol
// fsck'. With -short, 100 files (the 20 MiB one included).
func TestServeNFSTreeWithNfsCp(t *testing.T) {
	needLibnfs(t)
	n := 1000
	if testing.Short() {
		n = 100
	}
	dir := t.TempDir()
	env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+filepath.Join(dir, "run"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("nfs tree test password\n"), 0o600)
	vol := filepath.Join(dir, "v.hc")
	creds := []string{"--password-file", pw, "--pim", "1"}
	cryptvolCmd(t, env, append([]string{"create", vol, "--size", "96M", "--quick"}, creds...)...)

	// The names: the first few of every kind, then many small files in
	// ten directories; sizes spread from 0 B to 20 MiB.
	names := []string{"tree/empty.bin", "tree/ünïcödé.txt", "tree/日本語/ファイル.dat", "tree/emoji 😀/ok.bin",
		"tree/deep/a/b/c/Ελληνικά.bin", "tree/spaces and (parens).txt", "tree/big/20MiB.bin"}
	sizes := []int{0, 1, 4095, 65537, 1<<20 + 13, 3<<20 + 17, 20 << 20}
	for i := len(names); i < n; i++ {
		names = append(names, fmt.Sprintf("tree/many/d%d/fïle %04d.bin", i%10, i))
		sizes = append(sizes, []int{0, 1, 511, 4096, 70000, 300001}[i%6])
	}
	dirs := map[string]bool{}
	for _, name := range names {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs["/"+d] = true
		}
	}
	var mk []string
	for d := range dirs {
		mk = append(mk, d)
	}
	sort.Strings(mk)
	// nfs-cp makes files, not directories: they are made before the serve.
	cryptvolCmd(t, env, append(append([]string{"mkdir", vol}, mk...), creds...)...)

	src := t.TempDir()
	rng := rand.New(rand.NewSource(27))
	for i, name := range names {
		data := make([]byte, sizes[i])
		rng.Read(data)
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s := startServeNFS(t, env, vol, creds...)
	for _, name := range names {
		if out, err := libnfs(t, "nfs-cp", filepath.Join(src, filepath.FromSlash(name)), s.fileURL("/"+name)); err != nil {
			t.Fatalf("nfs-cp in %s: %v\n%s", name, err, out)
		}
	}
	back := t.TempDir()
	for i, name := range names {
		local := filepath.Join(back, fmt.Sprint(i))
		if out, err := libnfs(t, "nfs-cp", s.fileURL("/"+name), local); err != nil {
			t.Fatalf("nfs-cp out %s: %v\n%s", name, err, out)
		}
		want, _ := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		if got, err := os.ReadFile(local); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s copied out through NFS: %d bytes (%v), want the %d copied in", name, len(got), err, len(want))
		}
	}

	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()
	got := filepath.Join(t.TempDir(), "got")
	cryptvolCmd(t, env, append([]string{"get", vol, "/tree", got, "-r"}, creds...)...)
	if out, err := exec.Command("diff", "-r", filepath.Join(src, "tree"), got).CombinedOutput(); err != nil {
		t.Errorf("cryptvol get -r after the kill differs from what nfs-cp copied in: %v\n%s", err, out)
	}
	cryptvolCmd(t, env, append([]string{"fsck", vol}, creds...)...)
}
