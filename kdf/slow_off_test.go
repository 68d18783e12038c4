//go:build !slow

package kdf

// slowTests enables the tests that take tens of seconds (go test -tags slow).
const slowTests = false
