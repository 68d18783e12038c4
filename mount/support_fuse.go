//go:build linux || darwin

package mount

// Supported reports whether this build can mount at all (nil) or why not.
func Supported() error { return nil }
