package tcrypt

import (
	"fmt"
	"runtime"

	"github.com/cryptvol/cryptvol/hashes"
)

// A job is one key derivation: a KDF over one salt, or over several salts
// at once (kdf.DeriveMany), each key tried with the job's schemes on every
// header copy that has its salt. Copies with the same salt (a header
// copied verbatim) share a derivation. keyLen is what the schemes need of
// the header key: with PBKDF2 a shorter key costs fewer output blocks.
type job struct {
	kdf    kdfCandidate
	part   string // which schemes, for messages: "" (all), "single ciphers", "cascades"
	ss     []scheme
	keyLen int
	pass   []byte
	salts  []saltCopies
	// alone keeps every other job from starting beside this one (see
	// plan): it counts as all the cores.
	alone bool
}

type saltCopies struct {
	salt   []byte
	copies []*headerCopy
}

// String names what the job tries, for progress lines:
// "VeraCrypt SHA-512 (single ciphers), normal header".
func (j *job) String() string {
	who := "TrueCrypt"
	if j.kdf.VeraCrypt {
		who = "VeraCrypt"
	}
	what := j.kdf.PRF
	if j.part != "" {
		what += " (" + j.part + ")"
	}
	where := ""
	for i, s := range j.salts {
		for k, c := range s.copies {
			if i > 0 || k > 0 {
				where += " + "
			}
			where += c.loc.String()
		}
	}
	return fmt.Sprintf("%s %s, %s", who, what, where)
}

// blocks is how many PBKDF2 output blocks k computes for keyLen bytes.
func (k kdfCandidate) blocks(keyLen int) int {
	h, err := hashes.Lookup(k.PRF)
	if err != nil || h.Size <= 0 {
		return 1
	}
	return (keyLen + h.Size - 1) / h.Size
}

// cores estimates how many cores the derivation keeps busy, so that the
// search starts the next one only when some would be idle. It follows
// kdf.PBKDF2Context, which computes the output blocks of a long derivation
// on separate goroutines (from 4,096 iterations on), and VeraCrypt's
// Argon2id, which has one lane. (A PBKDF2 that computes several blocks in
// SIMD lanes of one core changes this.)
func (j *job) cores() int {
	k := j.kdf
	if j.alone {
		return runtime.GOMAXPROCS(0)
	}
	if k.argon2() || k.Iterations < 4096 {
		return 1
	}
	return max(1, min(k.blocks(j.keyLen), runtime.GOMAXPROCS(0)))
}

// needed is how many header-key bytes the schemes use at most.
func needed(ss []scheme) int {
	n := 0
	for _, s := range ss {
		n = max(n, s.keyBytes())
	}
	return n
}

// stage is one set of schemes to try with a KDF's key.
type stage struct {
	part string
	ss   []scheme
}

// stages splits the schemes of the most likely VeraCrypt KDF: the single
// ciphers (AES, the default, and the four others) need only the first 64
// bytes of the header key, one SHA-512 block of three, so they get a
// derivation of their own that ends in a third of the time, and the
// cascades get the whole key after it. (The whole derivation repeats that
// block: one block more when the volume is not a single cipher, and on a
// wrong password.) Other KDFs try every scheme with one derivation.
func stages(k kdfCandidate, ss []scheme, split bool) []stage {
	if split && !k.argon2() {
		var single, cascades []scheme
		for _, s := range ss {
			if len(s.Chain.Ciphers) == 1 {
				single = append(single, s)
			} else {
				cascades = append(cascades, s)
			}
		}
		if len(single) > 0 && len(cascades) > 0 && k.blocks(needed(single)) < k.blocks(needed(cascades)) {
			return []stage{{"single ciphers", single}, {"cascades", cascades}}
		}
	}
	return []stage{{"", ss}}
}

// backupPlan is the second round: the backup header copies, tried only
// when no primary copy opened.
type backupPlan struct {
	jobs []*job
	// partial is set when VeraCrypt PRFs were left out of the round; vera
	// names the one that was kept.
	partial bool
	vera    string
}

