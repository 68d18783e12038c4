package tcrypt

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

func copyAt(loc location, salt byte) *headerCopy {
	raw := make([]byte, headerSize)
	for i := range raw[:saltSize] {
		raw[i] = salt
	}
	return &headerCopy{loc: loc, raw: raw}
}

func jobNames(js []*job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.String())
	}
	return out
}

// TestPlanOrder checks the order of the search: TrueCrypt's cheap KDFs on
// every primary copy, VeraCrypt's default on the normal then the hidden
// header, the other VeraCrypt KDFs on the normal header, then on the
// hidden one; the TrueCrypt 4.x/5.x hidden copy only with TrueCrypt's
// KDFs; the backup round with TrueCrypt's KDFs and VeraCrypt's default
// only, unless hinted.
func TestPlanOrder(t *testing.T) {
	kdfs := selectKDFs("", true, true, false, 0)
	copies := []*headerCopy{
		copyAt(location{Offset: offNormal}, 1),
		copyAt(location{Offset: offHidden, Hidden: true}, 2),
		copyAt(location{Offset: 1 << 20, Hidden: true, Legacy: true}, 3),
		copyAt(location{Offset: 2 << 20, Backup: true}, 4),
		copyAt(location{Offset: 3 << 20, Hidden: true, Backup: true}, 5),
	}
	pass := func(kdfCandidate) []byte { return nil }
	jobs, bp, err := plan(kdfs, copies, pass, false, "")
	if err != nil {
		t.Fatal(err)
	}
	names := jobNames(jobs)
	want := []string{
		"TrueCrypt RIPEMD-160, normal header", "TrueCrypt SHA-512, normal header", "TrueCrypt Whirlpool, normal header", "TrueCrypt SHA-1, normal header",
		"TrueCrypt RIPEMD-160, hidden header", "TrueCrypt SHA-512, hidden header", "TrueCrypt Whirlpool, hidden header", "TrueCrypt SHA-1, hidden header",
		"TrueCrypt RIPEMD-160, hidden header", "TrueCrypt SHA-512, hidden header", "TrueCrypt Whirlpool, hidden header", "TrueCrypt SHA-1, hidden header",
		"VeraCrypt SHA-512 (single ciphers), normal header", "VeraCrypt SHA-512 (single ciphers), hidden header",
		"VeraCrypt SHA-512 (cascades), normal header", "VeraCrypt SHA-512 (cascades), hidden header",
		"VeraCrypt SHA-256, normal header", "VeraCrypt BLAKE2s-256, normal header", "VeraCrypt Whirlpool, normal header",
		"VeraCrypt Streebog, normal header", "VeraCrypt Argon2id, normal header", "VeraCrypt RIPEMD-160, normal header",
		"VeraCrypt SHA-256, hidden header", "VeraCrypt BLAKE2s-256, hidden header", "VeraCrypt Whirlpool, hidden header",
		"VeraCrypt Streebog, hidden header", "VeraCrypt Argon2id, hidden header", "VeraCrypt RIPEMD-160, hidden header",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	var backup []string
	for _, j := range bp.jobs {
		backup = append(backup, j.String())
	}
	if len(bp.jobs) != 6 || bp.jobs[5].String() != "VeraCrypt SHA-512 (cascades), backup normal header + backup hidden header" || len(bp.jobs[5].salts) != 2 || !bp.partial {
		t.Fatalf("backup round: %q (partial %v)", backup, bp.partial)
	}
	_, hinted, _ := plan(selectKDFs("Whirlpool", true, true, false, 0), copies, pass, true, "")
	if len(hinted.jobs) != 3 || hinted.partial || !hinted.jobs[1].kdf.VeraCrypt || hinted.jobs[2].part != "cascades" {
		t.Fatalf("hinted backup round: %q", jobNames(hinted.jobs))
	}
}

// TestPlanSharesSalts gives the backup copy the primary's salt (a header
// copied verbatim): one derivation serves both, and the backup round does
// not derive it again.
func TestPlanSharesSalts(t *testing.T) {
	copies := []*headerCopy{
		copyAt(location{Offset: offNormal}, 7),
		copyAt(location{Offset: 2 << 20, Backup: true}, 7),
	}
	kdfs := selectKDFs("SHA-512", true, false, false, 0)
	jobs, bp, _ := plan(kdfs, copies, func(kdfCandidate) []byte { return nil }, true, "")
	if len(jobs) != 2 || len(jobs[0].salts) != 1 || len(jobs[0].salts[0].copies) != 2 || len(jobs[1].salts[0].copies) != 2 {
		t.Fatalf("jobs %q", jobNames(jobs))
	}
	if len(bp.jobs) != 0 {
		t.Fatalf("the backup copy is derived again: %q", jobNames(bp.jobs))
	}
}

// TestSearchGivesTheDefaultAllCores opens a default VeraCrypt volume (AES,
// SHA-512) without hints on two cores: VeraCrypt's SHA-512 for single
// ciphers on the normal header finds it, alone: no other VeraCrypt
// derivation may start beside it.
func TestSearchGivesTheDefaultAllCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	im := imageByName(t, "vc_1-sha512-xts-aes")
	var mu sync.Mutex
	var started []string
	o := volume.Options{ReadOnly: true, Progress: func(s string) {
		mu.Lock()
		started = append(started, s)
		mu.Unlock()
	}}
	v, err := volume.OpenWith(context.Background(), im.Path, volume.Credentials{Password: []byte(im.Password)}, o)
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	var vera []string
	for _, s := range started {
		if strings.HasPrefix(s, "VeraCrypt") {
			vera = append(vera, s)
		}
	}
	if len(vera) != 1 || vera[0] != "VeraCrypt SHA-512 (single ciphers), normal header" {
		t.Fatalf("VeraCrypt derivations started: %q", vera)
	}
}

// TestPlanKeyLength checks what each job derives: one SHA-512 block for
// the single ciphers, the whole key for cascades, Argon2id always whole,
// and with --encryption AES one block for every PBKDF2.
func TestPlanKeyLength(t *testing.T) {
	copies := []*headerCopy{copyAt(location{Offset: offNormal}, 1)}
	pass := func(kdfCandidate) []byte { return nil }
	jobs, _, _ := plan(selectKDFs("", true, false, false, 0), copies, pass, false, "")
	got := map[string]int{}
	for _, j := range jobs {
		got[j.kdf.PRF+"/"+j.part] = j.keyLen
	}
	want := map[string]int{"SHA-512/single ciphers": 64, "SHA-512/cascades": 192, "SHA-256/": 192, "Argon2id/": 192, "Streebog/": 192}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s derives %d bytes, want %d (all: %v)", k, got[k], n, got)
		}
	}
	jobs, _, _ = plan(selectKDFs("", true, false, false, 0), copies, pass, false, "AES")
	for _, j := range jobs {
		if want := map[bool]int{true: 192, false: 64}[j.kdf.argon2()]; j.keyLen != want || j.part != "" {
			t.Errorf("--encryption AES: %s derives %d bytes (%q), want %d", j.kdf.PRF, j.keyLen, j.part, want)
		}
	}
}
