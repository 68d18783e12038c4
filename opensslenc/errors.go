package opensslenc

import "errors"

// Errors that callers tell apart with errors.Is.
var (
	// ErrBadDecrypt: the last block's padding is wrong, which means a
	// wrong password or key, or a damaged last block (OpenSSL prints
	// "bad decrypt").
	ErrBadDecrypt = errors.New("bad decrypt: wrong password or key, or damaged data")
	// ErrBadMagic: a salted file was expected but the input does not
	// start with "Salted__" (OpenSSL: "bad magic number").
	ErrBadMagic = errors.New(`bad magic number: the input does not start with "Salted__" (made with -nosalt, -S or -K? say so)`)
	// ErrTruncated: the input ends inside the header or inside a cipher
	// block, or a padded ciphertext is empty.
	ErrTruncated = errors.New("truncated input")
	// ErrCorrupt: the base64 text cannot be decoded.
	ErrCorrupt = errors.New("corrupt input")
	// ErrNotBlockMultiple: -nopad encryption of input that is not a whole
	// number of blocks.
	ErrNotBlockMultiple = errors.New("data not a multiple of the block length (-nopad needs whole blocks)")
	// ErrUnknownCipher and ErrUnknownDigest report names this package
	// does not know.
	ErrUnknownCipher = errors.New("unknown cipher")
	ErrUnknownDigest = errors.New("unknown digest")
	// ErrNoKey: neither a password nor a key was given, or a key without
	// the IV the cipher needs (OpenSSL: "iv undefined").
	ErrNoKey = errors.New("no key")
)
