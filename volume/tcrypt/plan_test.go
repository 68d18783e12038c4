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
	jobs, bp := plan(kdfs, copies, pass, false)
	names := jobNames(jobs)
	want := []string{
		"TrueCrypt RIPEMD-160, normal header", "TrueCrypt SHA-512, normal header", "TrueCrypt Whirlpool, normal header", "TrueCrypt SHA-1, normal header",
		"TrueCrypt RIPEMD-160, hidden header", "TrueCrypt SHA-512, hidden header", "TrueCrypt Whirlpool, hidden header", "TrueCrypt SHA-1, hidden header",
		"TrueCrypt RIPEMD-160, hidden header", "TrueCrypt SHA-512, hidden header", "TrueCrypt Whirlpool, hidden header", "TrueCrypt SHA-1, hidden header",
		"VeraCrypt SHA-512, normal header", "VeraCrypt SHA-512, hidden header",
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
	if len(bp.jobs) != 5 || bp.jobs[4].String() != "VeraCrypt SHA-512, backup normal header + backup hidden header" || len(bp.jobs[4].salts) != 2 || !bp.partial {
		t.Fatalf("backup round: %q (partial %v)", backup, bp.partial)
	}
	_, hinted := plan(selectKDFs("Whirlpool", true, true, false, 0), copies, pass, true)
	if len(hinted.jobs) != 2 || hinted.partial || !hinted.jobs[1].kdf.VeraCrypt {
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
	jobs, bp := plan(kdfs, copies, func(kdfCandidate) []byte { return nil }, true)
	if len(jobs) != 1 || len(jobs[0].salts) != 1 || len(jobs[0].salts[0].copies) != 2 {
		t.Fatalf("jobs %q", jobNames(jobs))
	}
	if len(bp.jobs) != 0 {
		t.Fatalf("the backup copy is derived again: %q", jobNames(bp.jobs))
	}
}

// TestSearchGivesTheDefaultAllCores opens a default VeraCrypt volume
// without hints on two cores: once VeraCrypt's SHA-512 starts, which keeps
// both cores busy, nothing else may start before it has found the key.
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
	if last := started[len(started)-1]; last != "VeraCrypt SHA-512, normal header" {
		t.Fatalf("started after VeraCrypt's SHA-512 on the normal header: %q", started)
	}
}
