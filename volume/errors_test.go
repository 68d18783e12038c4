package volume

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestOptionErrorKeepsTheMessage: marking a refusal as an option error
// changes no byte of its message, errors.Is reports ErrInvalidOption and
// what the refusal wraps, and an unmarked error is not an option error.
func TestOptionErrorKeepsTheMessage(t *testing.T) {
	err := InvalidOptionf("keyslot %d out of range 0..%d", 40, 31)
	if got := err.Error(); got != "keyslot 40 out of range 0..31" {
		t.Errorf("message %q", got)
	}
	if !errors.Is(err, ErrInvalidOption) {
		t.Error("not ErrInvalidOption")
	}
	wrapped := fmt.Errorf("create: %w", InvalidOption(fmt.Errorf("calibrating: %w", context.Canceled)))
	if !errors.Is(wrapped, ErrInvalidOption) || !errors.Is(wrapped, context.Canceled) {
		t.Errorf("%v: the mark or what it wraps is lost", wrapped)
	}
	if wrapped.Error() != "create: calibrating: context canceled" {
		t.Errorf("message %q", wrapped.Error())
	}
	if InvalidOption(nil) != nil {
		t.Error("InvalidOption(nil) is not nil")
	}
	if errors.Is(errors.New("writing 4096 bytes at 0: input/output error"), ErrInvalidOption) {
		t.Error("an unmarked error is an option error")
	}
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Error("not an *OptionError")
	}
}
