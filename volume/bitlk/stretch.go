package bitlk

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// StretchRounds is the number of SHA-256 rounds of BitLocker's key
// stretch.
const StretchRounds = 1 << 20

// stretch is BitLocker's key derivation for passwords and recovery
// passwords: SHA-256 applied StretchRounds times to the 88-byte record
//
//	last digest (32) | initial digest (32) | salt (16) | round counter (8, LE)
//
// starting from a zero last digest and counter. It is one serial chain of
// 2^21 SHA-256 blocks (88 bytes pad to two), so all the time goes into
// compressions and what surrounds them: stretchKernel picks assembly
// with the SHA instructions (sha256block_amd64.s, sha256block_arm64.s),
// crypto/sha256's own assembly where it has some, or the word kernel of
// sha256block.go. Different
// protectors' chains are independent and run in parallel (unlock.go).
// ctx is polled every 64Ki rounds.
func stretch(ctx context.Context, initial *[32]byte, salt *[16]byte) ([32]byte, error) {
	return stretchRounds(ctx, initial, salt, StretchRounds, stretchKernel)
}

// A kernel runs the chain's rounds from the record's words.
type kernel int

const (
	kernelSum256 kernel = iota // crypto/sha256.Sum256 on the record's bytes
	kernelWords                // the Go word kernel
	kernelAsm                  // SHA-NI (amd64) or ARMv8 SHA2 (arm64) assembly
)

func (k kernel) String() string {
	return [...]string{"crypto/sha256", "go-words", asmName}[k]
}

// pollEvery is how many rounds run between looks at the context.
const pollEvery = 1 << 16

func stretchRounds(ctx context.Context, initial *[32]byte, salt *[16]byte, rounds uint64, k kernel) ([32]byte, error) {
	if k == kernelSum256 {
		return stretchSum256(ctx, initial, salt, rounds)
	}
	s := newChainState(initial, salt)
	defer s.wipe()
	var saltWords [4]uint32
	copy(saltWords[:], s.block2[:4])
	defer clear(saltWords[:])
	for done := uint64(0); done < rounds; {
		if done != 0 {
			if err := ctx.Err(); err != nil {
				return [32]byte{}, err
			}
		}
		n := min(rounds-done, pollEvery)
		if k == kernelAsm {
			roundsAsm(&s.last, (*[8]uint32)(s.block1[8:]), &saltWords, s.counter, n)
			s.counter += n
		} else {
			s.roundsGeneric(n)
		}
		done += n
	}
	return s.digest(), nil
}

// stretchSum256 is the chain on the record's bytes with crypto/sha256.
func stretchSum256(ctx context.Context, initial *[32]byte, salt *[16]byte, rounds uint64) ([32]byte, error) {
	var rec [88]byte
	copy(rec[32:], initial[:])
	copy(rec[64:], salt[:])
	var last [32]byte
	for round := uint64(0); round < rounds; round++ {
		if round%pollEvery == 0 && round != 0 {
			if err := ctx.Err(); err != nil {
				clear(rec[:])
				return [32]byte{}, err
			}
		}
		binary.LittleEndian.PutUint64(rec[80:], round)
		last = sha256.Sum256(rec[:])
		copy(rec[:32], last[:])
	}
	clear(rec[:])
	return last, nil
}

// passwordInitial is the initial digest of a user password:
// SHA-256(SHA-256(password as UTF-16LE, without a terminator)).
// Bytes that are not UTF-8 are taken as U+FFFD, as Windows would never
// have stored them.
func passwordInitial(password []byte) [32]byte {
	b := make([]byte, 0, 2*len(password)+4)
	for p := password; len(p) > 0; {
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			b = binary.LittleEndian.AppendUint16(b, uint16(r1))
			b = binary.LittleEndian.AppendUint16(b, uint16(r2))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(r))
		}
	}
	h := sha256.Sum256(b)
	clear(b[:cap(b)])
	d := sha256.Sum256(h[:])
	clear(h[:])
	return d
}

// recoveryKeyInitial is the initial digest of a recovery password: the
// SHA-256 of its 16-byte binary form.
func recoveryKeyInitial(key *[16]byte) [32]byte { return sha256.Sum256(key[:]) }

// ParseRecoveryPassword turns a 48-digit recovery password (eight groups
// of six digits, written with dashes, spaces or nothing between them)
// into the 16-byte key it encodes. Each group is 11 times a 16-bit value,
// so its sixth digit is a check digit: (d1 - d2 + d3 - d4 + d5) mod 11.
// The error names the group that fails, to help find a typing mistake.
func ParseRecoveryPassword(s string) (*[16]byte, error) {
	s = strings.TrimSpace(s)
	digits := make([]byte, 0, 48)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c-'0')
		case c == '-' || c == ' ':
			if len(digits)%6 != 0 || len(digits) == 0 {
				return nil, fmt.Errorf("recovery password: a separator after %d digits (groups are six digits)", len(digits))
			}
		default:
			return nil, fmt.Errorf("recovery password: %q is not a digit (want eight groups of six digits)", c)
		}
	}
	if len(digits) != 48 {
		return nil, fmt.Errorf("recovery password: %d digits, want 48 (eight groups of six)", len(digits))
	}
	var key [16]byte
	for g := 0; g < 8; g++ {
		d := digits[6*g : 6*g+6]
		check := (int(d[0]) - int(d[1]) + int(d[2]) - int(d[3]) + int(d[4]) + 2*11) % 11
		v := 0
		for _, x := range d {
			v = v*10 + int(x)
		}
		if check != int(d[5]) {
			return nil, fmt.Errorf("recovery password: group %d (%s) fails its check digit: look for a typing mistake there", g+1, groupString(d))
		}
		if v/11 > 0xffff {
			return nil, fmt.Errorf("recovery password: group %d (%s) is too large (at most 720885)", g+1, groupString(d))
		}
		binary.LittleEndian.PutUint16(key[2*g:], uint16(v/11))
	}
	clear(digits)
	return &key, nil
}

func groupString(d []byte) string {
	b := make([]byte, len(d))
	for i, x := range d {
		b[i] = '0' + x
	}
	return string(b)
}

// looksLikeRecoveryPassword reports whether a password has the shape of a
// recovery password (so that one given as the password is also tried as
// one, as cryptsetup does).
func looksLikeRecoveryPassword(p []byte) bool {
	n := 0
	for _, c := range p {
		switch {
		case c >= '0' && c <= '9':
			n++
		case c == '-' || c == ' ' || c == '\n' || c == '\r':
		default:
			return false
		}
	}
	return n == 48
}
