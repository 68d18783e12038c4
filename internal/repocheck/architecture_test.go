package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const architectureDoc = "docs/ARCHITECTURE.md"

// modulePath is the import path prefix of the module's packages.
const modulePath = "github.com/cryptvol/cryptvol/"

// section returns the lines of the part of the document under the
// heading (any level) whose text is title, up to the next heading of the
// same or a higher level.
func section(t *testing.T, title string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, architectureDoc))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	level := 0
	for _, line := range strings.Split(string(src), "\n") {
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		isHeading := hashes > 0 && strings.HasPrefix(line[hashes:], " ")
		switch {
		case level == 0 && isHeading && strings.TrimSpace(line[hashes:]) == title:
			level = hashes
		case level > 0 && isHeading && hashes <= level:
			return out
		case level > 0:
			out = append(out, line)
		}
	}
	if level == 0 {
		t.Fatalf("%s has no section %q", architectureDoc, title)
	}
	return out
}

// tableRows splits the rows of the Markdown tables in lines into cells,
// leaving out header and separator rows.
func tableRows(lines []string) [][]string {
	var rows [][]string
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---") {
			continue // the header
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	return rows
}

// goList runs go list in the module root and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestPackageMapComplete: the package map of docs/ARCHITECTURE.md has a
// line for every package of the module and none for a package that does
// not exist.
func TestPackageMapComplete(t *testing.T) {
	listed := map[string]bool{}
	for _, row := range tableRows(section(t, "Package map")) {
		name := strings.Trim(row[0], "`")
		if listed[name] {
			t.Errorf("package map lists %s twice", name)
		}
		listed[name] = true
	}
	have := map[string]bool{}
	for _, p := range goList(t, "./...") {
		name := strings.TrimPrefix(p, modulePath)
		have[name] = true
		if !listed[name] {
			t.Errorf("package %s is missing from the package map of %s", name, architectureDoc)
		}
	}
	for name := range listed {
		if !have[name] {
			t.Errorf("the package map of %s lists %s, which go list does not know", architectureDoc, name)
		}
	}
}

// exitCodeRE finds the start of one entry of the "Exit codes:" paragraph
// of cryptvol help ("0 success; 1 usage error ...").
var exitCodeRE = regexp.MustCompile(`(?:^|; )(\d+) `)

// TestExitCodesMatchHelp: the exit-code table of docs/ARCHITECTURE.md
// says, code for code and word for word, what `cryptvol help` prints.
func TestExitCodesMatchHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/cryptvol; skipped in -short mode")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	bin := filepath.Join(t.TempDir(), "cryptvol")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cryptvol")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cryptvol: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "help").Output()
	if err != nil {
		t.Fatalf("cryptvol help: %v", err)
	}
	help := helpExitCodes(t, string(out))

	doc := map[string]string{}
	var codes []string
	for _, row := range tableRows(section(t, "Exit codes")) {
		if len(row) < 2 {
			t.Fatalf("exit code row %q has no meaning column", row)
		}
		doc[row[0]] = row[1]
		codes = append(codes, row[0])
	}
	for code, meaning := range help {
		if doc[code] != meaning {
			t.Errorf("exit code %s: cryptvol help says %q, %s says %q", code, meaning, architectureDoc, doc[code])
		}
	}
	for _, code := range codes {
		if _, ok := help[code]; !ok {
			t.Errorf("%s documents exit code %s, which cryptvol help does not", architectureDoc, code)
		}
	}
}

// helpExitCodes parses the "Exit codes:" paragraph of cryptvol help
// into code → meaning.
func helpExitCodes(t *testing.T, help string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(help, "\nExit codes: ")
	if !ok {
		t.Fatalf("cryptvol help has no \"Exit codes:\" paragraph:\n%s", help)
	}
	para, _, _ := strings.Cut(rest, "\n\n")
	para = strings.TrimSuffix(strings.Join(strings.Fields(para), " "), ".")
	locs := exitCodeRE.FindAllStringSubmatchIndex(para, -1)
	codes := map[string]string{}
	for i, loc := range locs {
		end := len(para)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		codes[para[loc[2]:loc[3]]] = para[loc[1]:end]
	}
	if len(codes) < 2 {
		t.Fatalf("could not parse the exit codes out of %q", para)
	}
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("cryptvol help: exit codes %v", keys)
	return codes
}
