package repocheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citedDocRE finds a citation of one of the project's design documents,
// with whatever path precedes the name. The design document the project
// started from lived outside the repository; a reader of the code cannot
// follow a citation of it, so every citation must name a file that is
// here (docs/ARCHITECTURE.md).
var citedDocRE = regexp.MustCompile(`[\w./-]*\b(?:DESIGN|ARCHITECTURE)\.md\b`)

// citationExceptions are tracked files allowed, for now, to cite a file
// that is not in the repository, each with the reason. The list only
// shrinks.
var citationExceptions = map[string]string{}

// TestCitedDocumentsExist: no tracked file cites a design document that
// does not exist in the repository, whether named bare, relative to the
// citing file or relative to the module root.
func TestCitedDocumentsExist(t *testing.T) {
	for _, file := range trackedFiles(t) {
		if _, ok := citationExceptions[file]; ok {
			continue
		}
		if isBinary(file) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, cited := range citedDocRE.FindAllString(line, -1) {
				if !citationResolves(file, cited) {
					t.Errorf("%s:%d cites %s, which is not in the repository (cite docs/ARCHITECTURE.md)", file, i+1, cited)
				}
			}
		}
	}
}

// TestCitationExceptionsStillNeeded keeps the exception list honest: an
// entry whose file no longer cites a missing document must go.
func TestCitationExceptionsStillNeeded(t *testing.T) {
	for file, why := range citationExceptions {
		src, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Errorf("exception %s (%s): %v", file, why, err)
			continue
		}
		stale := true
		for _, cited := range citedDocRE.FindAllString(string(src), -1) {
			if !citationResolves(file, cited) {
				stale = false
			}
		}
		if stale {
			t.Errorf("%s no longer cites a missing document: remove it from citationExceptions", file)
		}
	}
}

// citationResolves reports whether a cited path names a file of the
// repository: relative to the citing file's directory, to the module
// root, or (a bare name) in docs/.
func citationResolves(file, cited string) bool {
	candidates := []string{path.Join(path.Dir(file), cited), path.Clean(cited)}
	if !strings.Contains(cited, "/") {
		candidates = append(candidates, path.Join("docs", cited))
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, "../") {
			continue // outside the repository
		}
		if st, err := os.Stat(filepath.Join(repoRoot, c)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// isBinary reports whether a tracked file is one whose text is not
// prose or code (images, archives, test images).
func isBinary(file string) bool {
	switch strings.ToLower(path.Ext(file)) {
	case ".svg", ".png", ".jpg", ".gz", ".xz", ".zip", ".img", ".bin", ".tc", ".hc":
		return true
	}
	return false
}
