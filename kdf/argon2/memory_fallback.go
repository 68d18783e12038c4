package argon2

// When the operating system gives no usable figure, Argon2 allows matrices
// up to fallbackAvailable: enough for every VeraCrypt PIM (at most 1 GiB)
// and cryptsetup's default LUKS2 cost (at most 1 GiB), while refusing the
// multi-gigabyte requests that would most likely exhaust a small machine.
const (
	fallbackAvailable = 2<<30 + headroom
	fallbackDesc      = "2 GiB"
)
