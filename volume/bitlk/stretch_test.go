package bitlk

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf16"
)

// referenceStretch is the stretch as libbde's documentation words it: a
// structure of last digest, initial digest, salt and a 64-bit counter,
// hashed whole each round with a fresh hash.
func referenceStretch(initial [32]byte, salt [16]byte, rounds int) [32]byte {
	var st struct {
		last, initial [32]byte
		salt          [16]byte
		count         uint64
	}
	st.initial, st.salt = initial, salt
	for i := 0; i < rounds; i++ {
		h := sha256.New()
		h.Write(st.last[:])
		h.Write(st.initial[:])
		h.Write(st.salt[:])
		binary.Write(h, binary.LittleEndian, st.count)
		copy(st.last[:], h.Sum(nil))
		st.count++
	}
	return st.last
}

// kernels lists the stretch kernels this machine can run.
func kernels() []kernel {
	ks := []kernel{kernelSum256, kernelWords}
	if haveAsm {
		ks = append(ks, kernelAsm)
	}
	return ks
}

func TestStretchMatchesReference(t *testing.T) {
	initial := sha256.Sum256([]byte("initial"))
	var salt [16]byte
	copy(salt[:], "0123456789abcdef")
	t.Logf("this machine's kernel: %s (assembly %s: %v)", stretchKernel, asmName, haveAsm)
	for _, k := range kernels() {
		// 70000 crosses a context poll, where the assembly's chunks join.
		for _, n := range []int{1, 2, 1000, 70000} {
			got, err := stretchRounds(context.Background(), &initial, &salt, uint64(n), k)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceStretch(initial, salt, n); got != want {
				t.Errorf("%s, %d rounds: %x, want %x", k, n, got, want)
			}
		}
	}
}

// TestStretchKernelsAgree runs the full 2^20 rounds with every kernel from
// random inputs (the corpus checks the default kernel end to end).
func TestStretchKernelsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("full-length chains take seconds under emulation")
	}
	var initial [32]byte
	var salt [16]byte
	rand.Read(initial[:])
	rand.Read(salt[:])
	var first [32]byte
	for i, k := range kernels() {
		got, err := stretchRounds(context.Background(), &initial, &salt, StretchRounds, k)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
		} else if got != first {
			t.Errorf("%s: %x, %s gave %x", k, got, kernels()[0], first)
		}
	}
}

func TestStretchCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var initial [32]byte
	var salt [16]byte
	for _, k := range kernels() {
		if _, err := stretchRounds(ctx, &initial, &salt, StretchRounds, k); err != context.Canceled {
			t.Fatalf("%s: got %v, want context.Canceled", k, err)
		}
	}
}

// TestPasswordInitial checks the UTF-16LE conversion, surrogate pairs
// included, against the standard library's encoder.
func TestPasswordInitial(t *testing.T) {
	for _, pw := range []string{"anaconda", "anaconda£", "пароль-😀-密码", ""} {
		u := utf16.Encode([]rune(pw))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			binary.LittleEndian.PutUint16(b[2*i:], c)
		}
		h := sha256.Sum256(b)
		if got, want := passwordInitial([]byte(pw)), sha256.Sum256(h[:]); got != want {
			t.Errorf("%q: %x, want %x", pw, got, want)
		}
	}
	// Invalid UTF-8 is taken as U+FFFD, as the standard library does.
	if passwordInitial([]byte{0xff}) != passwordInitial([]byte("\uFFFD")) {
		t.Error("invalid UTF-8 is not U+FFFD")
	}
}

func TestParseRecoveryPassword(t *testing.T) {
	const rp = "042647-302313-590458-071500-554323-116567-412181-516978"
	k, err := ParseRecoveryPassword(rp)
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint16(k[:]) != 42647/11 || binary.LittleEndian.Uint16(k[14:]) != 516978/11 {
		t.Fatalf("key %x", k[:])
	}
	for _, same := range []string{strings.ReplaceAll(rp, "-", ""), strings.ReplaceAll(rp, "-", " "), " " + rp + "\n"} {
		if k2, err := ParseRecoveryPassword(same); err != nil || !bytes.Equal(k2[:], k[:]) {
			t.Errorf("%q: %x, %v", same, k2, err)
		}
	}
	for _, tc := range []struct{ in, msg string }{
		{"042647-302313-590458-071500-554323-116567-412181-516979", "group 8 (516979) fails its check digit"},
		{"042647-302313-590548-071500-554323-116567-412181-516978", "group 3 (590548) fails its check digit"},
		{"720896-302313-590458-071500-554323-116567-412181-516978", "group 1 (720896) is too large"},
		{"042647-302313-590458-071500-554323-116567-412181", "42 digits, want 48"},
		{"042647-302313-590458-071500-554323-116567-412181-51697a", "not a digit"},
		{"04264-7302313-590458-071500-554323-116567-412181-516978", "separator after 5 digits"},
	} {
		_, err := ParseRecoveryPassword(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.msg)
		}
	}
	if !looksLikeRecoveryPassword([]byte(rp+"\n")) || looksLikeRecoveryPassword([]byte("anaconda")) {
		t.Error("looksLikeRecoveryPassword")
	}
}

func FuzzParseRecoveryPassword(f *testing.F) {
	f.Add("042647-302313-590458-071500-554323-116567-412181-516978")
	f.Add("000000000000000000000000000000000000000000000000")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseRecoveryPassword(s)
		if err != nil {
			return
		}
		// A key that parsed prints back to a password that parses to it.
		var b strings.Builder
		for g := 0; g < 8; g++ {
			if g > 0 {
				b.WriteByte('-')
			}
			v := int(binary.LittleEndian.Uint16(k[2*g:])) * 11
			b.WriteString(strings.Repeat("0", 6-len(itoa(v))) + itoa(v))
		}
		k2, err := ParseRecoveryPassword(b.String())
		if err != nil || *k2 != *k {
			t.Fatalf("%q -> %x -> %q -> %x, %v", s, k[:], b.String(), k2, err)
		}
	})
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var d []byte
	for ; v > 0; v /= 10 {
		d = append([]byte{byte('0' + v%10)}, d...)
	}
	return string(d)
}
