package chacha20

// The 32-bit ARM NEON kernel (neongen), from a file without a build
// constraint so that go generate runs it on any host.
//go:generate go run ./neongen
