//go:build (!unix && !windows) || aix

package filelock

import "os"

// tryLock: this platform has no advisory locks (AIX has no flock).
func tryLock(*os.File, bool, Byte) (func(), error) { return nil, ErrNoLocks }
