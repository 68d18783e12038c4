// Package opensslenc reads and writes the file format of `openssl enc`, so
// archives made with OpenSSL stay readable where OpenSSL is not installed,
// and files made here decrypt with `openssl enc -d`.
//
// The format has no structure of its own beyond an optional 16-byte header:
//
//	"Salted__" || salt (8 bytes) || ciphertext
//
// The header is present when a password was used with a random salt (the
// default); -nosalt, a fixed -S salt and raw -K keys leave it out. The key
// and IV come from the password either through EVP_BytesToKey with one
// iteration (OpenSSL's legacy derivation; -md picks the hash, SHA-256 since
// OpenSSL 1.1.0, MD5 before) or through PBKDF2-HMAC (-pbkdf2, -iter N; 10000
// iterations by default), which derives key||IV in one call. Block modes
// (CBC, ECB) pad with PKCS#7 unless -nopad; stream modes (CTR, CFB, CFB8,
// OFB, ChaCha20, RC4) do not pad. The whole output may be base64-encoded in
// 64-character lines (-a) or a single line (-a -A).
//
// Everything streams with fixed buffers: memory does not grow with the
// input. Decryption holds back only the last cipher block until the end of
// the input, to check and strip its padding. A wrong password or damaged
// last block shows as bad padding (ErrBadDecrypt); as in OpenSSL, the
// padding check is the only integrity check the format has, so about one
// wrong password in 256 still decrypts "successfully" to garbage in the
// padded modes, and the stream modes cannot tell at all.
//
// ParseArgs understands `openssl enc`'s own spelling of the options
// (single-dash long options such as -in, -aes-256-cbc, -pass pass:x).
package opensslenc
