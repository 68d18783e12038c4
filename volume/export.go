package volume

import (
	"context"
	"errors"
	"io"
)

// ExportInterrupted is the error of Export stopped by its context after
// Done of Total bytes; it wraps context.Canceled.
type ExportInterrupted struct{ Done, Total int64 }

func (e *ExportInterrupted) Error() string { return "interrupted" }
func (e *ExportInterrupted) Unwrap() error { return context.Canceled }

// exportChunk is what Export reads and writes at a time: large, so that
// the sectors of each read are decrypted in parallel.
const exportChunk = 4 << 20

// Export writes the whole decrypted data area to w, in large chunks.
// Before each chunk it checks ctx, and stops with an *ExportInterrupted
// when it is done; progress, if not nil, hears the bytes written so far
// after each chunk.
func (v *Volume) Export(ctx context.Context, w io.Writer, progress func(done int64)) error {
	size := v.Size()
	buf := make([]byte, exportChunk)
	for off := int64(0); off < size; {
		if ctx.Err() != nil {
			return &ExportInterrupted{Done: off, Total: size}
		}
		n := min(int64(len(buf)), size-off)
		if _, err := v.ReadAt(buf[:n], off); err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return err
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		off += n
		if progress != nil {
			progress(off)
		}
	}
	return nil
}
