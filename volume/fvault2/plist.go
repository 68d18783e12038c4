package fvault2

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// CoreStorage keeps its settings in XML property lists. Only a few values
// are needed, found the way cryptsetup finds them: the element that
// follows <key>NAME</key>, of a given type. Values shared by reference
// (IDREF) are resolved through the element carrying that ID.

// plistValues returns the text of every <typ ...>value</typ> element that
// follows <key>name</key>, in order.
func plistValues(xml, name, typ string) []string {
	var out []string
	key := "<key>" + name + "</key>"
	for rest := xml; ; {
		i := strings.Index(rest, key)
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len(key):], " \t\r\n")
		if v, ok := element(xml, rest, typ); ok {
			out = append(out, v)
		}
	}
}

// element parses <typ attrs>text</typ> at the start of s, or a reference
// to one elsewhere in doc (<reference IDREF="n"/> or <typ IDREF="n"/>).
func element(doc, s, typ string) (string, bool) {
	if strings.HasPrefix(s, "<reference ") {
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return "", false
		}
		id, ok := attr(s[:end], "IDREF")
		if !ok {
			return "", false
		}
		return byID(doc, typ, id)
	}
	if !strings.HasPrefix(s, "<"+typ+" ") && !strings.HasPrefix(s, "<"+typ+">") {
		return "", false
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return "", false
	}
	attrs := s[len(typ)+1 : end]
	if strings.HasSuffix(attrs, "/") {
		id, ok := attr(attrs, "IDREF")
		if !ok {
			return "", false
		}
		return byID(doc, typ, id)
	}
	body := s[end+1:]
	close := strings.Index(body, "</"+typ+">")
	if close < 0 {
		return "", false
	}
	return body[:close], true
}

func attr(attrs, name string) (string, bool) {
	i := strings.Index(attrs, name+"=\"")
	if i < 0 {
		return "", false
	}
	v := attrs[i+len(name)+2:]
	j := strings.IndexByte(v, '"')
	if j < 0 {
		return "", false
	}
	return v[:j], true
}

// byID finds the element of type typ whose ID attribute is id.
func byID(doc, typ, id string) (string, bool) {
	for rest := doc; ; {
		i := strings.Index(rest, "<"+typ+" ")
		if i < 0 {
			return "", false
		}
		rest = rest[i:]
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return "", false
		}
		if v, ok := attr(rest[len(typ)+1:end], "ID"); ok && v == id {
			return element(doc, rest, typ)
		}
		rest = rest[end:]
	}
}

func plistData(v string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, v)
	return base64.StdEncoding.DecodeString(clean)
}

// plistInteger parses an integer element: CoreStorage writes them in hex
// ("0xa000000"), cryptsetup reads them as hex with or without the prefix.
func plistInteger(v string) (uint64, error) {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
	n, err := strconv.ParseUint(v, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("integer %q: %v", v, err)
	}
	return n, nil
}