// plan orders the derivations to minimise the expected time to the right
// key rather than to finish everything together:
//
//  1. TrueCrypt's KDFs (1,000-2,000 iterations: milliseconds) on every
//     primary copy (normal, hidden, TrueCrypt 4.x/5.x hidden);
//  2. the first VeraCrypt KDF (the default, SHA-512) on the normal header,
//     then on the hidden one: a hidden volume made with the defaults is
//     likelier than a normal one with any other PRF; first only as much of
//     the key as single ciphers need (one SHA-512 block: see stages), then
//     the whole key for the cascades;
//  3. the other VeraCrypt KDFs on the normal header, in allKDFs order
//     (cheap and likely first), then on the hidden header.
//
// The search runs each job with the cores it can use and starts the next
// one only when cores would otherwise sit idle, so the likely derivations
// finish as early as if they ran alone.
//
// The backup copies make a second round. Without a PRF hint it holds
// TrueCrypt's KDFs and VeraCrypt's default only: VeraCrypt does not try the
// backup headers by itself at all, and trying every PRF on them would double
// the time a wrong password takes. With --hash every hinted KDF is tried
// on them. kdfs must be in allKDFs order (selectKDFs keeps it).
func plan(kdfs []kdfCandidate, copies []*headerCopy, pass func(kdfCandidate) []byte, hinted bool, encryption string) ([]*job, backupPlan, error) {
	var primary, backups []*headerCopy
	for _, c := range copies {
		if c.loc.Backup {
			backups = append(backups, c)
		} else {
			primary = append(primary, c)
		}
	}
	var tc, vc []kdfCandidate
	for _, k := range kdfs {
		if k.VeraCrypt {
			vc = append(vc, k)
		} else {
			tc = append(tc, k)
		}
	}
	stagesOf := map[kdfCandidate][]stage{}
	for _, k := range kdfs {
		ss, err := schemes(encryption, !k.VeraCrypt)
		if err != nil {
			return nil, backupPlan{}, err
		}
		stagesOf[k] = stages(k, ss, len(vc) > 0 && k == vc[0])
	}
	// fits says whether a KDF could have written the copy.
	fits := func(k kdfCandidate, c *headerCopy) bool { return !(c.loc.Legacy && k.VeraCrypt) }
	// covered remembers the (KDF, stage, copy) triples already in a job.
	type triple struct {
		k    kdfCandidate
		part string
		c    *headerCopy
	}
	covered := map[triple]bool{}
	// newJob makes the job of k's stage st on the copies, grouping those
	// with the same salt, and also tries its key on any other copy that
	// shares the salt (a backup identical to its primary costs nothing
	// more).
	newJob := func(k kdfCandidate, st stage, on []*headerCopy) *job {
		j := &job{kdf: k, part: st.part, ss: st.ss, keyLen: k.keyLenFor(needed(st.ss)), pass: pass(k)}
		bySalt := map[string]int{}
		add := func(c *headerCopy) {
			key := triple{k, st.part, c}
			if covered[key] || !fits(k, c) {
				return
			}
			covered[key] = true
			s := string(c.raw[:saltSize])
			i, ok := bySalt[s]
			if !ok {
				i = len(j.salts)
				bySalt[s] = i
				j.salts = append(j.salts, saltCopies{salt: c.raw[:saltSize]})
			}
			j.salts[i].copies = append(j.salts[i].copies, c)
		}
		for _, c := range on {
			add(c)
		}
		for _, c := range copies {
			if _, ok := bySalt[string(c.raw[:saltSize])]; ok {
				add(c)
			}
		}
		if len(j.salts) == 0 {
			return nil
		}
		return j
	}
	var jobs []*job
	push := func(list *[]*job, k kdfCandidate, on []*headerCopy) {
		for _, st := range stagesOf[k] {
			if j := newJob(k, st, on); j != nil {
				*list = append(*list, j)
			}
		}
	}
	for _, c := range primary {
		for _, k := range tc {
			push(&jobs, k, []*headerCopy{c})
		}
	}
	if len(vc) > 0 {
		// The default KDF's stages on the normal header, then on the
		// hidden one, stage by stage. The first, the likeliest of all,
		// runs alone even when it leaves cores idle: on a busy machine
		// (a home server doing other work, or one whose scheduler gives
		// each session a share of the processors) those cores are not
		// idle, and a job beside it would halve its share.
		for i, st := range stagesOf[vc[0]] {
			for k, c := range primary {
				if j := newJob(vc[0], st, []*headerCopy{c}); j != nil {
					j.alone = i == 0 && k == 0
					jobs = append(jobs, j)
				}
			}
		}
		for _, c := range primary {
			for _, k := range vc[1:] {
				push(&jobs, k, []*headerCopy{c})
			}
		}
	}

	var bp backupPlan
	if len(backups) == 0 {
		return jobs, bp, nil
	}
	for _, k := range tc {
		push(&bp.jobs, k, backups)
	}
	for i, k := range vc {
		if i > 0 && !hinted {
			bp.partial = true
			continue
		}
		if i == 0 {
			bp.vera = k.PRF
		}
		push(&bp.jobs, k, backups)
	}
	return jobs, bp, nil
}
