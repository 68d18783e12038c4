package fsops

import (
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// TestPlanRoom: a directory's room is its new files' names and the
// temporary names there at once (a batch's worth at most); a replaced
// file keeps its entry.
func TestPlanRoom(t *testing.T) {
	jobs := []putJob{
		{dest: "/a", dir: true},
		{dest: "/a/one.txt"},
		{dest: "/a/two.txt", replaces: true},
		{dest: "/a/three.txt"},
		{dest: "/b.txt"},
	}
	r := planRoom(jobs, 2)
	var names, temps []string
	for _, n := range r["/a"] {
		if atomicfile.IsTempName(n) {
			temps = append(temps, n)
		} else {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, " "); got != "one.txt three.txt" {
		t.Errorf("/a: new names %q, want one.txt three.txt", got)
	}
	if len(temps) != 2 {
		t.Errorf("/a: %d temporary names, want 2 (a batch's worth): %q", len(temps), temps)
	}
	if len(r["/"]) != 2 {
		t.Errorf("/: %q, want b.txt and one temporary name", r["/"])
	}
}
