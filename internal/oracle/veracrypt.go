// Package oracle runs the reference programs of ../shared/oracles (console
// builds of VeraCrypt) so that tests can check that what cryptvol writes is
// what VeraCrypt reads, and benchmarks can time VeraCrypt in the same run.
//
// The kernel of the machines this runs on has no device-mapper, so VeraCrypt
// decrypts in user space (-m nokernelcrypto) and exposes the decrypted data
// area as a file under a FUSE folder, attached to a loop device. That needs
// root, /dev/fuse and losetup; Available says what is missing.
//
// VeraCrypt's slots are global to the machine, and test processes of several
// packages run at once, so every mount holds an exclusive lock on a file in
// the system's temporary directory for its whole life.
package oracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Versions of VeraCrypt in ../shared/oracles.
const (
	VeraCrypt12624 = "1.26.24" // VeraCrypt volumes; no TrueCrypt mode, no RIPEMD-160
	VeraCrypt1259  = "1.25.9"  // the last release with --truecrypt and RIPEMD-160
)

// VeraCrypt is one oracle build.
type VeraCrypt struct {
	Path    string
	Version string
}

// Dir returns ../shared/oracles (or $CRYPTVOL_ORACLES), or "" when absent.
func Dir() string {
	if d := os.Getenv("CRYPTVOL_ORACLES"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if ok {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		d := filepath.Join(root, "..", "shared", "oracles")
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// Find locates VeraCrypt of the given version and checks that it can mount
// here; the error says what is missing.
func Find(version string) (*VeraCrypt, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("the VeraCrypt oracles are linux/amd64 builds (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	d := Dir()
	if d == "" {
		return nil, errors.New("../shared/oracles not found (or set CRYPTVOL_ORACLES)")
	}
	p := filepath.Join(d, "veracrypt-"+version)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("VeraCrypt %s: %v", version, err)
	}
	if err := Available(); err != nil {
		return nil, err
	}
	return &VeraCrypt{Path: p, Version: version}, nil
}

// Available reports why VeraCrypt cannot mount here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("VeraCrypt's user-space mount needs root (FUSE folder and a loop device)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no /dev/fuse: %v", err)
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		return errors.New("losetup not found (util-linux)")
	}
	return nil
}

// MountOptions are the credentials and options of one mount.
type MountOptions struct {
	Password string
	PIM      int
	Keyfiles []string
	// TrueCrypt mounts a TrueCrypt-format volume (VeraCrypt 1.25.9 only).
	TrueCrypt bool
	// Hash names the PRF (VeraCrypt's spelling: sha512, whirlpool, ...);
	// empty lets VeraCrypt try them all.
	Hash string
	// BackupHeader mounts with the embedded backup header.
	BackupHeader bool
	ReadOnly     bool
	// ProtectHidden mounts the outer volume with the hidden one protected.
	ProtectHidden      bool
	ProtectionPassword string
	ProtectionPIM      int
}

// Mount is a mounted volume. Dev is the decrypted data area as a file.
type Mount struct {
	vc     *VeraCrypt
	Volume string
	Slot   int
	Dev    string
	lock   *os.File
}

// lockMachine takes the lock that serialises every oracle mount on the
// machine (closing the file releases it).
func lockMachine() (*os.File, error) {
	lk, err := os.OpenFile(filepath.Join(os.TempDir(), "cryptvol-veracrypt-oracle.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(lk); err != nil {
		lk.Close()
		return nil, err
	}
	return lk, nil
}

const slot = 1

// args builds the command line of a mount.
func (o MountOptions) args(vol string) []string {
	var mopts []string
	mopts = append(mopts, "nokernelcrypto")
	if o.BackupHeader {
		mopts = append(mopts, "headerbak")
	}
	if o.ReadOnly {
		mopts = append(mopts, "ro")
	}
	a := []string{"--text", "--non-interactive", "--mount-options=" + strings.Join(mopts, ","),
		"--filesystem=none", fmt.Sprintf("--slot=%d", slot),
		"-p", o.Password, fmt.Sprintf("--pim=%d", o.PIM), "-k", strings.Join(o.Keyfiles, ",")}
	if o.TrueCrypt {
		a = append(a, "--truecrypt")
	}
	if o.Hash != "" {
		a = append(a, "--hash="+o.Hash)
	}
	if o.ProtectHidden {
		a = append(a, "--protect-hidden=yes", "--protection-password="+o.ProtectionPassword,
			fmt.Sprintf("--protection-pim=%d", o.ProtectionPIM), "--protection-keyfiles=")
	} else {
		a = append(a, "--protect-hidden=no")
	}
	return append(a, vol)
}

// ErrRefused is returned (wrapped, with VeraCrypt's message) when VeraCrypt
// refuses the volume: wrong credentials, unsupported algorithm, not a volume.
var ErrRefused = errors.New("VeraCrypt refused the volume")

// Mount mounts vol and returns where its decrypted data area is. The caller
// must Dismount it. Only one oracle mount exists at a time on the machine;
// Mount waits for the others.
func (vc *VeraCrypt) Mount(ctx context.Context, vol string, o MountOptions) (*Mount, error) {
	abs, err := filepath.Abs(vol)
	if err != nil {
		return nil, err
	}
	lk, err := lockMachine()
	if err != nil {
		return nil, err
	}
	m := &Mount{vc: vc, Volume: abs, Slot: slot, lock: lk}
	// A mount left by a test process that was killed holds the slot.
	vc.run(ctx, "--text", "--non-interactive", "--force", "-d", fmt.Sprintf("--slot=%d", slot))
	if out, err := vc.run(ctx, o.args(abs)...); err != nil {
		m.unlock()
		return nil, fmt.Errorf("%w: %s", ErrRefused, firstLines(out, err))
	}
	out, err := vc.run(ctx, "--text", "--list", fmt.Sprintf("--slot=%d", slot))
	f := strings.Fields(out)
	if err != nil || len(f) < 3 {
		m.Dismount()
		return nil, fmt.Errorf("veracrypt --list: %s", firstLines(out, err))
	}
	back, err := exec.CommandContext(ctx, "losetup", "-nO", "BACK-FILE", f[2]).Output()
	if err != nil {
		m.Dismount()
		return nil, fmt.Errorf("losetup %s: %v", f[2], err)
	}
	m.Dev = strings.TrimSpace(string(back))
	return m, nil
}

// Properties returns `--volume-properties` as a map ("Encryption
// Algorithm", "PKCS-5 PRF", "Type", ...).
func (m *Mount) Properties(ctx context.Context) (map[string]string, error) {
	out, err := m.vc.run(ctx, "--text", "--volume-properties", fmt.Sprintf("--slot=%d", m.Slot))
	if err != nil {
		return nil, fmt.Errorf("veracrypt --volume-properties: %s", firstLines(out, err))
	}
	p := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			p[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return p, nil
}

// Dismount unmounts and releases the machine-wide lock.
func (m *Mount) Dismount() error {
	defer m.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	for i := 0; i < 5; i++ {
		var out string
		if out, err = m.vc.run(ctx, "--text", "--non-interactive", "-d", m.Volume); err == nil {
			return nil
		} else {
			err = fmt.Errorf("veracrypt -d: %s", firstLines(out, err))
		}
		time.Sleep(200 * time.Millisecond) // the FUSE folder can be busy for a moment
	}
	return err
}

func (m *Mount) unlock() {
	if m.lock != nil {
		m.lock.Close() // closing drops the flock
		m.lock = nil
	}
}

// Time runs one mount and dismount and returns how long the mount took
// (key derivation, header search and setup, as a user waits for it).
func (vc *VeraCrypt) Time(ctx context.Context, vol string, o MountOptions) (time.Duration, error) {
	lk, err := lockMachine()
	if err != nil {
		return 0, err
	}
	defer lk.Close()
	abs, err := filepath.Abs(vol)
	if err != nil {
		return 0, err
	}
	vc.run(ctx, "--text", "--non-interactive", "--force", "-d", fmt.Sprintf("--slot=%d", slot))
	t0 := time.Now()
	out, err := vc.run(ctx, o.args(abs)...)
	d := time.Since(t0)
	if err != nil {
		return d, fmt.Errorf("%w: %s", ErrRefused, firstLines(out, err))
	}
	if out, err := vc.run(ctx, "--text", "--non-interactive", "-d", abs); err != nil {
		return d, fmt.Errorf("veracrypt -d: %s", firstLines(out, err))
	}
	return d, nil
}

// Run runs VeraCrypt with args (for the interactive commands, such as
// --restore-headers, fed through stdin) and returns its combined output.
func (vc *VeraCrypt) Run(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, vc.Path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

func (vc *VeraCrypt) run(ctx context.Context, args ...string) (string, error) {
	return vc.Run(ctx, "", args...)
}

func firstLines(out string, err error) string {
	out = strings.TrimSpace(out)
	if len(out) > 400 {
		out = out[:400] + "..."
	}
	if out == "" {
		return err.Error()
	}
	return fmt.Sprintf("%v: %s", err, out)
}
