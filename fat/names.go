package fat

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Long file names (VFAT) are stored as UTF-16 in 13-unit slots placed
// before the 8.3 entry they belong to; every slot carries a checksum of the
// 8.3 name. Every long name also needs a unique 8.3 "short" name, made from
// it the way Windows and Linux do: upper-cased, with characters that cannot
// appear in a short name replaced by '_', spaces and extra dots dropped, and
// a "~N" tail when anything was lost or cut.

const (
	maxNameUnits = 255 // UTF-16 units in a long name
	lfnUnits     = 13  // UTF-16 units per long-name slot
)

// shortNameChars are the characters allowed in a short name besides A-Z
// and 0-9 (bytes above 0x7F are allowed too, but never generated here).
const shortNameChars = "$%'-_@~`!(){}^#&"

func isShortNameChar(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r < 0x80 && strings.ContainsRune(shortNameChars, r)
}

// foldName is the case-insensitive key FAT names are compared by.
func foldName(s string) string {
	return strings.Map(unicode.ToUpper, s)
}

// checkName reports whether name can be stored as a file name.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidName, name)
	}
	units := 0
	for _, r := range name {
		if r < 0x20 || r == 0x7F || strings.ContainsRune(`"*/:<>?\|`, r) {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidName, name, r)
		}
		units += utf16.RuneLen(r)
	}
	if units > maxNameUnits {
		return fmt.Errorf("%w: %q is longer than %d UTF-16 units", ErrInvalidName, name, maxNameUnits)
	}
	if last := name[len(name)-1]; last == ' ' || last == '.' {
		return fmt.Errorf("%w: %q ends with %q", ErrInvalidName, name, last)
	}
	return nil
}

// shortName is an 8.3 name as stored: 8 bytes of name and 3 of extension,
// space padded.
type shortName [11]byte

// String renders the short name as "NAME.EXT" (no case flags applied).
func (s shortName) String() string { return decodeShortName(s, 0) }

// Case flags in byte 12 of an entry (Windows NT): the name or extension is
// shown in lower case although stored in upper case.
const (
	ntLowerBase = 0x08
	ntLowerExt  = 0x10
)

// decodeShortName turns a stored 8.3 name into the name to show.
func decodeShortName(s shortName, nt byte) string {
	var b strings.Builder
	conv := func(p []byte, lower bool) {
		for i, c := range p {
			if i == 0 && c == 0x05 && len(p) == 8 {
				c = 0xE5 // a real 0xE5 first byte is stored as 0x05
			}
			switch {
			case c >= 0x80:
				b.WriteRune(cp850[c-0x80])
			case lower && c >= 'A' && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				b.WriteByte(c)
			}
		}
	}
	base := strings.TrimRight(string(s[:8]), " ")
	ext := strings.TrimRight(string(s[8:]), " ")
	conv([]byte(base), nt&ntLowerBase != 0)
	if ext != "" {
		b.WriteByte('.')
		conv([]byte(ext), nt&ntLowerExt != 0)
	}
	return b.String()
}

// lfnChecksum is the checksum of a short name that each long-name slot
// carries.
func lfnChecksum(s shortName) byte {
	var sum byte
	for _, c := range s {
		sum = (sum>>1 | sum<<7) + c
	}
	return sum
}

// exactShortName returns the short name and case flags for names that are
// valid 8.3 names already, needing no long name: at most 8+3 allowed
// characters, one dot, and each part wholly upper or wholly lower case.
func exactShortName(name string) (s shortName, nt byte, ok bool) {
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		base, ext = name[:i], name[i+1:]
	}
	if len(base) == 0 || len(base) > 8 || len(ext) > 3 || strings.Contains(base, ".") {
		return s, 0, false
	}
	part := func(p string, flag byte) (byte, bool) {
		hasUpper, hasLower := false, false
		for i := 0; i < len(p); i++ {
			c := p[i]
			switch {
			case c >= 'a' && c <= 'z':
				hasLower = true
			case c >= 'A' && c <= 'Z':
				hasUpper = true
			case !isShortNameChar(rune(c)):
				return 0, false
			}
		}
		if hasUpper && hasLower {
			return 0, false
		}
		if hasLower {
			return flag, true
		}
		return 0, true
	}
	f1, ok1 := part(base, ntLowerBase)
	f2, ok2 := part(ext, ntLowerExt)
	if !ok1 || !ok2 {
		return s, 0, false
	}
	for i := range s {
		s[i] = ' '
	}
	copy(s[:8], strings.ToUpper(base))
	copy(s[8:], strings.ToUpper(ext))
	return s, f1 | f2, true
}

