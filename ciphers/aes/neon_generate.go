package aes

// The ARM kernels: bitsliced NEON for 32-bit ARM and arm64 (neongen), the
// opt-in table path for 32-bit ARM (tablegen). Here, in a file without a
// build constraint, so that go generate runs them on any host.
//go:generate go run ./neongen
//go:generate go run ./tablegen
