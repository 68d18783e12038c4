package tcrypt

import (
	"fmt"
	"runtime"

	"github.com/cryptvol/cryptvol/hashes"
)

// A job is one key derivation: a KDF over one salt, or over several salts
// at once (kdf.DeriveMany), each key tried on every header copy that has
// its salt. Copies with the same salt (a header copied verbatim) share a
// derivation.
type job struct {
	kdf   kdfCandidate
	pass  []byte
	salts []saltCopies
}

type saltCopies struct {
	salt   []byte
	copies []*headerCopy
}

// String names what the job tries, for progress lines:
// "VeraCrypt SHA-512, normal header".
func (j *job) String() string {
	who := "TrueCrypt"
	if j.kdf.VeraCrypt {
		who = "VeraCrypt"
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
	return fmt.Sprintf("%s %s, %s", who, j.kdf.PRF, where)
}

// cores estimates how many cores the derivation keeps busy, so that the
// search starts the next one only when some would be idle. It follows
// kdf.PBKDF2Context, which computes the output blocks of a long derivation
// on separate goroutines (from 4,096 iterations on), and VeraCrypt's
// Argon2id, which has one lane.
func (j *job) cores() int {
	k := j.kdf
	if k.argon2() || k.Iterations < 4096 {
		return 1
	}
	h, err := hashes.Lookup(k.PRF)
	if err != nil || h.Size <= 0 {
		return 1
	}
	blocks := (headerKeySize + h.Size - 1) / h.Size
	return max(1, min(blocks, runtime.GOMAXPROCS(0)))
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
//     likelier than a normal one with any other PRF;
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
func plan(kdfs []kdfCandidate, copies []*headerCopy, pass func(kdfCandidate) []byte, hinted bool) ([]*job, backupPlan) {
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
	// fits says whether a KDF could have written the copy.
	fits := func(k kdfCandidate, c *headerCopy) bool { return !(c.loc.Legacy && k.VeraCrypt) }
	// covered remembers the (KDF, copy) pairs already in a job.
	type pair struct {
		k kdfCandidate
		c *headerCopy
	}
	covered := map[pair]bool{}
	// newJob makes the job of k on the copies, grouping those with the
	// same salt, and also tries k's key on any other copy that shares the
	// salt (a backup identical to its primary costs nothing more).
	newJob := func(k kdfCandidate, on []*headerCopy) *job {
		j := &job{kdf: k, pass: pass(k)}
		bySalt := map[string]int{}
		add := func(c *headerCopy) {
			if covered[pair{k, c}] || !fits(k, c) {
				return
			}
			covered[pair{k, c}] = true
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
	push := func(list *[]*job, j *job) {
		if j != nil {
			*list = append(*list, j)
		}
	}
	for _, c := range primary {
		for _, k := range tc {
			push(&jobs, newJob(k, []*headerCopy{c}))
		}
	}
	if len(vc) > 0 {
		for _, c := range primary {
			push(&jobs, newJob(vc[0], []*headerCopy{c}))
		}
		for _, c := range primary {
			for _, k := range vc[1:] {
				push(&jobs, newJob(k, []*headerCopy{c}))
			}
		}
	}

	var bp backupPlan
	if len(backups) == 0 {
		return jobs, bp
	}
	for _, k := range tc {
		push(&bp.jobs, newJob(k, backups))
	}
	for i, k := range vc {
		if i > 0 && !hinted {
			bp.partial = true
			continue
		}
		if i == 0 {
			bp.vera = k.PRF
		}
		push(&bp.jobs, newJob(k, backups))
	}
	return jobs, bp
}
