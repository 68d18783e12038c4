package ciphers

import "fmt"

// Chain is an encryption algorithm as TrueCrypt and VeraCrypt name it: one
// cipher or a cascade of several, each with its own key.
//
// Ciphers lists the members in the order encryption applies them, which is
// also the order of their keys in the master key (primary keys first, then
// the secondary XTS keys in the same order). VeraCrypt's name lists them the
// other way round: "AES-Twofish" encrypts with Twofish first, then AES.
type Chain struct {
	Name    string
	Ciphers []string
	// Legacy chains exist only in old TrueCrypt volumes (CBC/LRW era).
	Legacy bool
}

// chains is every chain in VeraCrypt's own order of its encryption list.
var chains = []Chain{
	{Name: "AES", Ciphers: []string{"AES"}},
	{Name: "Serpent", Ciphers: []string{"Serpent"}},
	{Name: "Twofish", Ciphers: []string{"Twofish"}},
	{Name: "Camellia", Ciphers: []string{"Camellia"}},
	{Name: "Kuznyechik", Ciphers: []string{"Kuznyechik"}},
	{Name: "AES-Twofish", Ciphers: []string{"Twofish", "AES"}},
	{Name: "AES-Twofish-Serpent", Ciphers: []string{"Serpent", "Twofish", "AES"}},
	{Name: "Serpent-AES", Ciphers: []string{"AES", "Serpent"}},
	{Name: "Serpent-Twofish-AES", Ciphers: []string{"AES", "Twofish", "Serpent"}},
	{Name: "Twofish-Serpent", Ciphers: []string{"Serpent", "Twofish"}},
	{Name: "Camellia-Kuznyechik", Ciphers: []string{"Kuznyechik", "Camellia"}},
	{Name: "Camellia-Serpent", Ciphers: []string{"Serpent", "Camellia"}},
	{Name: "Kuznyechik-AES", Ciphers: []string{"AES", "Kuznyechik"}},
	{Name: "Kuznyechik-Serpent-Camellia", Ciphers: []string{"Camellia", "Serpent", "Kuznyechik"}},
	{Name: "Kuznyechik-Twofish", Ciphers: []string{"Twofish", "Kuznyechik"}},

	// TrueCrypt 4.x/5.x legacy algorithms, read-only.
	// TrueCrypt's Blowfish reads each 32-bit half little-endian, unlike the
	// standard (big-endian) Blowfish that LUKS and OpenSSL use.
	{Name: "Blowfish", Ciphers: []string{"Blowfish-LE"}, Legacy: true},
	{Name: "CAST5", Ciphers: []string{"CAST5"}, Legacy: true},
	{Name: "Triple DES", Ciphers: []string{"Triple DES"}, Legacy: true},
	{Name: "AES-Blowfish", Ciphers: []string{"Blowfish-LE", "AES"}, Legacy: true},
	{Name: "AES-Blowfish-Serpent", Ciphers: []string{"Serpent", "Blowfish-LE", "AES"}, Legacy: true},
}

// Chains returns the chains current VeraCrypt offers (no legacy ones), in
// VeraCrypt's order: the five single ciphers, then the ten cascades.
func Chains() []Chain {
	var out []Chain
	for _, c := range chains {
		if !c.Legacy {
			out = append(out, c)
		}
	}
	return out
}

// AllChains returns every chain, legacy ones included.
func AllChains() []Chain { return append([]Chain(nil), chains...) }

// LookupChain finds a chain by its VeraCrypt/TrueCrypt name, ignoring case.
func LookupChain(name string) (Chain, error) {
	n := normalizeChain(name)
	for _, c := range chains {
		if normalizeChain(c.Name) == n {
			return c, nil
		}
	}
	return Chain{}, fmt.Errorf("unknown encryption algorithm %q", name)
}

func normalizeChain(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		case c == '-' || c == '_' || c == ' ':
			out = append(out, '-')
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// KeySize is the sum of the member ciphers' TrueCrypt key sizes.
func (c Chain) KeySize() (int, error) {
	n := 0
	for _, name := range c.Ciphers {
		s, err := Lookup(name)
		if err != nil {
			return 0, err
		}
		n += s.KeySize
	}
	return n, nil
}
