//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/keep"
)

// TestUnlockedKeyUnreadableByOtherUID runs the attack of issue 29 item 1
// with the real keyutils: in a fresh session keyring into which root's
// user keyring is linked, root unlocks a volume, then a process that keeps
// that session keyring but runs as uid 65534 (setpriv) tries `keyctl pipe`
// on the key. Possession used to give it the key's possessor bits, and so
// the XTS key; now the owner reads it and the other uid gets "Permission
// denied".
func TestUnlockedKeyUnreadableByOtherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack switches to uid 65534 with setpriv")
	}
	for _, tool := range []string{"keyctl", "setpriv", "bash", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (keyctl: Debian package keyutils; setpriv: util-linux)", tool)
		}
	}
	ring := fmt.Sprintf("cryptvol-test-attack-%d", os.Getpid())
	t.Setenv("CRYPTVOL_UNLOCK_STORE", "keyring")
	t.Setenv("CRYPTVOL_KEYRING", ring)
	if _, err := keep.Open(keep.Options{}); err != nil {
		t.Skipf("no kernel keyring here: %v", err)
	}
	t.Cleanup(func() { keep.RemoveKeyring(ring) })

	dir := t.TempDir()
	vol, pw := filepath.Join(dir, "w.hc"), filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("attack at dawn\n"), 0o600)
	cli(t, "create", vol, "--size", "1M", "--password-file", pw, "--pim", "1", "--quick", "--non-interactive")

	// The reproduction of the issue, in bash: each read prints its exit
	// status and the sha256 of what it read, on a line of its own (the
	// key itself goes to a file under t.TempDir(), whose parent is 0700).
	script := `set -u
keyctl link @u @s >/dev/null
"$CV" unlock "$VOL" --password-file "$PW" --pim 1 || exit 90
K=$(keyctl show @u | awk -v d="user: $RING:" 'index($0, d) {print $1; exit}')
[ -n "$K" ] || { keyctl show @u; exit 91; }
keyctl pipe "$K" >"$DIR/owner"; rc=$?
echo "owner $rc $(sha256sum <"$DIR/owner")"
setpriv --reuid=65534 --regid=65534 --clear-groups keyctl pipe "$K" >"$DIR/other" 2>"$DIR/other.err"; rc=$?
echo "other $rc $(sha256sum <"$DIR/other")"
cat "$DIR/other.err"
`
	cmd := exec.Command("keyctl", "session", "-", "bash", "-c", script)
	cmd.Env = append(os.Environ(), "CV="+cvBin(), "VOL="+vol, "PW="+pw, "DIR="+dir, "RING="+ring)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the attack script failed: %v\n%s", err, out)
	}
	reads := map[string][]string{}
	var msg string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && (f[0] == "owner" || f[0] == "other") {
			reads[f[0]] = f[1:3]
		} else {
			msg += line + "\n"
		}
	}
	owner, other := reads["owner"], reads["other"]
	if owner == nil || other == nil {
		t.Fatalf("unexpected output:\n%s", out)
	}
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if owner[0] != "0" || owner[1] == emptySHA {
		t.Fatalf("the owner could not read its own key (exit %s):\n%s", owner[0], out)
	}
	if other[0] == "0" || other[1] == owner[1] {
		t.Fatalf("uid 65534 read the unlocked key (exit %s, same sha256 as the owner's: %v):\n%s",
			other[0], other[1] == owner[1], out)
	}
	if !strings.Contains(msg, "Permission denied") {
		t.Errorf("uid 65534 was refused, but not with Permission denied:\n%s", out)
	}
	cli(t, "lock", vol)
}
