package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The temporary name: "." + BASE + ".cryptvol-" + PID + "-" + START + "-"
// + 16 hex digits + ".tmp".
var tempRE = regexp.MustCompile(`^\.(.*)\.cryptvol-([0-9]+)-([0-9a-z]+)-([0-9a-f]{16})\.tmp$`)

// legacyRE matches the temporary names of cryptvol before this scheme,
// which say nothing of their owner: export/get (".cryptvol-*.tmp"),
// archive get (".cryptvol-NAME.tmp"), create (".NAME.cryptvol-DIGITS")
// and archive compact (".NAME.compact-DIGITS").
var legacyRE = regexp.MustCompile(`^\.(cryptvol-.+\.tmp|.+\.cryptvol-[0-9]+|.+\.compact-[0-9]+)$`)

// maxBase bounds the part of the destination's name kept in the temporary
// name, so that it stays within the 255 bytes most filesystems allow.
const maxBase = 150

var self struct {
	once  sync.Once
	pid   int
	start string
}

func selfOwner() (int, string) {
	self.once.Do(func() {
		self.pid = os.Getpid()
		self.start = processStart(self.pid)
	})
	return self.pid, self.start
}

// tempName is a fresh temporary name for a file called base.
func tempName(base string) string {
	if len(base) > maxBase {
		cut := maxBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	pid, start := selfOwner()
	var r [8]byte
	rand.Read(r[:])
	return "." + base + ".cryptvol-" + strconv.Itoa(pid) + "-" + start + "-" + hex.EncodeToString(r[:]) + ".tmp"
}

// parseTempName returns the owner recorded in a temporary name.
func parseTempName(name string) (pid int, start string, ok bool) {
	m := tempRE.FindStringSubmatch(name)
	if m == nil {
		return 0, "", false
	}
	pid, err := strconv.Atoi(m[2])
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, m[3], true
}

// IsTempName reports whether name (a base name) is one of the temporary
// names this package makes.
func IsTempName(name string) bool {
	_, _, ok := parseTempName(name)
	return ok
}

// TempName returns a fresh temporary name for a file called base, in the
// scheme Sweep recognises: for writers of other filesystems (the files
// inside a volume), which then check leftovers with CheckOwner.
func TempName(base string) string { return tempName(base) }

// OwnerState is what CheckOwner found out about a temporary name's owner.
type OwnerState int

const (
	NotTemp OwnerState = iota // not a temporary name of this scheme
	Self                      // this process made it
	Running                   // its owner runs
	Gone                      // its owner is no longer running: a leftover
	Unknown                   // a process of that PID runs, maybe another one
)

// CheckOwner looks up the owner of the temporary name (a base name) by its
// PID and start time alone, for files no lock can be taken on.
func CheckOwner(name string) (pid int, s OwnerState) {
	pid, start, ok := parseTempName(name)
	if !ok {
		return 0, NotTemp
	}
	if p, st := selfOwner(); p == pid && st == start {
		return pid, Self
	}
	alive, sure := ownerAlive(pid, start)
	switch {
	case !alive:
		return pid, Gone
	case sure:
		return pid, Running
	}
	return pid, Unknown
}
