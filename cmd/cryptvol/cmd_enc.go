package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/opensslenc"
)

func init() {
	register(&command{
		name:    "enc",
		summary: "encrypt or decrypt a file the way `openssl enc` does (same flags, same format)",
		usage: `Usage: cryptvol enc -CIPHER [-e|-d] [-in FILE] [-out FILE] [options]

Reads and writes the format of 'openssl enc' with OpenSSL's own option
spellings: single-dash long options (-in, -aes-256-cbc, -pass pass:x), also
accepted with two dashes or as -option=value. Files made by either program
decrypt with the other.

Options:
  -e / -d              encrypt (default) / decrypt
  -CIPHER, -cipher NAME  aes-{128,192,256}-{cbc,ctr,cfb,cfb8,ofb,ecb},
                       camellia-*-*, chacha20, des-ede3-cbc, bf-cbc, rc4, ...
                       (-list shows all); rc4, ecb, des and bf are for old
                       files: encrypting with them warns
  -in FILE, -out FILE  input and output (default standard input / output);
                       -out is written to a temporary file and renamed when
                       complete, so a failure leaves nothing behind; it must
                       not be the input file; a new file is readable by its
                       owner only; a device such as /dev/null is written
                       directly
  -k PASS              password on the command line (visible to other users)
  -pass SRC            pass:TEXT, env:VAR, file:PATH, fd:N or stdin
  -kfile FILE          password from the first line of FILE
  -md DIGEST           md5, sha1, sha256 (default), sha512, ... for the key
  -pbkdf2, -iter N     PBKDF2 (10000 iterations, or N) instead of OpenSSL's
                       legacy EVP_BytesToKey; -iter implies -pbkdf2
  -salt / -nosalt      random salt in a "Salted__" header (default) / none
  -S HEX               this salt (no header is written or read)
  -K HEX, -iv HEX      raw key and IV instead of a password
  -nopad               no PKCS#7 padding (input must be whole blocks)
  -a, -base64 [-A]     base64 output (decrypting: input), -A on one line
  -p / -P              print salt, key and IV / print them and stop
  -v                   print the byte counts
  -list                the supported ciphers

OpenSSL's -provider, -propquery, -bufsize, -rand and -debug are accepted and
ignored, so 'openssl enc -provider legacy ...' lines run unchanged.

A wrong password shows as bad padding in the CBC and ECB modes ("bad
decrypt", exit 2): the format has no other check, so about 1 wrong password
in 256 still "succeeds" with garbage, and the stream modes (ctr, cfb, ofb,
chacha20, rc4) cannot tell at all. A truncated or damaged file gives exit 3.
Written to standard output, the data before the last block is already out
when the padding check fails.

Exit codes: 0 success; 1 usage; 2 bad decrypt (wrong password) or no
"Salted__" header; 3 truncated or damaged input; 4 I/O error; 5 -out is the
input file.

Examples:
  cryptvol enc -aes-256-cbc -pbkdf2 -in backup.tar -out backup.tar.enc -pass file:pw.txt
  cryptvol enc -d -aes-256-cbc -pbkdf2 -in backup.tar.enc -out backup.tar -pass file:pw.txt
  cryptvol enc -d -aes-256-cbc -md md5 -a -in old.b64 -k secret
`,
		run: runEnc,
	})
}

