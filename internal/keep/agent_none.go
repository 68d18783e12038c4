//go:build !unix && !windows

package keep

import (
	"context"
	"errors"
	"time"
)

func openAgent(o Options) (Store, error) {
	return nil, errors.New("keeping volumes unlocked is not supported on this system")
}

// ServeAgent is not available here.
func ServeAgent(ctx context.Context, idle time.Duration) error {
	return errors.New("the unlock agent is not supported on this system")
}

// StopAgent does nothing: there is no agent here.
func StopAgent(dir string) error { return nil }
