package archive

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// The archive's states and reports as sentences for people: what
// `cryptvol archive` prints about a damaged index, a torn tail, a verify,
// a repair plan and a repair. The wording is part of the command's
// output (its testscripts compare it).

// String says how a damaged index was pieced together.
func (s *Salvaged) String() string {
	var parts []string
	if len(s.LostCommits) > 0 {
		parts = append(parts, "unreadable index of commit "+commitList(s.LostCommits))
	}
	if len(s.PartCommits) > 0 {
		parts = append(parts, "index of commit "+commitList(s.PartCommits)+" partly unreadable")
	}
	if len(s.Recovered) > 0 {
		parts = append(parts, "footer of commit "+commitList(s.Recovered)+" cut short or damaged")
	}
	if len(parts) == 0 {
		return "a footer on its chain is damaged"
	}
	return strings.Join(parts, "; ")
}

// commitList prints commit numbers, runs shortened: "3", "2, 5-7".
func commitList(gens []uint64) string {
	g := append([]uint64(nil), gens...)
	sort.Slice(g, func(i, j int) bool { return g[i] < g[j] })
	var out []string
	for i := 0; i < len(g); {
		j := i
		for j+1 < len(g) && g[j+1] == g[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d-%d", g[i], g[j]))
		} else {
			out = append(out, fmt.Sprint(g[i]))
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}

// BytesText is a byte count for people: exact when small, "12.0 MiB
// (12582912 bytes)" when not.
func BytesText(n int64) string {
	if n < 10<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%s (%d bytes)", progress.FormatSize(n), n)
}

// Text says what the tail of the archive at path holds, for an archive
// read at commit readCommit (its newest complete one). change: the
// archive was opened for a change, which would cut the tail off; with a
// recoverable Commit in it the change is then to be refused.
func (t TailReport) Text(path string, readCommit uint64, change bool) string {
	if t.Commit != 0 {
		msg := fmt.Sprintf("%s ends with commit %d cut short: its footer does not authenticate, but its index does (%d members added or replaced, %d removed); 'archive verify --repair' recovers it", path, t.Commit, t.Puts, t.Deletes)
		if change {
			return msg + ", and a change now would cut it off: repair first"
		}
		return fmt.Sprintf("%s; reading commit %d, the last complete one", msg, readCommit)
	}
	then := "'archive verify --repair' removes them"
	if change {
		then = "this change removes them"
	}
	return fmt.Sprintf("%s ends with %s that are not a complete commit: an append that did not finish, or what is left of a commit cut short (its members are then lost: nothing in these bytes can be authenticated); using commit %d, the last complete one; %s",
		path, BytesText(t.Bytes), readCommit, then)
}

// WriteText writes what Verify found in a, the archive at path: a
// summary line, each problem, and "OK" or what follows the last
// complete commit.
func (r *Report) WriteText(w io.Writer, path string, a *Archive) {
	kdf, p := a.KDF()
	if kdf == "argon2id" {
		kdf = fmt.Sprintf("argon2id (%d MiB, %d passes, %d lanes)", p.MemoryKiB>>10, p.Passes, p.Lanes)
	}
	fmt.Fprintf(w, "%s: %s, %s; %d members; %d commits; %d records (%d live) and %d index segments authenticated; %s\n",
		path, a.Cipher(), kdf, r.Members, r.Commits, r.Records, r.LiveRecords, r.Segments, progress.FormatSize(r.FileSize))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "DAMAGED: %s\n", p)
	}
	if r.OK() {
		fmt.Fprintln(w, "OK")
		return
	}
	if r.Tail > 0 {
		fmt.Fprintf(w, "DAMAGED: %s after the last complete commit (commit %d)\n", BytesText(r.Tail), a.Commits())
	}
}

