package opensslenc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
)

// ChunkSize is how much input Run reads and transforms per step: large
// enough that system calls cost little, small enough that the input and
// output buffers stay in the L2 cache. Run's memory is about twice this,
// whatever the size of the data.
const ChunkSize = 256 << 10

// Run streams the whole input through the cipher into the output. For
// encryption it writes the Salted__ header first; for decryption of a
// padded mode it checks and strips the padding at the end, returning
// ErrBadDecrypt when it is wrong. Everything before the last block has
// been written by then: callers that must not keep output from a failed
// run write to a temporary file (as `cryptvol enc` does).
func (o *Operation) Run(ctx context.Context) error {
	if o.key == nil {
		return errors.New("opensslenc: operation already closed")
	}
	t, err := o.p.Cipher.newTransform(o.key, o.iv, o.decrypt)
	if err != nil {
		return err
	}
	defer t.wipe()
	bs := o.p.Cipher.BlockSize
	in := make([]byte, ChunkSize+bs)
	out := make([]byte, ChunkSize+bs)
	defer clear(out)
	defer clear(in)
	if o.decrypt {
		return o.decryptStream(ctx, t, in, out)
	}
	w := o.dst
	var b64 *base64Writer
	if o.p.Base64 {
		b64 = newBase64Writer(o.dst, o.p.SingleLine)
		w = b64
	}
	if o.header {
		if _, err := w.Write(append([]byte(Magic), o.salt...)); err != nil {
			return err
		}
	}
	if err := o.encryptStream(ctx, t, w, in, out); err != nil {
		return err
	}
	if b64 != nil {
		return b64.Close()
	}
	return nil
}

func (o *Operation) encryptStream(ctx context.Context, t transform, w io.Writer, in, out []byte) error {
	c := o.p.Cipher
	bs := c.BlockSize
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, eof, err := readFull(o.src, in[:ChunkSize])
		if err != nil {
			return err
		}
		if eof && c.Padded() {
			if !o.p.NoPad {
				pad := bs - n%bs
				for i := n; i < n+pad; i++ {
					in[i] = byte(pad)
				}
				n += pad
			} else if n%bs != 0 {
				return ErrNotBlockMultiple
			}
		}
		t.crypt(out[:n], in[:n])
		if _, err := w.Write(out[:n]); err != nil {
			return err
		}
		if eof {
			return nil
		}
	}
}

func (o *Operation) decryptStream(ctx context.Context, t transform, in, out []byte) error {
	c := o.p.Cipher
	bs := c.BlockSize
	padded := c.Padded() && !o.p.NoPad
	carry := 0 // held-back bytes at the start of in: the last block, for the padding check
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, eof, err := readFull(o.src, in[carry:ChunkSize])
		if err != nil {
			return err
		}
		total := carry + n
		if !eof {
			keep := 0
			if padded {
				keep = bs
			}
			k := total - keep
			t.crypt(out[:k], in[:k])
			if _, err := o.dst.Write(out[:k]); err != nil {
				return err
			}
			copy(in, in[k:total])
			carry = keep
			continue
		}
		if c.Padded() && total%bs != 0 {
			return fmt.Errorf("%w: the ciphertext is not a whole number of %d-byte blocks", ErrTruncated, bs)
		}
		if padded && total == 0 {
			return fmt.Errorf("%w: no ciphertext block", ErrTruncated)
		}
		t.crypt(out[:total], in[:total])
		if padded {
			pad, ok := checkPadding(out[total-bs : total])
			if !ok {
				return ErrBadDecrypt
			}
			total -= pad
		}
		_, err = o.dst.Write(out[:total])
		return err
	}
}

// checkPadding validates PKCS#7 padding on the last block as OpenSSL does
// (last byte n in 1..blocksize, the last n bytes all equal to n), without
// branching on the block's contents.
func checkPadding(last []byte) (int, bool) {
	bs := len(last)
	n := int(last[bs-1])
	good := subtle.ConstantTimeLessOrEq(1, n) & subtle.ConstantTimeLessOrEq(n, bs)
	for i := 0; i < bs; i++ {
		inPad := subtle.ConstantTimeLessOrEq(bs-n, i) // byte i is one of the last n
		same := subtle.ConstantTimeByteEq(last[i], byte(n))
		good &= same | (inPad ^ 1)
	}
	return n, good == 1
}

// readFull fills buf unless the input ends first; eof reports that it
// did (io.EOF from the reader, never confused with other errors).
func readFull(r io.Reader, buf []byte) (n int, eof bool, err error) {
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}
