package mount

import "crypto/rand"

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
