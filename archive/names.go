package archive

import (
	"io/fs"
	"strings"
)

// ValidName reports whether name may name a member: a slash-separated
// relative path as io/fs.ValidPath defines it (valid UTF-8, no empty, "."
// or ".." elements, no leading or trailing slash), other than "." itself,
// without NUL bytes, at most MaxNameLen bytes. Names are stored byte for
// byte: no Unicode normalisation, case-sensitive.
func ValidName(name string) bool {
	return name != "." && len(name) <= MaxNameLen && fs.ValidPath(name) && !strings.ContainsRune(name, 0)
}
