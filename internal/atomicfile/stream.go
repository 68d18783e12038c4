package atomicfile

import (
	"io"
	"os"
)

// WriteOrStream is Write for an output that may also be a device or a
// pipe (/dev/null, /dev/stdout, a FIFO): an existing path that is not a
// regular file is opened and written in place, as nothing can be renamed
// over it; any other path is written through a temporary file.
func WriteOrStream(path string, o Options, fill func(w io.Writer) error) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return Write(path, o, fill)
}
