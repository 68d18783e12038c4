package mount

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// rawHelperEnv makes the test binary, started by StartRawHelper, the
// raw file's helper: ServeRaw, as `cryptvol serve-raw` runs it.
const rawHelperEnv = "CRYPTVOL_TEST_RAW_HELPER"

func rawHelperMain() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	secret, d, err := DaemonStart()
	if err != nil {
		os.Exit(4)
	}
	os.Chdir("/")
	if err := ServeRaw(ctx, secret, d); err != nil {
		d.Fail(err, 4)
		os.Exit(4)
	}
	os.Exit(0)
}

// TestRawHelperWritesThroughDriver: StartRawHelper hands the open volume
// to a helper process (this test binary, running ServeRaw), which serves
// the raw file and runs fuse2fs on it; a file written in FilesDir is in the
// container once Finish returns, and a second helper reads it back.
func TestRawHelperWritesThroughDriver(t *testing.T) {
	needFUSE(t)
	needTool(t, "fuse2fs")
	mkfs := needTool(t, "mkfs.ext4")
	t.Setenv(rawHelperEnv, "1")
	v, p := newVolume(t, kinds[0], 16<<20)
	raw := mountDir(t)
	m, err := MountRaw(raw, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mkfs, "-q", "-F", filepath.Join(raw, RawFileName)).CombinedOutput()
	if uerr := m.Unmount(); err == nil {
		err = uerr
	}
	if err != nil {
		t.Fatalf("mkfs.ext4 on the raw file: %v\n%s", err, out)
	}

	argv := []string{os.Args[0], "-test.run=^$"}
	req := RawServeRequest{FSType: "ext4", Container: p}
	start := func() *RawHelper {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var msgs bytes.Buffer
		h, err := StartRawHelper(ctx, argv, &msgs, v, req)
		if err != nil {
			t.Fatalf("StartRawHelper: %v\n%s", err, msgs.String())
		}
		return h
	}
	h := start()
	werr := os.WriteFile(filepath.Join(h.FilesDir(), "through.txt"), []byte("through the driver"), 0o644)
	if err := h.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if werr != nil {
		t.Fatalf("writing through the driver: %v", werr)
	}
	h = start()
	b, rerr := os.ReadFile(filepath.Join(h.FilesDir(), "through.txt"))
	if err := h.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if rerr != nil || string(b) != "through the driver" {
		t.Errorf("read back through a second helper: %q, %v", b, rerr)
	}
}
