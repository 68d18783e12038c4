package fsops

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
)

// checkNames refuses, before anything is written or a driver started,
// every destination name the filesystem cannot store, naming the source
// the user gave for it (not a temporary file).
func checkNames(fstype string, jobs []putJob) error {
	for _, j := range jobs {
		if j.dest == "/" {
			continue
		}
		if err := filesystem.ValidateName(fstype, path.Base(j.dest)); err != nil {
			return kind(BadOperand, fmt.Errorf("%s cannot go into the volume as %s: %s; nothing was written", j.src, shortPath(j.dest), nameReason(err, path.Base(j.dest))))
		}
	}
	return nil
}

// checkPathNames checks every component of the volume path p.
func checkPathNames(fstype, p string) error {
	for _, c := range strings.Split(strings.Trim(volPath(p), "/"), "/") {
		if c == "" {
			continue
		}
		if err := filesystem.ValidateName(fstype, c); err != nil {
			return kind(BadOperand, fmt.Errorf("%s: %s; nothing was written", shortPath(p), nameReason(err, c)))
		}
	}
	return nil
}

// nameReason is a ValidateName error with a long name shortened.
func nameReason(err error, name string) string {
	return strings.ReplaceAll(err.Error(), strconv.Quote(name), strconv.Quote(shortPath(name)))
}

// shortPath keeps a very long path readable in a message.
func shortPath(p string) string {
	if len(p) <= 80 {
		return p
	}
	return p[:40] + "..." + p[len(p)-30:]
}