// WriteText says what a repair keeps and removes: what it would do
// (done false, before) or what it did (done true).
func (p *RepairPlan) WriteText(w io.Writer, done bool) {
	past := map[string]string{"keep": "kept", "remove": "removed", "write": "wrote", "cut": "cut"}
	v := func(verb string) string {
		if done {
			return past[verb]
		}
		return "would " + verb
	}
	size := progress.FormatSize
	fmt.Fprintf(w, "A repair %s %s (%s of contents), each authenticated", v("keep"), members(p.Keep), size(p.KeepBytes))
	if len(p.Recovered) > 0 {
		fmt.Fprintf(w, ", with those of commit %s, whose footer is cut short or damaged but whose index authenticates", commitList(p.Recovered))
	}
	fmt.Fprintln(w, ".")
	if len(p.Lost) > 0 {
		fmt.Fprintf(w, "It %s %s (%s) whose records do not authenticate:\n", v("remove"), members(len(p.Lost)), size(p.LostBytes))
		for i, l := range p.Lost {
			if i == 20 {
				fmt.Fprintf(w, "  ... and %d more\n", len(p.Lost)-20)
				break
			}
			fmt.Fprintf(w, "  %s (%s): %s\n", l.Name, size(l.Size), l.Reason)
		}
	}
	if len(p.LostCommits) > 0 || len(p.PartCommits) > 0 {
		var cs []uint64
		cs = append(append(cs, p.LostCommits...), p.PartCommits...)
		fmt.Fprintf(w, "The index of commit %s cannot be read (wholly or in part): members only it named are lost, and members it removed may be back.\n", commitList(cs))
	}
	const nothing = "nothing in them authenticates (an append that did not finish, or what is left of a commit cut short)"
	switch {
	case p.Rebuild:
		if p.Tail > 0 {
			fmt.Fprintf(w, "It %s the last %s of the file: %s.\n", v("remove"), BytesText(p.Tail), nothing)
		}
		fmt.Fprintf(w, "It %s the kept members into a new file that takes the archive's place, as compact does (%s now).\n", v("write"), size(p.FileSize))
	case p.Dropped > 0 && p.Dropped == p.Tail:
		fmt.Fprintf(w, "It %s the file at %d bytes, the end of commit %d, removing the last %s: %s.\n", v("cut"), p.TruncateAt, p.KeptCommit, BytesText(p.Dropped), nothing)
	case p.Dropped > 0:
		fmt.Fprintf(w, "It %s the file at %d bytes, the end of commit %d, removing the last %s: newer commits none of whose members can be read.\n", v("cut"), p.TruncateAt, p.KeptCommit, BytesText(p.Dropped))
	}
}

// members is "1 member" or "N members".
func members(n int) string {
	if n == 1 {
		return "1 member"
	}
	return fmt.Sprintf("%d members", n)
}

// WriteText says what Repair did.
func (rep RepairReport) WriteText(w io.Writer) {
	p := rep.Plan
	switch {
	case p.Sound:
		fmt.Fprintln(w, "Nothing to repair: the archive ends with a complete commit.")
		return
	case !rep.Rebuilt && p.Dropped > 0 && len(p.LostCommits)+len(p.PartCommits) == 0:
		fmt.Fprintf(w, "Removed %s after commit %d (an interrupted append, or the end of a commit cut short: nothing in them authenticated); %d members.\n", BytesText(rep.Truncated), rep.KeptCommit, rep.Members)
		return
	case !rep.Rebuilt && p.Dropped > 0:
		fmt.Fprintf(w, "Rolled back from commit %d to commit %d (the newer index was damaged): removed %s; %d members.\n", rep.FromCommit, rep.KeptCommit, BytesText(rep.Truncated), rep.Members)
		return
	}
	p.WriteText(w, true)
}

// LongText is the entry as a long listing shows it: mode, size, local
// modification time and name.
func (e Entry) LongText() string {
	return fmt.Sprintf("%s %12d %s %s", e.Mode, e.Size, e.ModTime.Local().Format("2006-01-02 15:04:05"), e.Name)
}
