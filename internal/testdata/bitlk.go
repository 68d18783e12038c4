package testdata

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// BitLockerImage is one image of bitlk-images.tar.xz as its images.conf
// describes it: the credentials of each protector, the GUIDs of their
// VMKs, the volume GUID, the filesystem serial (UUID) and the sha256 of
// the whole decrypted volume as dm-crypt presents it (empty where
// cryptsetup does not activate the image).
type BitLockerImage struct {
	Name, Path string
	Cipher     string // cryptsetup's spelling: aes-xts-plain64, aes-cbc-eboiv, aes-cbc-elephant
	GUID       string
	UUID       string
	SHA256     string
	// Protectors in images.conf order; StartupKey is the .BEK file of the
	// startup-key protector.
	Password, PasswordVMK string
	Recovery, RecoveryVMK string
	// Recovery2 is the second recovery password of the two-recovery image.
	Recovery2, Recovery2VMK string
	StartupKey, StartupVMK  string
	SmartCardVMK            string
	ClearKeyVMK             string
}

// BitLockerImages unpacks the BitLocker corpus and describes its images
// (21, sorted by name).
func BitLockerImages(t testing.TB) []BitLockerImage {
	t.Helper()
	dir := filepath.Join(Unpack(t, "bitlk-images.tar.xz"), "bitlk-images")
	f, err := os.Open(filepath.Join(dir, "images.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []BitLockerImage
	var cur *BitLockerImage
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			name := line[1 : len(line)-1]
			out = append(out, BitLockerImage{Name: name, Path: filepath.Join(dir, name+".img")})
			cur = &out[len(out)-1]
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || cur == nil {
			t.Fatalf("images.conf: unexpected line %q", line)
		}
		switch k {
		case "CIPHER":
			cur.Cipher = v
		case "GUID":
			cur.GUID = v
		case "UUID":
			cur.UUID = v
		case "SHA256SUM":
			cur.SHA256 = v
		case "PW":
			cur.Password = v
		case "PW_VMK_GUID":
			cur.PasswordVMK = v
		case "RP":
			cur.Recovery = v
		case "RP_VMK_GUID":
			cur.RecoveryVMK = v
		case "RP2":
			cur.Recovery2 = v
		case "RP2_VMK_GUID":
			cur.Recovery2VMK = v
		case "SK_VMK_GUID":
			cur.StartupVMK = v
			// The .BEK file is named after the protector's GUID.
			cur.StartupKey = filepath.Join(dir, strings.ToUpper(v)+".BEK")
		case "SC_VMK_GUID":
			cur.SmartCardVMK = v
		case "CLEARKEY_VMK_GUID":
			cur.ClearKeyVMK = v
		default:
			t.Fatalf("images.conf: unknown key %q", k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) != 21 {
		t.Fatalf("images.conf lists %d BitLocker images, want 21", len(out))
	}
	return out
}
