package reencrypt

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// BenchmarkRun re-encrypts a volume in a temporary file under a new key
// (Start and Run, as `cryptvol reencrypt` does, its key derivations made
// cheap), per format and resilience mode, and for reference reads the
// same data area decrypted (what `cryptvol export` does before writing
// it out): MB/s is the data area's size over the time. The volume holds
// CRYPTVOL_REENCRYPT_BENCH_MIB MiB (default 64).
//
//	go test ./volume/reencrypt -run '^$' -bench Run -benchtime 3x
func BenchmarkRun(b *testing.B) {
	size := int64(64) << 20
	if n, err := strconv.Atoi(os.Getenv("CRYPTVOL_REENCRYPT_BENCH_MIB")); err == nil && n > 0 {
		size = int64(n) << 20
	}
	vera := func(b *testing.B) string {
		p, _ := newVeraCrypt(b, size+256<<10, vcCreds, tcrypt.CreateOptions{Encryption: "AES", Hash: "SHA-256"})
		return p
	}
	luks2 := func(b *testing.B) string {
		p, _ := newLUKS(b, size+16<<20, luksCreds, luks.CreateOptions{})
		return p
	}
	for _, c := range []struct {
		name   string
		make   func(*testing.B) string
		creds  volume.Credentials
		o      Options
		export bool
	}{
		{name: "veracrypt", make: vera, creds: vcCreds},
		{name: "veracrypt-export", make: vera, creds: vcCreds, export: true},
		{name: "luks2", make: luks2, creds: luksCreds},
		{name: "luks2-journal", make: luks2, creds: luksCreds, o: Options{Resilience: volume.ResilienceJournal}},
		{name: "luks2-export", make: luks2, creds: luksCreds, export: true},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := c.make(b)
			// The data written to make the volume is flushed here: the
			// first run's first sync would pay for it.
			dev := openDev(b, p)
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			dev.Close()
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				if c.export {
					benchExport(b, p, c.creds)
				} else {
					reencrypt(b, p, c.creds, c.o, 0)
				}
			}
		})
	}
}

// benchExport reads the data area of the volume at path decrypted, in the
// 4 MiB pieces export copies.
func benchExport(b *testing.B, path string, c volume.Credentials) {
	v, err := volume.OpenWith(context.Background(), path, c, volume.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	buf := make([]byte, 4<<20)
	for off := int64(0); off < v.Size(); off += int64(len(buf)) {
		n := min(int64(len(buf)), v.Size()-off)
		if _, err := v.ReadAt(buf[:n], off); err != nil {
			b.Fatal(err)
		}
	}
}
