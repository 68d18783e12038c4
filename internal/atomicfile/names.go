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
