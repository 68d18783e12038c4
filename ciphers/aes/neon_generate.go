package aes

// The bitsliced NEON kernels for 32-bit ARM and arm64 (neongen).
//go:generate go run ./neongen
