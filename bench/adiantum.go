package bench

import (
	"crypto/rand"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/sector"
)

// AdiantumSectorSize is the sector the Adiantum rows use, cryptsetup's
// default for LUKS2 (and Adiantum's fastest: one hash and one stream per
// 4 KiB); a buffer that is no multiple of it gets 512-byte sectors.
const AdiantumSectorSize = 4096

// adiantumRow is one Adiantum variant of the cipher benchmark.
type adiantumRow struct {
	name   string
	rounds int
}

var adiantumRows = []adiantumRow{{"Adiantum-XChaCha12", 12}, {"Adiantum-XChaCha20", 20}}

// lookupAdiantum matches an --algorithms name to Adiantum rows, ignoring
// case, dashes and spaces: "Adiantum" is both.
func lookupAdiantum(name string) []adiantumRow {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(name))
	if n == "adiantum" {
		return adiantumRows
	}
	for _, r := range adiantumRows {
		if n == strings.ToLower(strings.ReplaceAll(r.name, "-", "")) {
			return []adiantumRow{r}
		}
	}
	return nil
}

// adiantumSectorSize is the sector size the Adiantum rows use for a
// buffer of n bytes.
func adiantumSectorSize(n int) int {
	if n%AdiantumSectorSize == 0 {
		return AdiantumSectorSize
	}
	return SectorSize
}

// adiantumJob sets up one Adiantum variant with a random key, with the
// LUKS2 sector mode (plain64 tweaks) for a buffer of n bytes, as chainJob
// sets up XTS.
func adiantumJob(a adiantumRow, n, threads int) (cipherJob, error) {
	key := make([]byte, adiantum.KeySize)
	if _, err := rand.Read(key); err != nil {
		return cipherJob{}, err
	}
	c, err := adiantum.New(key, a.rounds)
	if err != nil {
		clear(key)
		return cipherJob{}, err
	}
	wipe := func() { c.Zero(); clear(key) }
	ss := adiantumSectorSize(n)
	m, err := sector.NewAdiantum(c, sector.IVPlain64, ss)
	if err != nil {
		wipe()
		return cipherJob{}, err
	}
	return cipherJob{mode: sector.Parallel(m, threads), result: CipherResult{Name: a.name, Mode: "adiantum", SectorSize: ss}, close: wipe}, nil
}