// shortNameBasis derives the basis of a generated short name from a long
// name, and whether a "~N" tail is needed (something was dropped, replaced
// or cut).
func shortNameBasis(name string) (base, ext []byte, needTail bool) {
	trimmed := strings.TrimLeft(name, ". ")
	if trimmed != name {
		needTail = true
	}
	stem, suffix := trimmed, ""
	if i := strings.LastIndexByte(trimmed, '.'); i >= 0 {
		stem, suffix = trimmed[:i], trimmed[i+1:]
	}
	conv := func(p string, max int) []byte {
		var out []byte
		for _, r := range p {
			if r == ' ' || r == '.' {
				needTail = true
				continue
			}
			u := unicode.ToUpper(r)
			if !isShortNameChar(u) {
				u = '_'
				needTail = true
			}
			if len(out) == max {
				needTail = true
				break
			}
			out = append(out, byte(u))
		}
		return out
	}
	base = conv(stem, 8)
	ext = conv(suffix, 3)
	if len(base) == 0 {
		base = []byte{'_'}
		needTail = true
	}
	return base, ext, needTail
}

// makeShortName builds the short name for a new entry called name. taken
// reports whether a short name is already used in the directory. The
// result says whether a long name is needed as well.
func makeShortName(name string, taken func(shortName) bool) (s shortName, nt byte, needLFN bool, err error) {
	if s, nt, ok := exactShortName(name); ok && !taken(s) {
		return s, nt, false, nil
	}
	base, ext, needTail := shortNameBasis(name)
	fill := func(b []byte) shortName {
		var s shortName
		for i := range s {
			s[i] = ' '
		}
		copy(s[:8], b)
		copy(s[8:], ext)
		return s
	}
	if !needTail {
		if s := fill(base); !taken(s) {
			return s, 0, true, nil
		}
	}
	for n := 1; n <= 999999; n++ {
		tail := fmt.Sprintf("~%d", n)
		b := base
		if len(b)+len(tail) > 8 {
			b = b[:8-len(tail)]
		}
		s := fill(append(append([]byte{}, b...), tail...))
		if !taken(s) {
			return s, 0, true, nil
		}
	}
	return s, 0, false, fmt.Errorf("%w: no free short name for %q", ErrNoSpace, name)
}

// lfnSlots returns how many long-name slots name needs.
func lfnSlots(name string) int {
	n := len(utf16.Encode([]rune(name)))
	return (n + lfnUnits - 1) / lfnUnits
}

// encodeLFN writes the long-name slots for name (in on-disk order: the
// last part first) into dst, which holds exactly lfnSlots(name)*32 bytes.
func encodeLFN(dst []byte, name string, sum byte) {
	units := utf16.Encode([]rune(name))
	slots := len(dst) / 32
	for i := 0; i < slots; i++ {
		seq := slots - i // slot i on disk holds part seq
		e := dst[i*32 : i*32+32]
		for j := range e {
			e[j] = 0
		}
		e[0] = byte(seq)
		if i == 0 {
			e[0] |= 0x40 // last part
		}
		e[11] = attrLFN
		e[13] = sum
		for k := 0; k < lfnUnits; k++ {
			idx := (seq-1)*lfnUnits + k
			var u uint16
			switch {
			case idx < len(units):
				u = units[idx]
			case idx == len(units):
				u = 0
			default:
				u = 0xFFFF
			}
			o := lfnOffsets[k]
			e[o] = byte(u)
			e[o+1] = byte(u >> 8)
		}
	}
}

// lfnOffsets are the byte offsets of the 13 UTF-16 units in a slot.
var lfnOffsets = [lfnUnits]int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30}

// ValidateName reports whether name (one path component) can be stored
// as a file or directory name: at most 255 UTF-16 units, none of
// "*/:<>?\| or control characters, not ending in a space or a dot, and
// not "." or "..". Every write checks it; callers check it first to
// refuse a command before anything is written.
func ValidateName(name string) error { return checkName(name) }
