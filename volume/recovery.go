package volume

import "sync"

// A Recovery finishes, before a container file is opened, an operation
// on it that a kill stopped after the operation's result was complete and
// recorded beside the container, so that every open sees the finished
// result and not a half-copied one. Package resize registers one: the
// copy-in of an interrupted resize's journal (resize/record.go), which
// otherwise only the next `cryptvol resize` would finish.
//
// Pending is called on every open of a path and must be cheap (a stat of
// the record). Finish is called only when Pending said yes, with the
// container opened for writing and locked exclusively (so never while the
// operation itself still runs: it holds that lock); it returns what it
// did, for the open's warnings. The open goes on whatever Finish returns:
// a failure is a warning, never a reason to refuse the volume.
type Recovery struct {
	Pending func(path string) bool
	Finish  func(dev *FileDevice, path string) (string, error)
}

var (
	recoveriesMu sync.Mutex
	recoveries   []Recovery
)

// RegisterRecovery adds r to what every open of a container path runs
// first (call it from an init function).
func RegisterRecovery(r Recovery) {
	recoveriesMu.Lock()
	defer recoveriesMu.Unlock()
	recoveries = append(recoveries, r)
}

// recoverPending runs the registered recoveries that are pending for path. This
// happens for a read-only open too, as the kernel replays an ext4 journal
// on a read-only mount: the result was complete and the files are only
// whole once it is in. A container this process cannot write (or that
// another holds) is opened as it is, with a warning.
func recoverPending(path string, warn func(string)) {
	recoveriesMu.Lock()
	rs := append([]Recovery(nil), recoveries...)
	recoveriesMu.Unlock()
	say := func(msg string) {
		if warn != nil {
			warn(msg)
		}
	}
	for _, r := range rs {
		if !r.Pending(path) {
			continue
		}
		dev, err := openLocked(path, false, say)
		if err != nil {
			say(path + ": an interrupted operation could not be finished before opening (" + err.Error() + "): its files may be as before it until it is run again")
			continue
		}
		msg, err := r.Finish(dev, path)
		if cerr := dev.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			say(path + ": finishing an interrupted operation: " + err.Error())
		} else if msg != "" {
			say(msg)
		}
	}
}
