//go:build linux || darwin

package mount

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/volume"
	_ "github.com/cryptvol/cryptvol/volume/all"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// needFUSE skips the test, saying why, where FUSE cannot be used.
func needFUSE(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
}

func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("skipping: %s is not installed", name)
	}
	return p
}

// volumeKind is a way to make a test volume.
type volumeKind struct {
	name   string
	create func(t testing.TB, path string, size int64, creds volume.Credentials) // writes the container
	open   volume.Options
}

var password = []byte("mount test password")

func creds() volume.Credentials {
	return volume.Credentials{Password: append([]byte(nil), password...), PIM: 1}
}

var kinds = []volumeKind{
	{name: "veracrypt", create: func(t testing.TB, p string, size int64, c volume.Credentials) {
		tcryptCreate(t, p, size, c, tcrypt.CreateOptions{Encryption: "AES", Quick: true})
	}},
	{name: "truecrypt", create: func(t testing.TB, p string, size int64, c volume.Credentials) {
		c.PIM = 0
		tcryptCreate(t, p, size, c, tcrypt.CreateOptions{TrueCrypt: true, Encryption: "Serpent-AES", Quick: true})
	}},
	{name: "luks1", create: func(t testing.TB, p string, size int64, c volume.Credentials) {
		luksCreate(t, p, size, c, "luks1", "aes-cbc-essiv:sha256")
	}},
	{name: "luks2", create: func(t testing.TB, p string, size int64, c volume.Credentials) {
		luksCreate(t, p, size, c, "luks2", "aes-xts-plain64")
	}},
}

func emptyContainer(t testing.TB, p string, size int64) *volume.FileDevice {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	d, err := volume.OpenDevice(p, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func tcryptCreate(t testing.TB, p string, size int64, c volume.Credentials, o tcrypt.CreateOptions) {
	t.Helper()
	d := emptyContainer(t, p, size)
	defer d.Close()
	cr, err := tcrypt.Create(context.Background(), d, c, o)
	if err != nil {
		t.Fatal(err)
	}
	formatFAT(t, d, cr.Unlocked)
}

func luksCreate(t testing.TB, p string, size int64, c volume.Credentials, typ, cipher string) {
	t.Helper()
	d := emptyContainer(t, p, size)
	defer d.Close()
	c.PIM = 0
	cr, err := luks.Create(context.Background(), d, luks.CreateOptions{
		Type: typ, Cipher: cipher,
		KDF: luks.KDFOptions{PBKDF: "pbkdf2", Hash: "sha256", Iterations: 1000},
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	formatFAT(t, d, cr.Unlocked)
}

func formatFAT(t testing.TB, d volume.Device, u *volume.Unlocked) {
	t.Helper()
	v, err := volume.New(d, u, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fat.Format(v, v.Size(), fat.FormatOptions{Label: "CRYPTVOL"}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
}

// newVolume makes a volume of the kind with a fresh FAT filesystem and
// opens it the ordinary way (auto-detecting the format).
func newVolume(t testing.TB, k volumeKind, size int64) (*volume.Volume, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), k.name+".vol")
	k.create(t, p, size, creds())
	c := creds()
	if k.name != "veracrypt" {
		c.PIM = 0
	}
	v, err := volume.Open(p, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, p
}

// mountDir makes a mount point and makes sure nothing stays mounted on it
// after the test, whatever happens.
func mountDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, ok := IsMountPoint(dir); ok {
			t.Logf("cleanup: %s was still mounted; detaching", dir)
			abortConnection(dir)
			Unmount(dir, true)
		}
	})
	return dir
}

// export writes the decrypted data area to a plain file, for external
// tools (fsck.fat, mtools, e2fsck) to check.
func export(t testing.TB, v Volume) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.img")
	buf := make([]byte, v.Size())
	if _, err := v.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fsckFAT runs fsck.fat -n on an image and fails the test on any finding.
func fsckFAT(t testing.TB, img string) {
	t.Helper()
	bin := needTool(t, "fsck.fat")
	out, err := exec.Command(bin, "-n", img).CombinedOutput()
	if err != nil {
		t.Fatalf("fsck.fat -n found problems: %v\n%s", err, out)
	}
}
