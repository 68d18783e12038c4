package legacy

import (
	"fmt"
	"testing"
)

// Compare with `openssl speed -provider legacy -provider default -evp
// bf-ecb|cast5-ecb|des-ede3 -bytes 4096` run in the same session:
// bench_vs_openssl.sh does both.

func BenchmarkEncrypt(b *testing.B) {
	bfBE, _ := NewBlowfishBE(make([]byte, 16))
	bfLE, _ := NewBlowfishLE(make([]byte, 56))
	cast, _ := NewCAST5(make([]byte, 16))
	tdes, _ := NewTripleDES(make([]byte, 24))
	for _, c := range []struct {
		name string
		c    block
	}{{"BlowfishBE", bfBE}, {"BlowfishLE", bfLE}, {"CAST5", cast}, {"TripleDES", tdes}} {
		for _, size := range []int{4096, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dK", c.name, size>>10), func(b *testing.B) {
				buf := make([]byte, size)
				measure(b, size, func() { c.c.EncryptBlocks(buf, buf) })
			})
		}
	}
}
