// Package crossarch holds only a test: volumes created by cryptvol running
// as a big-endian linux/mips64 binary (under qemu-user) open on the host
// with byte-identical contents, and the reverse. See crossarch_test.go.
package crossarch
