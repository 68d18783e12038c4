package opensslenc

import (
	"encoding/base64"
	"fmt"
	"io"
)

// base64Writer encodes as OpenSSL's base64 BIO does: standard alphabet
// with padding, lines of 64 characters each ending in a newline, or one
// line and no newline at all with SingleLine (-A).
type base64Writer struct {
	enc   io.WriteCloser
	lines *lineWriter
}

func newBase64Writer(w io.Writer, singleLine bool) *base64Writer {
	lw := &lineWriter{w: w, width: 64}
	if singleLine {
		lw.width = 0
	}
	return &base64Writer{enc: base64.NewEncoder(base64.StdEncoding, lw), lines: lw}
}

func (b *base64Writer) Write(p []byte) (int, error) { return b.enc.Write(p) }

// Close flushes the last quantum and ends the last line.
func (b *base64Writer) Close() error {
	if err := b.enc.Close(); err != nil {
		return err
	}
	return b.lines.finish()
}

// lineWriter breaks text into lines of width characters (0: no breaks).
type lineWriter struct {
	w     io.Writer
	width int
	col   int
	buf   []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if l.width == 0 {
		return l.w.Write(p)
	}
	l.buf = l.buf[:0]
	for rest := p; len(rest) > 0; {
		n := min(len(rest), l.width-l.col)
		l.buf = append(l.buf, rest[:n]...)
		rest = rest[n:]
		l.col += n
		if l.col == l.width {
			l.buf = append(l.buf, '\n')
			l.col = 0
		}
	}
	if _, err := l.w.Write(l.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (l *lineWriter) finish() error {
	if l.width == 0 || l.col == 0 {
		return nil
	}
	l.col = 0
	_, err := l.w.Write([]byte{'\n'})
	return err
}

// base64Reader decodes base64 text in lines of any length (or one line),
// and reports undecodable text as ErrCorrupt while passing the
// underlying reader's own errors through unchanged.
type base64Reader struct {
	dec   io.Reader
	under *errRecorder
}

func newBase64Reader(r io.Reader) *base64Reader {
	er := &errRecorder{r: r}
	return &base64Reader{dec: base64.NewDecoder(base64.StdEncoding, er), under: er}
}

func (b *base64Reader) Read(p []byte) (int, error) {
	n, err := b.dec.Read(p)
	if err != nil && err != io.EOF && err != b.under.err {
		err = fmt.Errorf("%w: base64: %v", ErrCorrupt, err)
	}
	return n, err
}

// errRecorder remembers the last error of the reader it wraps.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}
