package mount

import (
	"runtime"
	"strings"
	"testing"
)

// TestChooseFrontEnd: --via names any front end, in any case; an
// unknown one is refused naming the four; without --via Linux always
// picks FUSE (where FUSE is missing, the mount says what to install
// rather than becoming a server).
func TestChooseFrontEnd(t *testing.T) {
	for _, via := range []string{"fuse", "WinFsp", "webdav", "NFS"} {
		f, _, err := ChooseFrontEnd(via)
		if err != nil || !strings.EqualFold(string(f), via) {
			t.Errorf("ChooseFrontEnd(%q) = %q, %v", via, f, err)
		}
	}
	if _, _, err := ChooseFrontEnd("smb"); err == nil || !strings.Contains(err.Error(), "fuse, winfsp, webdav and nfs") {
		t.Errorf("ChooseFrontEnd(smb): %v, want an error naming the front ends", err)
	}
	if runtime.GOOS == "linux" {
		if f, _, _ := ChooseFrontEnd(""); f != FrontFUSE {
			t.Errorf("the default on Linux is %q, want fuse", f)
		}
	}
	joined := strings.Join(WebDAVConnect("Z:", "http://127.0.0.1:8080/", "cryptvol", "pw"), "\n")
	if !strings.Contains(joined, "127.0.0.1:8080/") || !strings.Contains(joined, "pw") {
		t.Errorf("WebDAVConnect names no URL or password: %q", joined)
	}
	if runtime.GOOS == "windows" && joined != "net use Z: http://127.0.0.1:8080/ /user:cryptvol pw" {
		t.Errorf("the net use line: %q", joined)
	}
}
