package fatcore

import "io"

// ReadFull reads all of p at off: a short read is io.ErrUnexpectedEOF
// even when the device said io.EOF (or nothing), since every read either
// package makes lies inside the volume and must be whole.
func ReadFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// WriteFull writes all of p at off; a short write without an error is
// io.ErrShortWrite, as io.Writer's contract asks.
func WriteFull(w io.WriterAt, p []byte, off int64) error {
	n, err := w.WriteAt(p, off)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}