func runEnc(ctx context.Context, a *app, args []string) error {
	c := commands["enc"]
	ea, err := opensslenc.ParseArgs(args)
	if err != nil {
		return encError(err)
	}
	switch {
	case ea.Help:
		fmt.Fprint(a.stdout, trimUsage(c.usage))
		return nil
	case ea.List:
		printEncCiphers(a.stdout)
		return nil
	case ea.None:
		return usageError(errors.New("-none is not supported: cryptvol enc always encrypts (see -list)"))
	}
	for _, ig := range ea.Ignored {
		a.warnf("ignoring %s (an OpenSSL setting with no meaning here)", ig)
	}
	p, warnings, err := ea.Params(opensslenc.PasswordSource{Stdin: a.stdin})
	if err != nil {
		return encError(err)
	}
	defer clear(p.Password)
	for _, w := range warnings {
		a.warnf("%s", w)
	}
	if p.Password == nil && p.Key == nil {
		if p.Password, err = promptEncPassword(a, p.Cipher.Name, !ea.Decrypt); err != nil {
			return err
		}
	}
	if !ea.Decrypt {
		if p.Cipher.Weak {
			a.warnf("%s is weak; it is here to decrypt old files (prefer -aes-256-cbc or -aes-256-ctr)", p.Cipher.Name)
		}
		if p.Password != nil && !p.PBKDF2 {
			a.warnf("legacy key derivation (EVP_BytesToKey, one hash round); -pbkdf2 is much stronger (decrypt with -pbkdf2 too)")
		}
	}

	in := a.stdin
	if ea.In != "" && ea.In != "-" {
		f, err := os.Open(ea.In)
		if err != nil {
			return withCode(exitIO, err)
		}
		defer f.Close()
		in = f
	}
	counted := &opensslenc.CountingReader{R: in}

	// one prepares the operation on dst (reading the header when
	// decrypting), prints the keys for -p/-P and runs it.
	one := func(dst io.Writer) error {
		var op *opensslenc.Operation
		var err error
		if ea.Decrypt {
			op, err = opensslenc.NewDecryption(ctx, p, dst, counted)
		} else {
			op, err = opensslenc.NewEncryption(ctx, p, dst, counted)
		}
		if err != nil {
			return encError(err)
		}
		defer op.Close()
		if ea.Print > 0 {
			fmt.Fprint(a.stdout, op.KeysText())
			if ea.Print == 2 {
				return nil
			}
		}
		return encError(op.Run(ctx))
	}

	out := &opensslenc.CountingWriter{}
	switch {
	case ea.Print == 2:
		err = one(io.Discard)
	case ea.Out == "" || ea.Out == "-":
		out.W = a.stdout
		err = one(out)
	default:
		err = writeEncOutput(a, ea.In, ea.Out, func(w io.Writer) error {
			out.W = w
			return one(out)
		})
	}
	if errors.Is(err, context.Canceled) {
		if ea.Out == "" || ea.Out == "-" {
			return interrupted("%d bytes read, %d written to standard output", counted.N, out.N)
		}
		return interrupted("%d bytes read; %s not written (its temporary file was removed)", counted.N, ea.Out)
	}
	if err == nil && ea.Verbose {
		fmt.Fprintf(a.stderr, "bytes read   : %8d\nbytes written: %8d\n", counted.N, out.N)
	}
	return err
}

// writeEncOutput writes the output file through a temporary file renamed
// when complete (atomicfile.WriteOrStream: a device or pipe, such as
// /dev/null, is written directly), refusing the input file itself.
func writeEncOutput(a *app, inName, outName string, fill func(w io.Writer) error) error {
	if inName != "" && inName != "-" {
		st, err := os.Stat(outName)
		if ist, ierr := os.Stat(inName); err == nil && ierr == nil && os.SameFile(st, ist) {
			return withCode(exitDestroy, fmt.Errorf("-out %s is the input file: it would be destroyed", outName))
		}
	}
	return atomicfile.WriteOrStream(outName, atomicfile.Options{KeepMode: true, Leftover: a.leftover}, fill)
}

// encError maps the package's errors to the project's exit codes.
func encError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, opensslenc.ErrBadDecrypt), errors.Is(err, opensslenc.ErrBadMagic):
		return withCode(exitAuth, err)
	case errors.Is(err, opensslenc.ErrTruncated), errors.Is(err, opensslenc.ErrCorrupt):
		return withCode(exitDamaged, err)
	case errors.Is(err, opensslenc.ErrUsage):
		return usageError(errors.New(strings.TrimPrefix(err.Error(), "usage: ")))
	case errors.Is(err, opensslenc.ErrNoKey), errors.Is(err, opensslenc.ErrUnknownCipher),
		errors.Is(err, opensslenc.ErrUnknownDigest), errors.Is(err, opensslenc.ErrNotBlockMultiple):
		return usageError(err)
	}
	return err
}

// promptEncPassword asks on the terminal, as openssl does, twice when
// encrypting.
func promptEncPassword(a *app, cipher string, verify bool) ([]byte, error) {
	if !stdinIsTerminal() {
		return nil, usageError(errors.New("no password: give -k, -kfile, -pass or -K/-iv (or run on a terminal to be asked)"))
	}
	dir := map[bool]string{true: "encryption", false: "decryption"}[verify]
	pw, err := promptPassword(a, fmt.Sprintf("enter %s %s password: ", strings.ToUpper(cipher), dir))
	if err != nil {
		return nil, err
	}
	if verify {
		again, err := promptPassword(a, "Verifying - enter "+strings.ToUpper(cipher)+" "+dir+" password: ")
		if err != nil {
			return nil, err
		}
		same := bytes.Equal(pw, again)
		clear(again)
		if !same {
			clear(pw)
			return nil, usageError(errors.New("the passwords do not match"))
		}
	}
	if pw == nil {
		pw = []byte{}
	}
	return pw, nil
}

// printEncCiphers lists the cipher names like `openssl enc -list`.
func printEncCiphers(w io.Writer) {
	fmt.Fprintln(w, "Supported ciphers:")
	names := opensslenc.CipherNames()
	for i, n := range names {
		sep := " "
		if i%3 == 2 || i == len(names)-1 {
			sep = "\n"
		}
		fmt.Fprintf(w, "-%-25s%s", n, sep)
	}
}
