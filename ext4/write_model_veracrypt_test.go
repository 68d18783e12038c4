package ext4

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// vcModelPassword opens the test's container; PIM 1 keeps the key
// derivation of every open short.
const vcModelPassword = "model test of the ext4 writer"

// TestWriterModelVeraCrypt is the model test of the writer inside an
// encrypted volume: cryptvol creates a VeraCrypt container and its ext4
// (as `create --filesystem ext4 --quick` does), the writer applies the
// random operations of modelRun through the volume's encryption, plus a
// deep tree with 255-byte Unicode names, a file of 16 to 20 MiB and its
// hard and symbolic links. Then cryptvol's reader must equal the model,
// and VeraCrypt 1.26.24 must open the container: e2fsck -fn of its
// decrypted device is clean and the kernel's read-only mount of that
// device equals the model, file by file.
//
// Default: a few hundred operations in 64 MiB (1 KiB blocks). Long
// (-ext4.long or CRYPTVOL_EXT4_LONG=1): thousands in 640 MiB (4 KiB
// blocks), random files up to 20 MiB.
func TestWriterModelVeraCrypt(t *testing.T) {
	vc, err := oracle.Find(oracle.VeraCrypt12624)
	if err != nil {
		t.Skipf("VeraCrypt %s cannot check the container here (looked for veracrypt-%s in ../shared/oracles or $CRYPTVOL_ORACLES; it needs linux/amd64, root, /dev/fuse and losetup): %v",
			oracle.VeraCrypt12624, oracle.VeraCrypt12624, err)
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("the kernel cannot loop-mount VeraCrypt's decrypted device: %v", err)
	}
	needTool(t, "e2fsck")
	size, ops, maxFile, depth := int64(64<<20), 500, 4<<20, 48
	if modelLong() {
		size, ops, maxFile, depth = 640<<20, 500*20, 20<<20, 60
	}
	seed := uint64(1)
	if *modelSeed != 0 {
		seed = *modelSeed
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	creds := volume.Credentials{Password: []byte(vcModelPassword), PIM: 1}
	container := filepath.Join(t.TempDir(), "model.hc")
	createVeraCryptExt4(t, ctx, container, size, creds)

	v, err := volume.OpenWith(ctx, container, creds, volume.Options{Type: "veracrypt", Hash: "SHA-512"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	w, err := OpenWritable(v, v.Size())
	if err != nil {
		t.Fatal(err)
	}
	clock := &modelClock{t: time.Unix(1<<31+4242, 123456789)}
	w.Now = clock.now
	m := newModel(time.Time{})
	if err := modelFrom(w.FS, m); err != nil {
		t.Fatal(err)
	}
	rootFi, err := w.Stat("/")
	if err != nil {
		t.Fatal(err)
	}
	m.paths["/"].mtime = rootFi.ModTime()
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	o := modelOps{t: t, w: w, m: m, clock: clock}
	bigSize := func() int { return 16<<20 + r.IntN(4<<20+1) }
	// Fixtures before the random run give it deep directories to work in;
	// the second set is there at the end whatever the run removed.
	addFixtures(o, r, "a", depth, bigSize())
	modelRun(t, w, m, clock, r, ops, maxFile)
	fx := addFixtures(o, r, "b", depth, bigSize())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	st := modelStats(m)
	t.Logf("seed %d: %d random operations and 2 fixture trees (depth %d, a %d-byte file) in a %d MiB container, %v; the model holds %s",
		seed, ops, fx.depth, fx.bigSize, size>>20, time.Since(start).Round(time.Millisecond), st)

	// (a) cryptvol's reader, through the volume.
	f, err := Open(v, v.Size())
	if err != nil {
		t.Fatal(err)
	}
	if bad, _, err := verifyChecksums(f); err != nil {
		t.Fatal(err)
	} else {
		for _, b := range bad {
			t.Error(b)
		}
	}
	compareView(t, "reader", readerView(f), m)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}

	// (b) VeraCrypt's decrypted device: e2fsck, then the kernel.
	vm, err := vc.Mount(ctx, container, oracle.MountOptions{Password: vcModelPassword, PIM: 1, Hash: "sha512", ReadOnly: true})
	if err != nil {
		t.Fatalf("VeraCrypt %s does not open the container: %v", vc.Version, err)
	}
	dismount := func() {
		if vm == nil {
			return
		}
		if err := vm.Dismount(); err != nil {
			t.Errorf("VeraCrypt dismount: %v", err)
		}
		vm = nil
	}
	t.Cleanup(dismount) // after the kernel's unmount (cleanups run last first)
	if code, out := e2fsck(t, vm.Dev, "-fn"); code != 0 {
		t.Fatalf("e2fsck -fn of VeraCrypt's decrypted device %s: exit %d\n%s", vm.Dev, code, out)
	}
	dir, unmount, why := kernelMount(t, vm.Dev, "ext4")
	if why != "" {
		t.Fatalf("the kernel cannot mount VeraCrypt's decrypted device: %s", why)
	}
	compareView(t, "kernel via VeraCrypt", kernelView(dir), m)
	unmount()
	if left := mountedAt(t, dir); left {
		t.Errorf("%s is still mounted after umount", dir)
	}
	dev := vm.Dev
	dismount()
	if out, _ := vc.Run(ctx, "", "--text", "--list"); strings.Contains(out, container) {
		t.Errorf("VeraCrypt still lists the container after dismount:\n%s", out)
	}
	if out, _ := exec.Command("losetup", "-j", dev).CombinedOutput(); len(out) != 0 {
		t.Errorf("loop devices left on %s: %s", dev, out)
	}
	if !t.Failed() {
		t.Logf("%d paths compared: cryptvol's reader, and the kernel's mount of VeraCrypt %s's decrypted device (e2fsck -fn clean), equal the model; %v in all",
			len(m.paths), vc.Version, time.Since(start).Round(time.Millisecond))
	}
}

// createVeraCryptExt4 makes what `cryptvol create --type veracrypt
// --filesystem ext4 --quick` makes: a VeraCrypt container (AES, SHA-512)
// whose data area holds a fresh ext4 with blocks no smaller than the
// volume's sectors.
func createVeraCryptExt4(t *testing.T, ctx context.Context, container string, size int64, creds volume.Credentials) {
	t.Helper()
	if err := os.WriteFile(container, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(container, size); err != nil {
		t.Fatal(err)
	}
	dev, err := volume.OpenNewDevice(container)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cr, err := tcrypt.Create(ctx, dev, creds, tcrypt.CreateOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := volume.New(dev, cr.Unlocked, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	minBlock := 0
	if v.SectorSize() > 1024 {
		minBlock = v.SectorSize()
	}
	if err := Format(v, v.Size(), FormatOptions{MinBlockSize: minBlock}); err != nil {
		t.Fatal(err)
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
}

// mountedAt reports whether /proc/mounts has a mount on dir.
func mountedAt(t *testing.T, dir string) bool {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

// modelStats describes the model for the log: how many of each kind, the
// bytes, the largest file, the deepest and the longest path.
func modelStats(m *model) string {
	var files, dirs, links, multi, bytes, largest, deepest, longest int
	seen := map[*mnode]bool{}
	for p, n := range m.paths {
		deepest = max(deepest, strings.Count(p, "/"))
		longest = max(longest, len(p))
		switch {
		case n.dir:
			dirs++
		case n.target != "":
			links++
		default:
			files++
			if n.nlink > 1 {
				multi++
			}
			if !seen[n] {
				seen[n] = true
				bytes += len(n.data)
				largest = max(largest, len(n.data))
			}
		}
	}
	return fmt.Sprintf("%d paths: %d directories, %d file names (%d of them hard-linked, %d inodes, %d bytes, largest %d), %d symlinks; deepest %d levels, longest path %d bytes",
		len(m.paths), dirs, files, multi, len(seen), bytes, largest, links, deepest, longest)
}
