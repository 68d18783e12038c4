package archive

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Select returns the members names select, in the order added, each once:
// a name selects that member and, for a directory member (or a name that
// is only a prefix of paths), everything under it. Names are cleaned
// first ("a/./b/" is "a/b"; "" and "/" select everything), and no names
// select everything. A name that selects nothing is an error wrapping
// ErrNotExist.
func (a *Archive) Select(names []string) ([]Entry, error) {
	all := a.List()
	if len(names) == 0 {
		return all, nil
	}
	var out []Entry
	seen := map[string]bool{}
	for _, n := range names {
		n = SelectName(n)
		found := false
		for _, e := range all {
			if e.Name == n || strings.HasPrefix(e.Name, n+"/") || n == "" {
				found = true
				if !seen[e.Name] {
					seen[e.Name] = true
					out = append(out, e)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: %w", n, fs.ErrNotExist)
		}
	}
	return out, nil
}

// SelectName is the member name Select looks for when given n: cleaned,
// without leading or trailing slashes.
func SelectName(n string) string {
	return strings.Trim(path.Clean("/"+n), "/")
}
