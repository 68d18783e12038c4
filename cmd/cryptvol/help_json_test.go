package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// jsonFieldsOfHelp is the field list of a help text's "JSON (--json)
// fields" block: the first word of each indented line, * cut off.
func jsonFieldsOfHelp(t *testing.T, name string) map[string]bool {
	t.Helper()
	text := helpOfCommand(commands[name]).text
	i := strings.Index(text, "\nJSON (--json) fields")
	if i < 0 {
		t.Fatalf("help %s documents no JSON fields:\n%s", name, text)
	}
	fields := map[string]bool{}
	for _, line := range strings.Split(text[i+1:], "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			break
		}
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "    ") {
			fields[strings.TrimSuffix(strings.Fields(line)[0], "*")] = true
		}
	}
	return fields
}

// jsonKeys runs the CLI and returns the keys of the JSON object it prints.
func jsonKeys(t *testing.T, args ...string) map[string]bool {
	t.Helper()
	code, out, errOut := runCaptured(args...)
	if code != 0 {
		t.Fatalf("cryptvol %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("cryptvol %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	keys := map[string]bool{}
	for k := range obj {
		keys[k] = true
	}
	return keys
}

// newTestVolume creates a VeraCrypt volume (cheap KDF) in dir with the
// password in dir/pw and returns its path and the credential options.
func newTestVolume(t *testing.T, dir, name string, extra ...string) (string, []string) {
	t.Helper()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(dir, name)
	creds := []string{"--password-file", pw, "--pim", "1", "--hash", "SHA-256"}
	args := append(append([]string{"create", vol, "--quick", "--non-interactive"}, creds...), extra...)
	if code, _, errOut := runCaptured(args...); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	return vol, creds
}

// writeImage puts a filesystem image into vol's data area.
func writeImage(t *testing.T, vol, img string) {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	v, err := volume.OpenWith(context.Background(), vol, volume.Credentials{Password: []byte("secret"), PIM: 1}, volume.Options{Hash: "SHA-256"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
}

func compareFields(t *testing.T, what string, help, got map[string]bool) {
	t.Helper()
	var undocumented, missing []string
	for k := range got {
		if !help[k] {
			undocumented = append(undocumented, k)
		}
	}
	for k := range help {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(missing)
	if len(undocumented) > 0 || len(missing) > 0 {
		t.Errorf("%s: fields the output has but help leaves out: %v; fields help names but the output lacks: %v", what, undocumented, missing)
	}
}

// TestDfHelpDocumentsItsJSON: the fields help df names are exactly those
// of the real --json output, over a FAT volume (serial) and an ext4 one
// (uuid) (issue 29, item 6: help df said type and id, the output has
// filesystem and serial).
func TestDfHelpDocumentsItsJSON(t *testing.T) {
	help := jsonFieldsOfHelp(t, "df")
	dir := t.TempDir()
	fat, creds := newTestVolume(t, dir, "fat.hc", "--size", "1M")
	got := jsonKeys(t, append([]string{"df", fat, "--json"}, creds...)...)
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Logf("mkfs.ext4 (e2fsprogs) not installed: only the FAT fields are compared, uuid is not")
		delete(help, "uuid")
	} else {
		ext, _ := newTestVolume(t, dir, "ext.hc", "--size", "3M", "--filesystem", "none")
		img := filepath.Join(dir, "ext.img")
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", img, "2M").CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v\n%s", err, out)
		}
		writeImage(t, ext, img)
		for k := range jsonKeys(t, append([]string{"df", ext, "--json"}, creds...)...) {
			got[k] = true
		}
	}
	compareFields(t, "df --json", help, got)
}

// TestInfoHelpDocumentsItsJSON: help info names the fields info --json
// prints (the JSON names of volume.Info, the command-line contract), and
// every field of a real output (issue 29, item 6: the help pointed at a
// file that is not in the repository).
func TestInfoHelpDocumentsItsJSON(t *testing.T) {
	help := jsonFieldsOfHelp(t, "info")
	contract := map[string]bool{}
	it := reflect.TypeOf(volume.Info{})
	for i := 0; i < it.NumField(); i++ {
		if tag, _, _ := strings.Cut(it.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			contract[tag] = true
		}
	}
	compareFields(t, "volume.Info's JSON names", help, contract)
	vol, creds := newTestVolume(t, t.TempDir(), "v.hc", "--size", "1M")
	for k := range jsonKeys(t, append([]string{"info", vol, "--json"}, creds...)...) {
		if !help[k] {
			t.Errorf("info --json prints %q, which help info leaves out", k)
		}
	}
}

// TestHelpCitesOnlyRepositoryFiles: no help text points at a file that
// is not in the repository (issue 29, item 6: help info cited the outside design document).
func TestHelpCitesOnlyRepositoryFiles(t *testing.T) {
	for _, c := range visibleCommands() {
		text := helpOfCommand(c).text
		for _, w := range strings.Fields(text) {
			w = strings.Trim(w, ".,;:()'\"`")
			if !strings.HasSuffix(w, ".md") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", w)); err != nil && w != "docs/ARCHITECTURE.md" {
				t.Errorf("help %s cites %s, which is not in the repository", c.name, w)
			}
		}
	}
}

// TestEveryHelpDescribes: every command's help says what it does between
// its usage line and its options (issue 29, item 6: df and mkdir said
// nothing), and the filesystem commands name every filesystem they read.
func TestEveryHelpDescribes(t *testing.T) {
	for _, c := range visibleCommands() {
		text := helpOfCommand(c).text
		_, rest, _ := strings.Cut(text, "\n")
		desc, _, _ := strings.Cut(rest, "\nOptions:\n")
		if len(strings.Fields(desc)) < 8 {
			t.Errorf("help %s describes nothing before its options:\n%s", c.name, text)
		}
	}
	for _, name := range []string{"ls", "get", "df", "mkdir", "rm", "put"} {
		text := helpOfCommand(commands[name]).text
		for _, fs := range []string{"FAT", "exFAT", "ext2/3/4", "NTFS"} {
			if !strings.Contains(text, fs) {
				t.Errorf("help %s does not name %s", name, fs)
			}
		}
	}
}
